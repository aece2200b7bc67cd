"""Warps that wait on the clock yield to the warps of their CTA that can still work (issue 30).

A warp that re-reads the clock with nothing observable done since waits on it
(:mod:`.clock`). On the GPU its wait and another warp's work overlap: the time it waits
passes for the other warps too, and is no part of their own. So the clock jumps only where
every other warp of the CTA waits as well (exited, at a barrier, asleep, parked, or
waiting on the clock itself); while one can still work, the waiting warp *yields*
(:meth:`ClockWaits.yielded`, called from :meth:`.clock.Clock.read`): at the scheduler's
next look (:meth:`.parking.Parking.look`) its threads are parked, :data:`PARKED` in
:attr:`.state.Block.sched`, and the others run; the clock moves on by their work.

A warp's first two jumps of a wait (:data:`.clock.CTA_STALL`) stall the whole CTA all the
same; it yields where a longer one would be made (:mod:`.clock` says why).

A parked warp runs again when its CTA's clock reaches its :attr:`.clock.Clock.until` (the
value it read plus the jump it would have made, doubling as a jump does: it re-reads and
yields again, while others still work), when no thread of its CTA can run (in a batch of
blocks, at the scheduler's look), or when no thread of the batch can run and no barrier can
be released (:meth:`.parking.Parking.idle`). Its first re-read then jumps nothing
(:attr:`.clock.Clock.woke`): it reads the time the others' work made, which may end its
wait; the next, finding every warp waiting, jumps. A jump goes no further than the earliest
``until`` of a parked warp of the CTA (:meth:`.clock.Clock._jump`), which then runs next.
A kernel that reads no clock never yields: its steps pay nothing for this.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from .convergence_state import BLOCKED

if TYPE_CHECKING:
    from ..state import Block

#: what a parked thread's :attr:`.state.Block.sched` holds (no ready thread is past BLOCKED)
PARKED = BLOCKED + 1


class ClockWaits:
    """The warps of a block (a batch of blocks) that wait on the clock while others work
    (the clock's :class:`~.clock.Host`); ``pc`` keeps a parked thread's next index."""

    def __init__(self, blk: Block, pc: Any) -> None:
        # the block by a weak reference: it holds this as its clock's host, and a cycle
        # would keep every batch's arrays alive until the garbage collector ran (a grid
        # of 16,384 blocks of 1,024 threads peaked at 1.6 GB, not 0.55)
        self._blk = weakref.ref(blk)
        self.pc = pc
        self.asked: Any = np.zeros(0, dtype=np.int64)  # warps that yielded, not parked yet
        self.parked: dict[int, Any] = {}  # each parked warp's threads
        self.soon = False  # warps yielded, or a jump reached a parked warp's time: look now
        blk.clock.host = self

    @property
    def blk(self) -> Block:
        blk = self._blk()
        assert blk is not None  # the block outlives its scheduler's run
        return blk

    @property
    def count(self) -> int:
        return len(self.asked) + len(self.parked)

    def busy(self) -> Any:
        """Per CTA: whether a thread can run that is not of a warp waiting on the clock."""
        blk = self.blk
        run = (blk.sched < BLOCKED) & ~blk.clock.waiting()[blk.warp]
        return np.bincount(blk.cta[run], minlength=blk.ctas) > 0

    def yielded(self, warps: Any) -> None:
        """Warps ``warps`` wait on the clock while others work: parked at the next look."""
        self.asked = np.union1d(self.asked, warps)
        self.soon = True

    def hurry(self) -> None:
        """A parked warp's time came by a jump: the next look wakes it."""
        self.soon = True

    def park(self) -> bool:
        """Park the threads of each warp that yielded and still waits on the clock (a warp
        whose wait ended meanwhile goes on); whether any."""
        if not len(self.asked):
            return False
        blk, clock = self.blk, self.blk.clock
        warps, self.asked = self.asked, self.asked[:0]
        waiting = clock.waiting()
        ws = blk.warp_size
        parked = False
        for w in warps.tolist():
            ids = np.arange(w * ws, min((w + 1) * ws, blk.threads))
            ids = ids[blk.sched[ids] < BLOCKED]
            if not waiting[w] or not len(ids):
                clock.until[w] = -1
                continue
            self.pc[ids] = blk.sched[ids]
            blk.sched[ids] = PARKED
            self.parked[w] = ids
            parked = True
        return parked

    def wake(self, everyone: bool = False) -> bool:
        """Wake the parked warps whose CTA's clock reached their time, or whose CTA has no
        thread that can run (``everyone``: every parked warp); whether any."""
        if not self.parked:
            return False
        blk, clock = self.blk, self.blk.clock
        warps = np.fromiter(self.parked, dtype=np.int64, count=len(self.parked))
        homes = clock.home[warps]
        due = np.full(len(warps), everyone) | (clock.now(homes) >= clock.until[warps])
        if blk.ctas > 1 and not due.all():
            idle = np.bincount(blk.cta[blk.sched < BLOCKED], minlength=blk.ctas) == 0
            due |= idle[homes]
        if not due.any():
            return False
        for w in warps[due].tolist():
            ids = self.parked.pop(w)
            blk.sched[ids] = self.pc[ids]
            self.pc[ids] = -1
            clock.until[w] = -1
            clock.woke[w] = True
        return True
