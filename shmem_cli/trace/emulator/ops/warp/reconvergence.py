"""Warp reconvergence: ``BSSY``, ``BSYNC``, ``BREAK``, ``BMOV``, ``WARPSYNC``, ``YIELD`` and
``NANOSLEEP``, each a step on the block's convergence state (the rules:
:mod:`...sync.convergence`; the state: :mod:`...sync.convergence_state`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .....cuda.sass import Instruction
from .....cuda.sass_operands import Imm, Reg
from ....distinct_rows import spread
from ...op_table import Context, Step, op, unsupported
from ...operands import read_u32, write_u32
from ...state import BLOCKED, Block, Idx
from ...sync.convergence import block_at, pull
from ...sync.convergence_state import AT_WARPSYNC, BARRIERS, YIELDING


def _barrier(ins: Instruction) -> int:
    """The convergence barrier register an instruction names."""
    regs = [o for o in ins.operands if isinstance(o, Reg) and o.kind == "B"]
    if len(regs) != 1 or not 0 <= regs[0].index < BARRIERS:
        raise unsupported(ins, "no convergence barrier register")
    return regs[0].index


@op("BSSY")
def _bssy(ins: Instruction, ctx: Context) -> Step:
    """``BSSY Bn, label``: the barrier waits for the lanes that execute this with the thread."""
    reg = _barrier(ins)

    def step(b: Block, ix: Idx) -> None:
        c, ids = b.converge, b.ids(ix)
        _, lanes, inv = c.warp_lanes(ids)
        c.start(reg, ids, lanes[inv])
        c.yielded[ids] = False

    return step


@op("BSYNC", moves=True)
def _bsync(ins: Instruction, ctx: Context) -> Step:
    """``BSYNC Bn``: wait for the barrier's lanes (:mod:`.convergence`)."""
    reg, index = _barrier(ins), ctx.position(ins)

    def step(b: Block, ix: Idx) -> None:
        c, ids = b.converge, b.ids(ix)
        _, running, inv = c.warp_lanes(ids)
        if c.waiters == 0 and ((c.masks[reg][ids] & ~running[inv]) == 0).all():
            c.leave(reg, ids)  # every lane it waits for is here: the usual case
            c.yielded[ids] = False
            return
        block_at(b, ids, index, reg)

    return step


@op("BREAK", moves=True)
def _break(ins: Instruction, ctx: Context) -> Step:
    """``BREAK Bn``: the threads leave the barrier (a loop's early exit)."""
    reg = _barrier(ins)

    def step(b: Block, ix: Idx) -> None:
        ids = b.ids(ix)
        b.converge.leave(reg, ids)
        b.converge.masks[reg][ids] = 0

    return step


@op("BMOV")
def _bmov(ins: Instruction, ctx: Context) -> Step:
    """``BMOV.32.CLEAR Rd, Bn`` saves a barrier (and clears it), ``BMOV.32 Bn, Ra`` restores
    it (a ``-G`` build's functions, a recursion): the value is the lanes the thread's barrier
    waits for, a bit each (:meth:`..sync.convergence_state.Convergence.saved`)."""
    ops = ins.operands
    if len(ops) != 2 or not all(isinstance(o, Reg) for o in ops):
        raise unsupported(ins)
    dst, src = ops
    assert isinstance(dst, Reg) and isinstance(src, Reg)
    if dst.kind == "B" and src.kind == "R":
        reg, read = _barrier(ins), read_u32(src, "i", ins)
        return lambda b, ix: b.converge.restore(reg, b.ids(ix), read(b, ix)[0])
    if dst.kind != "R" or src.kind != "B":
        raise unsupported(ins)
    w, reg, clear = write_u32(dst, ins), _barrier(ins), "CLEAR" in ins.mods

    def save(b: Block, ix: Idx) -> None:
        w(b, ix, b.converge.saved(reg, b.ids(ix), clear), 0)  # taint: the decisions' (taint_flow)

    return save


@op("WARPSYNC", moves=True)
def _warpsync(ins: Instruction, ctx: Context) -> Step:
    """``WARPSYNC mask`` (``.ALL``: every lane; ``.COLLECTIVE mask, label``: a collective
    section's start): wait for the mask's live lanes to reach a ``WARPSYNC``."""
    index = ctx.position(ins)
    ops = [o for o in ins.operands if isinstance(o, Reg | Imm)]
    read = None if "ALL" in ins.mods or not ops else read_u32(ops[0], "i", ins)

    def step(b: Block, ix: Idx) -> None:
        c, ids = b.converge, b.ids(ix)
        every = (1 << c.ws) - 1
        want: Any = np.full(len(ids), every, dtype=c.dt)
        if read is not None:
            v, _ = read(b, ix)
            want = spread(v, len(ids)).astype(c.dt) & c.dt(every)
        _, running, inv = c.warp_lanes(ids)
        if c.waiters == 0 and ((want & ~running[inv]) == 0).all():
            c.yielded[ids] = False
            return
        block_at(b, ids, index, AT_WARPSYNC, want)

    return step


@op(*sorted(YIELDING), moves=True)
def _yield(ins: Instruction, ctx: Context) -> Step:
    """``YIELD``, ``NANOSLEEP[.SYNCS]``: the thread is yielded; a ``NANOSLEEP`` without
    ``.SYNCS`` (which wakes on an mbarrier's change) also sleeps until no other thread can
    run."""
    sleeps = ins.opcode == "NANOSLEEP" and "SYNCS" not in ins.mods
    after = ctx.position(ins) + 1
    bsyncs = np.full(len(ctx.function.instructions) + 1, -1, dtype=np.int64)
    for i, x in enumerate(ctx.function.instructions):
        bsyncs[i] = _barrier(x) if x.opcode == "BSYNC" else -1

    def step(b: Block, ix: Idx) -> None:
        ids = b.ids(ix)
        b.converge.yielded[ids] = True
        if sleeps:
            b.converge.sleep[ids] = after
            b.sched[ids] = BLOCKED
        pull(b, ids, bsyncs)

    return step
