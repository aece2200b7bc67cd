"""mbarriers: arrival counts, transaction bytes and phases, so that the warps of a
warp-specialized kernel run in the order its barriers impose.

A barrier lives at a shared-memory offset. ``mbarrier.init`` (``SYNCS.EXCH.64``) sets its
expected arrivals; each arrival (``SYNCS.ARRIVE``) counts down the pending arrivals and may
add transaction bytes that copies (TMA, bulk copies) then complete. A phase completes when
no arrival and no byte is pending: the phase number goes up by one and the count starts
again. A wait (``SYNCS.PHASECHK``) for the phase of parity ``p`` succeeds once the current
phase's parity differs from ``p``; until then the waiting thread is blocked here (it would
spin on the hardware, which changes nothing until another thread acts) and is woken when
the phase completes. A wait that nothing can complete is a located error that names the
barrier, its state and the waiting warps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

    from ....cuda.sass import Instruction


@dataclass
class MBarrier:
    offset: int  # in the batch's shared memory (the CTA's window + its base)
    count: int  # arrivals per phase
    pending: int  # arrivals still missing in this phase
    tx: int = 0  # transaction bytes still missing (may go below 0 until the arrival)
    phase: int = 0
    # threads blocked in a wait: thread id -> (parity waited for, instruction index)
    waiters: dict[int, tuple[int, int]] = field(default_factory=dict)
    wait_ins: Instruction | None = None


class MBarriers:
    """The mbarriers of a block (of every CTA of a batch: keyed by the batch's offset)."""

    def __init__(self) -> None:
        self.table: dict[int, MBarrier] = {}
        # told the threads a phase woke and where they wait (they go on together there)
        self.on_wake: Callable[[Any, Any], None] | None = None

    def init(self, offset: int, count: int) -> None:
        self.table[offset] = MBarrier(offset, count, count)

    def get(self, offset: int) -> MBarrier | None:
        return self.table.get(offset)

    def arrive(self, offset: int, arrivals: int, tx: int, sched: Any, drop: bool = False) -> int:
        """Arrivals and transaction bytes (expected if positive, completed if negative) on a
        barrier; returns the phase they arrived in. ``drop`` (``mbarrier.arrive_drop``): the
        arrivals are no longer expected in later phases either."""
        bar = self.table[offset]
        phase = bar.phase
        bar.tx += tx
        bar.pending -= arrivals
        if drop:
            bar.count -= arrivals
        self._advance(bar, sched)
        return phase

    def complete_tx(self, offset: int, nbytes: int | None, sched: Any) -> None:
        """A copy delivered ``nbytes`` (None: whatever the barrier still expects)."""
        bar = self.table.get(offset)
        if bar is None:
            return
        bar.tx = 0 if nbytes is None else bar.tx - nbytes
        self._advance(bar, sched)

    def done(self, offset: int, parity: int) -> bool:
        """Whether the phase of this parity is complete."""
        return (self.table[offset].phase & 1) != parity

    def block(self, offset: int, tids: Any, parity: int, index: int, ins: Instruction) -> None:
        bar = self.table[offset]
        for t in np.asarray(tids).tolist():
            bar.waiters[t] = (parity, index)
        bar.wait_ins = ins

    def _advance(self, bar: MBarrier, sched: Any) -> None:
        while bar.pending <= 0 and bar.tx == 0:
            bar.phase += 1
            bar.pending += bar.count
            woken = [t for t, (p, _) in bar.waiters.items() if (bar.phase & 1) != p]
            for t in woken:
                sched[t] = bar.waiters.pop(t)[1]
            if woken and self.on_wake is not None:
                ids = np.array(woken, dtype=np.int64)
                self.on_wake(ids, sched[ids])
            if bar.count <= 0:
                break

    def blocked(self) -> list[MBarrier]:
        return [b for b in self.table.values() if b.waiters]

    def describe_deadlock(
        self, warp_of: Callable[[int], int], place: Callable[[int], str]
    ) -> tuple[str, Instruction | None]:
        """Why the waiting threads never go on, and where they wait (``warp_of``: a thread's
        warp in the grid; ``place``: where a barrier is, in words)."""
        parts = []
        where = None
        for bar in self.blocked():
            warps = sorted({warp_of(t) for t in bar.waiters})
            parity = next(iter(bar.waiters.values()))[0]
            parts.append(
                f"warp(s) {_ranges(warps)} wait for phase parity {parity} of the mbarrier at "
                f"{place(bar.offset)}, which is in phase {bar.phase} with "
                f"{max(bar.pending, 0)} of {bar.count} arrival(s) and {max(bar.tx, 0)} "
                "transaction byte(s) still missing, and no other thread can arrive"
            )
            where = where or bar.wait_ins
        hint = (  # the GPU ran this kernel: a launch other than its own is the likely cause
            "\n  is the launch the host program's? --block, --cluster and --params decide which"
            " warps arrive and which TMA bytes come (a warp-specialized kernel's consumers are"
            " warps of its whole block)"
        )
        return "deadlock: " + "; ".join(parts) + hint, where


def _ranges(xs: list[int]) -> str:
    out: list[str] = []
    start = prev = xs[0]
    for x in [*xs[1:], None]:
        if x is not None and x == prev + 1:
            prev = x
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if x is not None:
            start = prev = x
    return ", ".join(out)
