"""Blocks of a grid that wait on one another (issue 29): serial split-K, stream-K, look-back.

shmem does not run a grid's blocks in launch order: a few spread over the grid run first
(to measure it, :func:`..grid.probe`), blocks proven alike are counted without running
(:mod:`..alike`), and a batch runs its blocks side by side. A block that waits on global
memory an earlier block writes (a flag, a semaphore, a partial sum) would wait for ever
where that block has not run. When every thread of a batch that can run is parked on a
spin (:mod:`.parking`) and the spin reads global memory, :class:`GridWaits` sets the batch
aside, its state kept, and runs the grid's other clusters (blocks) in launch order, the
lowest-numbered not yet run first, a batch at a time, each on a thread of its own
(:mod:`.turns`: they take turns, one at a time). Whenever a batch ends or is set aside in
its turn, any batch set aside whose memory changed resumes next, whatever the order they
were set aside in (the first set aside first, where several may); the batch the caller
ran returns to it once its own memory changed, and the caller's batch ends only once
every batch set aside meanwhile ended. A cluster counted by class (alike to one that ran)
runs then only for what it writes: its requests are its class's already, and are not
recorded again. Where no batch set aside can resume and no cluster is left (the one set
aside last then fails), or the batches set aside would hold more than :data:`HELD_BYTES`
of state (or :data:`MOST_HELD` of them), the trace stops with an error
naming the memory and the blocks. The report says that blocks ran out of order, and why
(:func:`wait_note`).

A spin is found only where the batch's state can be kept (budget.REPEAT_BYTES): a batch
past it spins to the time limit, never set aside. So in a grid whose code may wait on
another block (:func:`.spin_loops.may_wait`: a loop left on a value read from global memory
inside it, however the read is marked), every batch holds no more blocks than that bound
allows, not only those run while others wait (a stream-K GEMM's fixup: 104 CTAs of 384
threads and 225 KiB of shared memory, 78 MiB, spun to the 180 s limit; a spin on a weak
``ld.global`` with no fence anywhere; tests/data/trace/bigwait).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..grid import Batch, Plan
from .turns import Turn, Turns

if TYPE_CHECKING:
    from ..budget import Ledger
    from .parking import Wait

#: the state the batches set aside may hold together (registers, shared and local memory,
#: scheduling, what their parked threads keep: :func:`held_bytes`); with the running batch
#: and the records a trace stays under about 1.5 GiB
HELD_BYTES = 512 << 20
#: batches set aside at once at most (each waits on a thread of its own, or the caller's)
MOST_HELD = 64
#: the waits named in the report's note at most
NAMED = 3


@dataclass(eq=False)
class Aside:
    """A batch set aside: what it waits on, the bytes of state it holds, what the running
    batch keeps apart from its Block (``hold``), its lowest cluster, and its thread (None:
    the caller's, whose batch runs on the caller's thread)."""

    wait: Wait
    size: int
    kept: Any
    lowest: int
    turn: Turn | None


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
        ledger: Ledger | None = None,
    ) -> None:
        """``run(batch, silent)`` runs a batch (``silent``: its records dropped, it counts
        nothing); ``hold``/``restore`` keep and give back what the running batch keeps
        apart from its Block (the recorder's per-batch counts); ``most``: clusters a batch
        run while others wait holds at most (its spins must be provable: the repeat
        check's bound on a batch's state, budget.REPEAT_BYTES); ``ledger``: the launch's
        budget count (it stops a batch an interrupt cut short)."""
        self.plan, self.run, self.hold, self.restore = plan, run, hold, restore
        self.most = max(1, min(most, plan.per_batch))
        self.ledger = ledger
        self.done = np.zeros(plan.clusters, dtype=bool)  # clusters run (or for their writes)
        self.flying: set[int] = set()  # clusters whose batch is running or set aside
        self.stood = np.zeros(plan.clusters, dtype=bool)  # clusters counted by class, not run
        self.waiting: list[Aside] = []  # the batches set aside, in the order they were
        self.turns = Turns()  # the threads of the batches run while others wait
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
        """``batch`` ended; where the caller ran it, every batch set aside meanwhile runs to
        its end before the caller goes on."""
        self.flying.difference_update(batch.clusters)
        self.done[list(batch.clusters)] = True
        if self.waiting and self.turns.on_owner():
            try:
                self._hand_on(None)
            except BaseException:
                self.abandon()
                raise

    def classed(self, members: Any, rep: int, left: Any) -> Any:
        """The clusters ``members`` are counted as ``rep`` (they run only where a wait needs
        what they write); ``left`` (a mask) without the clusters run meanwhile."""
        self.stood[members[members != rep]] = True
        return left & ~self.done

    def stuck(self, wait: Wait) -> bool:
        """The batch of ``wait`` waits on global memory: run the next clusters in launch
        order, and resume batches set aside whose memory changed, until that memory changes
        (True), or say in ``wait.why`` why it never will (False)."""
        size = held_bytes(wait)
        if len(self.waiting) >= MOST_HELD or self.held + size > HELD_BYTES:
            wait.why = (
                f", but no more batches are set aside to run them: {len(self.waiting):,} wait "
                f"already, holding {(self.held + size) >> 20:,} MiB of state (at most "
                f"{MOST_HELD} batches, {HELD_BYTES >> 20:,} MiB)"
            )
            wait.advice = "trace fewer blocks (--grid)"
            wait.held_back = True
            return False
        aside = Aside(wait, size, self.hold(), self._clusters(wait), self.turns.current)
        self.held += size
        self.set_aside += 1
        if len(self.waits) < NAMED:  # the note names the first ones only
            self.waits.append(f"{wait.names()} waited on {wait.place()}")
        self.waiting.append(aside)
        if aside.turn is not None:  # a batch's own thread: the caller's decides
            return aside.turn.pause()
        try:
            return self._hand_on(aside)
        except BaseException:
            self.abandon()
            raise

    def abandon(self) -> None:
        """The trace stops (an error, an interrupt; on the caller's thread): every batch's
        thread unwinds and is joined."""
        if not self.turns.on_owner():
            return
        self.turns.stop(self._halt)
        self.waiting.clear()
        self.held = 0

    def _halt(self, stop: bool) -> None:
        if self.ledger is not None:
            self.ledger.stopped = stop

    def _hand_on(self, mine: Aside | None) -> bool:
        """On the caller's thread: hand the turn on, to a batch set aside whose memory
        changed or else to the next clusters, until ``mine`` resumes (whether it may) or
        (None) until no batch is set aside. Where none can resume and no cluster is left,
        the batch set aside last is told its wait never ends."""
        while self.waiting:
            aside = next((a for a in self.waiting if a.wait.changed()), None)
            verdict = True
            if aside is None:
                batch, silent = self._next()
                if batch is not None:
                    self.helpers += len(batch.clusters)
                    self.turns.start(partial(self.run, batch, silent))
                    continue
                aside, verdict = self.waiting[-1], False
                aside.wait.why = f"; no other block of the {self.plan.blocks:,} wrote it"
            self.waiting.remove(aside)
            self.held -= aside.size
            self.restore(aside.kept)
            if aside is mine:
                return verdict
            if aside.turn is not None:  # (the caller's thread holds one batch at most)
                self.turns.resume(aside.turn, verdict)
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
        ones they may wait on)."""
        n = self.plan.clusters
        while self.cursor < n and self.done[self.cursor]:
            self.cursor += 1
        below = min((a.lowest for a in self.waiting), default=n)
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


def held_bytes(wait: Wait) -> int:
    """The memory a batch set aside on ``wait`` keeps: every array of its block (registers
    and their taint, shared and local memory, scheduling, convergence), and what its parked
    groups keep to see a change (their CTAs' shared memory, the global bytes they read).
    Counting only the register files and shared memory saw a third of it (43 of 148 MB a
    batch of 227 KiB CTAs: 3.7 GB for 25 batches where 1 GiB was meant)."""
    blk = wait.blk
    seen: dict[int, int] = {}

    def add(value: Any) -> None:
        if isinstance(value, np.ndarray):
            base = value if value.base is None else value.base
            if isinstance(base, np.ndarray):
                seen[id(base)] = base.nbytes
        elif isinstance(value, tuple | list):
            for v in value:
                add(v)

    for owner in (blk, blk.converge):
        for value in vars(owner).values():
            add(value)
    for g in wait.groups:
        add((g.ids, g.shared, g.addresses, g.values))
    return sum(seen.values())
