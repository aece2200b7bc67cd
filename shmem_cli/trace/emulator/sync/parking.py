"""Threads proven to spin yield to the others (issue 29).

The scheduler runs the threads at the smallest instruction index first (:mod:`..scheduler`).
A warp that spins on a flag another warp sets after its work (a producer/consumer handshake,
stream-K's peers, serial split-K's turn) keeps the smallest index for ever, and the warp
that would set the flag never runs. :class:`~..budget.Repeats` proves such a spin: the
block came back to a state it was in, with nothing written since, and only the spinning
threads ran in between (:meth:`~..budget.Repeats.spinners`). Those threads are *parked*
here (:class:`Parking`): their next instruction is kept aside and :data:`PARKED` (past
every ready index) stands in :attr:`.state.Block.sched`, so that the other threads run.

A group of threads parked together wakes when memory it may read changed: the bytes of
global memory its proven turn read (``GlobalMemory.spin_reads``: their values now against
those at parking; every global write, where the turn made more accesses than were logged),
the shared memory of its CTAs, or an atomic that changed a word. The scheduler looks every
:data:`LOOK_EVERY` steps, and whenever no other thread can run. A parked thread that wakes
spins again and is proven again within a turn of its loop (:meth:`~..budget.Repeats.rearm`)
if nothing it reads changed after all. When no thread can run, no barrier can be released
and no group's memory changed, the block waits on memory only another block can write
(:class:`Wait`, handed to the grid's scheduler: :mod:`.waiting_blocks`), or on nothing that
can change: the spin never ends, and the trace stops with the located error it always gave.

Nothing but :meth:`Parking.wake` (and :meth:`Parking.idle`, for warps parked while they
wait on the clock: :mod:`.clock_wait`) moves a parked thread, so restoring its kept index
neither skips nor repeats work. Besides a thread's own step, :attr:`.state.Block.sched` is written
only for threads registered as waiting: at a CTA or cluster barrier (``Block.waiting``), a
``BSYNC`` or ``WARPSYNC`` (``converge.at``), in a sleep (``converge.sleep``) or on an
mbarrier (its waiters). A thread registers by executing the instruction, which also makes it
:data:`BLOCKED`; only ready threads are parked (:meth:`~..budget.Repeats.spinners`), and a
parked one executes nothing, so it is in none of those sets. A yield's pull
(:func:`.convergence.pull`) takes only ready lanes, and a thread exits only by its own
``EXIT``. Meanwhile a parked thread counts as live and not arrived: a CTA barrier and its
warp's ``BSYNC``/``WARPSYNC`` wait for it (as on the GPU), unless nothing else can run and
:func:`.convergence.force` lets the convergence waits go (tests/test_trace_spinwait.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..budget import SpinError
from ..global_memory import READ_LOG
from ..trace_error import TraceError
from .barriers import release
from .clock_wait import PARKED, ClockWaits

if TYPE_CHECKING:
    from ....cuda.sass import Function, Instruction
    from ..global_memory import GlobalMemory
    from ..state import Block

#: steps between looks at what the parked threads read
LOOK_EVERY = 64
#: the places of waited-on memory named in a message at most
PLACES = 3


@dataclass(eq=False)
class Group:
    """Threads parked together, and what they read when they were proven to spin."""

    ids: Any
    epoch: int  # global writes then (GlobalMemory.epoch)
    atomics: int  # atomics of the block that changed a word then
    # the global bytes the proven turn read: device addresses (one per byte) and their values
    # (None: more accesses than were logged; then any global write wakes the group), and an
    # instruction that read them (to look them up)
    addresses: Any
    values: Any
    reader: Instruction | None
    shared: Any  # the shared memory of their CTAs then, a row per CTA
    ctas: Any  # those CTAs (their windows in Block.smem: _windows)


class Parking:
    """The parked threads of one block (a batch of blocks) and when they wake."""

    def __init__(self, blk: Block) -> None:
        self.pc = np.full(blk.threads, -1, dtype=np.int64)  # a parked thread's next index
        self.groups: list[Group] = []
        self.next_look = 0
        # warps waiting on the clock while others work (.clock_wait)
        self.clock = ClockWaits(blk, self.pc)

    @property
    def count(self) -> int:
        """Groups parked, and warps waiting on the clock."""
        return len(self.groups) + self.clock.count

    def park(self, blk: Block, ids: Any, steps: int) -> None:
        """Threads ``ids`` spin: they yield to the others until memory they read changes."""
        memory = blk.launch.memory
        log, memory.spin_reads = memory.spin_reads, None
        addresses = values = reader = None
        if log is not None and len(log) < READ_LOG:
            spans = [(np.unique(a)[:, None] + np.arange(w)).ravel() for a, w, _ in log]
            addresses = np.unique(np.concatenate(spans)) if spans else np.zeros(0, np.int64)
            reader = log[0][2] if log else None
            values = _bytes_at(blk, addresses, reader)
        ctas = np.unique(blk.cta[ids])
        shared = _windows(blk, ctas)  # a copy (fancy indexing)
        epoch, atomics = memory.epoch, blk.atomic_changes
        self.groups.append(Group(ids, epoch, atomics, addresses, values, reader, shared, ctas))
        self.pc[ids] = blk.sched[ids]
        blk.sched[ids] = PARKED
        blk.parks += 1
        self.next_look = steps + LOOK_EVERY

    def look(self, blk: Block, steps: int) -> bool:
        """Every :data:`LOOK_EVERY` steps, and at once where a warp yielded to wait on the
        clock: park the warps that did, and wake the groups whose memory changed and the
        warps whose time came (:mod:`.clock_wait`); whether any thread was parked or woke."""
        if steps < self.next_look and not self.clock.soon:
            return False
        self.next_look = steps + LOOK_EVERY
        self.clock.soon = False
        parked = self.clock.park()
        return self.wake(blk) or parked

    def wake(self, blk: Block) -> bool:
        """Wake every group whose memory changed, and every warp waiting on the clock whose
        time came; whether any."""
        woke = [g for g in self.groups if _changed(blk, g)]
        for g in woke:
            blk.sched[g.ids] = self.pc[g.ids]
            self.pc[g.ids] = -1
        if woke:
            self.groups = [g for g in self.groups if g not in woke]
        return self.clock.wake() or bool(woke)

    def idle(
        self,
        blk: Block,
        function: Function,
        stuck: Callable[[Wait], bool] | None,
        fail: Callable[[str, str, str, bool], SpinError],
    ) -> None:
        """No thread can run but parked ones: wake those whose memory changed, else release
        a barrier, else wake the warps waiting on the clock (their reads jump), else hand
        the wait to ``stuck`` (another block may write the memory; it returns once that
        memory changed) or fail with ``fail(reads, why, advice, held_back)`` (the spin's
        error: what the threads re-read, why no block writes it, what to do, and whether
        other blocks might but no more batches may be set aside to run them)."""
        self.clock.park()  # (a warp that yielded and then exited: dropped)
        if self.wake(blk):
            return
        try:
            release(blk, function)
            return
        except TraceError as exc:
            error = exc  # no barrier can go: the parked threads wait on memory or the clock
            # (without its traceback: kept in a local of this frame, which the traceback
            # holds, it made a cycle that kept the batch's arrays till the collector ran)
            error.__traceback__ = None
        if self.clock.wake(everyone=True):
            return
        if not self.groups:
            try:
                raise error
            finally:
                del error  # raised from here, the traceback holds this frame: no cycle
        wait = Wait(blk, self.groups)
        if stuck is None or not wait.global_reads or not stuck(wait):
            raise fail(wait.reads(), wait.why, wait.advice, wait.held_back)
        self.wake(blk)  # another block wrote what a group reads


def _windows(blk: Block, ctas: Any) -> Any:
    """The shared memory of the CTAs ``ctas`` now, a row per CTA (a copy). An index array of
    their bytes would take 8 bytes per byte of shared memory, for every group parked in every
    batch set aside (3.7 GB for 25 batches of 227 KiB CTAs)."""
    return blk.smem[: blk.ctas * blk.smem_stride].reshape(blk.ctas, blk.smem_stride)[
        ctas, : blk.smem_size
    ]


def _bytes_at(blk: Block, addresses: Any, reader: Instruction | None) -> Any:
    """The bytes of global memory at ``addresses`` now (``reader`` read them before)."""
    if reader is None or not len(addresses):
        return np.zeros(0, dtype=np.uint8)
    memory = blk.launch.memory
    log, memory.spin_reads = memory.spin_reads, None  # a look is no access of the kernel's
    try:
        return memory.data[memory.offsets(addresses, 1, reader)].copy()
    finally:
        memory.spin_reads = log


def _changed(blk: Block, g: Group) -> bool:
    """Whether memory the group may read changed since it was parked."""
    memory = blk.launch.memory
    if g.atomics != blk.atomic_changes:
        return True
    if not np.array_equal(_windows(blk, g.ctas), g.shared):
        return True
    if g.epoch == memory.epoch:
        return False
    if g.addresses is None:
        return True
    if not np.array_equal(_bytes_at(blk, g.addresses, g.reader), g.values):
        return True
    g.epoch = memory.epoch  # written elsewhere: no need to compare again till the next write
    return False


class Wait:
    """What a block whose every runnable thread is parked waits on: the global bytes its
    spinning threads read (for the grid's scheduler, :mod:`.waiting_blocks`)."""

    def __init__(self, blk: Block, groups: list[Group]) -> None:
        self.blk = blk
        self.groups = list(groups)
        logs = [g for g in groups if g.addresses is not None]
        self.global_reads = any(g.addresses is None or len(g.addresses) for g in groups)
        self.addresses = (
            np.unique(np.concatenate([g.addresses for g in logs])) if logs else np.zeros(0)
        )
        ids = np.concatenate([g.ids for g in groups])
        self.ctas = sorted({int(c) for c in np.unique(blk.cta[ids])})
        self.why = ""  # why no other block can end the wait (the grid's scheduler says)
        self.advice = SpinError.GIVE
        self.held_back = False  # other blocks might write it, but none may run (the bound)

    def changed(self) -> bool:
        """Whether memory some parked group reads changed."""
        return any(_changed(self.blk, g) for g in self.groups)

    def names(self) -> str:
        """The blocks that wait: ``block (1,0,0)`` (a batch: each)."""
        return ", ".join(self.blk.cta_name(c) for c in self.ctas[:4]) + (
            f" and {len(self.ctas) - 4:,} more" if len(self.ctas) > 4 else ""
        )

    def place(self) -> str:
        """The global memory waited on, by buffer: ``'flags'+0x4 (4 bytes, holding 0x0)``."""
        return describe_bytes(self.blk.launch.memory, self.addresses)

    def reads(self) -> str:
        """``re-reading 'flag'+0x0 (4 bytes, holding 0x0)``, or "" where not known."""
        return f"re-reading {self.place()}" if len(self.addresses) else ""


def describe_bytes(memory: GlobalMemory, addresses: Any) -> str:
    """``flags+0x4 (4 bytes)``: global bytes by buffer and offset (runs of adjacent bytes),
    a few named and the rest counted."""
    addresses = np.asarray(addresses, dtype=np.int64)
    if not len(addresses):
        return "no global memory"
    breaks = np.flatnonzero(np.diff(addresses) != 1) + 1
    runs = [(int(r[0]), len(r)) for r in np.split(addresses, breaks)]
    named = [_named(memory, at, n) for at, n in runs[:PLACES]]
    more = f" and {len(runs) - PLACES:,} more place(s)" if len(runs) > PLACES else ""
    return ", ".join(named) + more


def _named(memory: GlobalMemory, at: int, n: int) -> str:
    size = f"{n} byte{'s' if n > 1 else ''}"
    b = memory.holder(at)
    if b is None:
        return f"0x{at:x} ({size})"
    where = f"0x{at:x}" if b.shadow else f"'{b.name}'+0x{at - b.address:x}"
    return f"{where} ({size}, holding {_value(memory, b, at, n)})"


def _value(memory: GlobalMemory, b: Any, at: int, n: int) -> str:
    off = b.offset + at - b.address
    raw = bytes(memory.data[off : off + min(n, 8)])
    return f"{int.from_bytes(raw, 'little'):#x}"
