"""Warp reconvergence: the convergence barriers (``BSSY``/``BSYNC``), ``WARPSYNC``, the
yielded state and sleeping threads (issue 29; docs/hardware-model.md, Warp reconvergence).

``BSSY Bn`` records, for each thread that executes it, the lanes of its warp that execute it
with it: the threads barrier ``Bn`` waits for. A thread at ``BSYNC Bn`` waits until each of
those lanes has exited, waits at this ``BSYNC``, has passed a ``BSYNC Bn`` already (it then
leaves the others' barrier) or is *yielded*: it executed one of the architecture profile's
``yield_opcodes`` (``YIELD``, ``NANOSLEEP`` with or without ``.SYNCS``) since its last
``BSSY``, ``BSYNC`` or ``WARPSYNC``. The H200 does this (tests/data/trace/converge): the
lanes waiting at the ``BSYNC`` go on while the yielded lane spins, and the warp runs on in
two parts. ``BREAK Bn`` takes a thread out of the barrier. A ``WARPSYNC`` waits for every
live lane of its mask to reach a ``WARPSYNC``, yielded or not, and makes the warp whole.
The parts of a warp meet again where they run at one instruction together (the scheduler's
rule, :mod:`..scheduler`): woken together from one mbarrier wait, or released together.

A thread at ``NANOSLEEP`` (without ``.SYNCS``) sleeps: it runs again only when no other
thread can (:func:`wake`), as a sleep of microseconds outlasts what the other warps do.
An mbarrier wait that fails reports the failure once (the code's retry path runs: its
``YIELD`` or ``NANOSLEEP.SYNCS``); a thread that fails again waits in it (:attr:`failed`).
When nothing else can run, waits the rules cannot clear (a lane that left the region
another way) are let go (:func:`force`), the rule of scheduling by instruction index
alone. ``BMOV`` saves a barrier into a register and restores it
(:meth:`.convergence_state.Convergence.saved`, :meth:`~.convergence_state.Convergence.restore`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .convergence_state import AT_WARPSYNC, BLOCKED

if TYPE_CHECKING:
    from ..state import Block


def block_at(blk: Block, ids: Any, index: int, reg: int, want: Any = None) -> None:
    """Threads ``ids`` wait at the convergence point ``index`` (``BSYNC B<reg>``, or with
    ``reg`` :data:`AT_WARPSYNC` a ``WARPSYNC`` for the lanes ``want``), released at once
    where the rule allows."""
    c = blk.converge
    c.at[ids] = index
    c.waiters += len(ids)
    c.reg[ids] = reg
    if want is not None:
        c.want[ids] = want
    blk.sched[ids] = BLOCKED
    settle(blk, ids)


def pull(blk: Block, ids: Any, bsyncs: Any) -> None:
    """Threads ``ids`` yielded: the lanes of their warps whose next instruction is a
    ``BSYNC`` of a barrier that waits for one of them have reached it (they jumped there;
    scheduling by index runs them after the lower code of the yielding lanes) and wait
    there now (``bsyncs``: each instruction's barrier register if a ``BSYNC``, else -1,
    and -1 past the end)."""
    c = blk.converge
    warps, yielders, _ = c.warp_lanes(ids)
    rows = c.lanes(warps)
    nxt = blk.sched[rows]
    ready = nxt < BLOCKED
    reg = bsyncs[np.where(ready, np.minimum(nxt, len(bsyncs) - 1), len(bsyncs) - 1)]
    mine = (yielders[:, None] >> (rows % c.ws).astype(c.dt)) & c.dt(1)
    lanes = ready & (reg >= 0) & (mine == 0) & c.real(warps)
    if not lanes.any():
        return
    wanted = (
        c.masks[reg[lanes], rows[lanes]] & np.broadcast_to(yielders[:, None], rows.shape)[lanes]
    ) != 0
    at, regs, tids = nxt[lanes][wanted], reg[lanes][wanted], rows[lanes][wanted]
    c.pulled.append(tids)  # they executed the BSYNC: counted (:func:`arrived`)
    for index in np.unique(at).tolist():
        here = at == index
        block_at(blk, tids[here], int(index), int(regs[here][0]))


def arrived(blk: Block, per_cta: Any) -> int:
    """The thread-instructions of the ``BSYNC`` s the threads :func:`pull` took there
    executed (each once, as the threads that reach one themselves), added to ``per_cta``
    (each CTA's): how many."""
    ids = np.concatenate(blk.converge.pulled)
    blk.converge.pulled.clear()
    per_cta += np.bincount(blk.cta[ids], minlength=blk.ctas)
    return len(ids)


def settle(blk: Block, near: Any = None) -> bool:
    """Release every waiting thread whose lanes the rule no longer waits for (of the warps
    of the threads ``near`` where given: those a step changed); whether any."""
    c = blk.converge
    if c.waiters == 0:
        return False
    if near is None or isinstance(near, slice):
        waiting = np.flatnonzero(c.at >= 0)
    else:
        rows = np.unique(c.lanes(np.unique(near // c.ws)))
        waiting = rows[c.at[rows] >= 0]
        if len(waiting) == 0:
            return False
    warps, inv = np.unique(waiting // c.ws, return_inverse=True)
    rows = c.lanes(warps)
    gone = c.packed(blk.exited[rows] | ~c.real(warps))
    soft = c.packed(c.yielded[rows])  # a BSYNC does not wait for a yielded lane
    # per waiter: the lanes of its warp waiting where it waits (a BSYNC: the same one; a
    # WARPSYNC: any WARPSYNC)
    at_row = c.at[rows]
    mine = c.at[waiting]
    warpsync = c.reg[waiting] == AT_WARPSYNC
    row_ws = (at_row >= 0) & (c.reg[rows] == AT_WARPSYNC)
    same = np.where(warpsync[:, None], row_ws[inv], (at_row[inv] == mine[:, None]) & ~row_ws[inv])
    here = c.packed(same)
    regs = np.where(warpsync, 0, c.reg[waiting])
    need = np.where(warpsync, c.want[waiting], c.masks[regs, waiting])
    met = gone[inv] | here
    done = met | np.where(warpsync, c.dt(0), soft[inv])
    free = (need & ~done) == 0
    if not free.any():
        return False
    apart = free & ((need & ~met) != 0)  # let go because a lane yielded: a part of its own
    release(blk, waiting[free & ~apart])
    if apart.any():
        ids = waiting[apart]
        release(blk, ids)
        c.part[ids] = c.parts
        c.parts += 1
    return True


def release(blk: Block, ids: Any) -> None:
    """Let the waiting threads ``ids`` go on after their convergence point."""
    c = blk.converge
    blk.sched[ids] = c.at[ids] + 1
    c.join(ids, c.at[ids])
    regs = c.reg[ids]
    for reg in np.unique(regs[regs != AT_WARPSYNC]).tolist():
        c.leave(int(reg), ids[regs == reg])
    c.at[ids] = -1
    c.waiters -= len(ids)
    c.yielded[ids] = False


def wake(blk: Block) -> bool:
    """Wake every sleeping thread (no other can run); whether any slept."""
    c = blk.converge
    asleep = np.flatnonzero(c.sleep >= 0)
    if len(asleep) == 0:
        return False
    blk.sched[asleep] = c.sleep[asleep]
    c.sleep[asleep] = -1
    return True


def force(blk: Block) -> bool:
    """Nothing else can run: let every convergence wait go; whether any waited."""
    if blk.converge.waiters == 0:
        return False
    release(blk, np.flatnonzero(blk.converge.at >= 0))
    return True


def diverged(blk: Block, ids: Any) -> Any:
    """Per thread of ``ids``: whether its warp runs here without some live lane (what
    ``BRA.DIV`` tests)."""
    c = blk.converge
    warps, running, inv = c.warp_lanes(ids)
    live = c.packed(~blk.exited[c.lanes(warps)] & c.real(warps))
    return (live & ~running)[inv] != 0
