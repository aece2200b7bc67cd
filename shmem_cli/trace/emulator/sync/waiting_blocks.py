"""Blocks of a grid that wait on one another (issue 29): serial split-K, stream-K, look-back.

shmem does not run a grid's blocks in launch order: a few spread over the grid run first
(to measure it, :func:`..grid.probe`), blocks proven alike are counted without running
(:mod:`..alike`), and a batch runs its blocks side by side. A block that waits on global
memory an earlier block writes (a flag, a semaphore, a partial sum) would wait for ever
where that block has not run. When every thread of a batch that can run is parked on a
spin (:mod:`.parking`) and the spin reads global memory, :class:`GridWaits` sets the batch
aside, its state kept (its frame stays on the stack: a batch set aside is resumed before
any batch set aside earlier), and runs the grid's other clusters (blocks) in launch order,
the lowest-numbered not yet run first, a batch at a time, until the memory the batch
waits on changes; then it resumes. A cluster counted by class (alike to one that ran) runs
then only for what it writes: its requests are its class's already, and are not recorded
again. Where no cluster is left, or the batches set aside would hold more than
:data:`HELD_BYTES` of state (or :data:`MOST_HELD` of them), the trace stops with an error
naming the memory and the blocks. The report says that blocks ran out of order, and why
(:meth:`GridWaits.note`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..grid import Batch, Plan
from .calls import LOCAL_BYTES

if TYPE_CHECKING:
    from .parking import Wait

#: the state the batches set aside may hold together (registers, shared memory, scheduling)
HELD_BYTES = 1 << 30
#: batches set aside at once at most (each is a few frames of the Python stack)
MOST_HELD = 64
#: the waits named in the report's note at most
NAMED = 3


class GridWaits:
    """The clusters of a grid run so far, running, or counted by class, and the batches set
    aside on a wait (see the module's text)."""

    def __init__(
        self,
        plan: Plan,
        run: Callable[[Batch, bool], None],
        hold: Callable[[], Any],
        restore: Callable[[Any], None],
        most: int,
    ) -> None:
        """``run(batch, silent)`` runs a batch (``silent``: its records dropped, it counts
        nothing); ``hold``/``restore`` keep and give back what the running batch keeps
        apart from its Block (the recorder's per-batch counts); ``most``: clusters a batch
        run while others wait holds at most (its spins must be provable: the repeat
        check's bound on a batch's state, budget.REPEAT_BYTES)."""
        self.plan, self.run, self.hold, self.restore = plan, run, hold, restore
        self.most = max(1, min(most, plan.per_batch))
        self.done = np.zeros(plan.clusters, dtype=bool)  # clusters run (or for their writes)
        self.flying: set[int] = set()  # clusters whose batch is running or set aside
        self.stood = np.zeros(plan.clusters, dtype=bool)  # clusters counted by class, not run
        self.waiting: list[int] = []  # the lowest cluster of each batch set aside, in order
        self.cursor = 0  # clusters below it are done
        self.held = 0  # the bytes of the batches set aside
        self.waits: list[str] = []  # what the first batches set aside waited on, in words
        self.set_aside = 0  # how many times a batch was set aside
        self.helpers = 0  # clusters run while others waited
        self.parks = 0  # groups of threads parked (blocks' warps yielding to others)

    def fresh(self, batch: Batch) -> Batch | None:
        """``batch`` without the clusters already run or running (None: nothing left)."""
        if not batch.clusters:
            return batch
        left = [k for k in batch.clusters if not self.done[k] and k not in self.flying]
        if len(left) == len(batch.clusters):
            return batch
        return self.plan.only(left) if left else None

    def start(self, batch: Batch) -> None:
        self.flying.update(batch.clusters)

    def end(self, batch: Batch) -> None:
        self.flying.difference_update(batch.clusters)
        self.done[list(batch.clusters)] = True

    def classed(self, members: Any, rep: int, left: Any) -> Any:
        """The clusters ``members`` are counted as ``rep`` (they run only where a wait needs
        what they write); ``left`` (a mask) without the clusters run meanwhile."""
        self.stood[members[members != rep]] = True
        return left & ~self.done

    def stuck(self, wait: Wait) -> bool:
        """The batch of ``wait`` waits on global memory: run the next clusters in launch
        order until that memory changes (True), or say in ``wait.why`` why it never will
        (False)."""
        blk = wait.blk
        size = sum(a.nbytes for a in (blk.r, blk.tr, blk.ur, blk.tur, blk.smem, blk.tsmem))
        if blk.local_low < LOCAL_BYTES:  # local memory and its taint, made on first use
            size += 2 * blk.threads * LOCAL_BYTES
        if len(self.waiting) >= MOST_HELD or self.held + size > HELD_BYTES:
            wait.why = (
                f"; {len(self.waiting):,} batch(es) of blocks wait already, holding "
                f"{(self.held + size) >> 20:,} MiB of state, and no more are set aside (at "
                f"most {MOST_HELD} batches, {HELD_BYTES >> 20:,} MiB)"
            )
            wait.advice = "trace fewer blocks (--grid): those that wait on each other"
            return False
        kept = self.hold()
        self.held += size
        self.set_aside += 1
        if len(self.waits) < NAMED:  # the note names the first ones only
            self.waits.append(f"{wait.names()} waited on {wait.place()}")
        self.waiting.append(self._clusters(wait))
        try:
            while not wait.changed():
                batch, silent = self._next()
                if batch is None:
                    wait.why = f"; no other block of the {self.plan.blocks:,} wrote it"
                    return False
                self.helpers += len(batch.clusters)
                self.run(batch, silent)
        finally:
            self.held -= size
            self.waiting.pop()
            self.restore(kept)
        return True

    def _clusters(self, wait: Wait) -> int:
        """The lowest cluster of the blocks that wait."""
        cx, cy, cz = self.plan.launch.cluster
        gx, gy, _ = self.plan.launch.grid
        nx, ny = gx // cx, gy // cy
        x, y, z = wait.blk.cta_idx[:, wait.ctas]
        return int(np.min(x // cx + nx * (y // cy + ny * (z // cz))))

    def _next(self) -> tuple[Batch | None, bool]:
        """The lowest-numbered clusters not run, up to a batch of them, all counted by class
        or none (whether they run silent): those below every cluster that waits first (the
        ones they may wait on; a batch set aside resumes only after those run after it)."""
        n = self.plan.clusters
        while self.cursor < n and self.done[self.cursor]:
            self.cursor += 1
        below = min(self.waiting, default=n)
        picked = self._pick(self.cursor, below) or self._pick(below, n)
        silent = bool(picked) and bool(self.stood[picked[0]])
        return (self.plan.only(picked) if picked else None), silent

    def _pick(self, start: int, stop: int) -> list[int]:
        """Up to a batch of clusters not run from ``start`` (below ``stop``), all counted by
        class or none."""
        picked: list[int] = []
        k = start
        while k < stop and len(picked) < self.most:
            if not self.done[k] and k not in self.flying:
                if picked and self.stood[k] != self.stood[picked[0]]:
                    break
                picked.append(k)
            k += 1
        return picked


def wait_note(parks: int, waits: GridWaits | None) -> str | None:
    """The report's note: threads that spun and yielded to others (``parks`` times), batches
    of blocks set aside on a wait and the blocks run out of order meanwhile; else None."""
    said = []
    if parks:
        said.append(
            f"{parks:,} time(s) threads proven to spin (re-reading memory with nothing written "
            "since) yielded to the threads running with them until memory they read changed "
            "(shmem's scheduler, lowest instruction first, would have run them for ever); the "
            "spins' iterations are counted as they ran here, until each was proven (on the GPU "
            "their count depends on timing)"
        )
    if waits is not None and waits.set_aside:
        shown = "; ".join(waits.waits)
        more = f"; and {waits.set_aside - NAMED:,} more" if waits.set_aside > NAMED else ""
        unit = "clusters" if waits.plan.launch.cluster_ctas > 1 else "blocks"
        said.append(
            f"blocks ran out of launch order: {waits.set_aside:,} time(s) a batch of blocks "
            f"waited on global memory that another block writes ({shown}{more}); each was "
            f"set aside, its state kept, while {waits.helpers:,} {unit} not yet run ran in "
            "launch order, and resumed once that memory changed (on the GPU the blocks waited "
            "on run meanwhile: blocks start in launch order and run side by side)"
        )
    return "; ".join(said) if said else None
