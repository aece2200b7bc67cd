"""Warp-level collectives: SHFL, VOTE/VOTEU, MATCH, REDUX and R2UR (a register into a
uniform one; with a predicate, a waterfall loop's step).

They act on the lanes of each warp that execute the instruction in the same step;
min-pc scheduling brings every converged lane of a warp to the instruction together.
A shuffle that reads a lane which did not execute it (outside the warp's lanes that
reached it together, or past the block's last thread) gets 0 and its predicate says only
whether the source lane is in range, as the H200 does (tests/data/trace/opcodes_cuda's
``collective``: a divergent warp's collective sections; tests/data/trace/probes'
``shfl_pred``: both sides of a branch), marked not modelled (CUDA leaves the value
undefined). A vote, a match or a reduction gives every lane a result of the whole warp's
operands: it carries the taint of all of them (global data in one lane's predicate decides
every lane's ballot).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .....cuda.sass import Instruction
from .....cuda.sass_operands import Reg
from ....distinct_rows import spread
from ...op_table import Context, Step, op, unsupported
from ...operands import is_pred, read_pred, read_u32, read_u64, write_pred, write_u32
from ...state import TAINT_UNKNOWN, Block, Idx

_U = np.uint32


def warp_table(b: Block, ix: Idx) -> tuple[Any, Any, Any]:
    """(ids, row of each id, (warps, lanes) position of each lane in ids or -1)."""
    ids = b.ids(ix)
    warps, lanes = np.divmod(ids, b.warp_size)
    uw, row = np.unique(warps, return_inverse=True)
    table = np.full((len(uw), b.warp_size), -1, dtype=np.int64)
    table[row, lanes] = np.arange(len(ids))
    return ids, row, table


def warp_taint(b: Block, ix: Idx, t: Any) -> Any:
    """Each lane's taint ORed over its warp's lanes in ``ix``: what a warp-wide result
    (a ballot, a vote, a match, a reduction) takes from every lane's operand."""
    if not np.any(t):
        return t
    ids, row, table = warp_table(b, ix)
    tt = np.zeros(table.shape[0], dtype=np.uint8)
    np.bitwise_or.at(tt, row, np.broadcast_to(np.asarray(t, dtype=np.uint8), ids.shape))
    return tt[row]


@op("SHFL")
def _shfl(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) != 5:
        raise unsupported(ins)
    mode = next((m for m in ins.mods if m in ("IDX", "UP", "DOWN", "BFLY")), None)
    if mode is None:
        raise unsupported(ins)
    wp = write_pred(ops[0], ins)
    w = write_u32(ops[1], ins)
    ra = read_u32(ops[2], "i", ins)
    rb, rc = read_u32(ops[3], "i", ins), read_u32(ops[4], "i", ins)
    src_reg = ops[2] if isinstance(ops[2], Reg) else None

    def step(b: Block, ix: Idx) -> None:
        ids = b.ids(ix)
        n = len(ids)
        last = b.warp_size - 1  # the lane fields of b and c: 5 bits for 32 lanes
        lane = (ids % b.warp_size).astype(np.int64)
        bv = spread(rb(b, ix)[0], n).astype(np.int64) & last
        cv = spread(rc(b, ix)[0], n).astype(np.int64)
        clamp, seg = cv & last, (cv >> 8) & last
        max_lane = (lane & seg) | (clamp & ~seg)
        min_lane = lane & seg
        if mode == "UP":
            j = lane - bv
            ok = j >= max_lane
        elif mode == "DOWN":
            j = lane + bv
            ok = j <= max_lane
        elif mode == "BFLY":
            j = lane ^ bv
            ok = j <= max_lane
        else:
            j = min_lane | (bv & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        src_tid = ids - lane + j
        t_extra: Any = 0
        if src_reg is not None and not src_reg.is_zero:
            regs, taint = (b.r, b.tr) if src_reg.kind == "R" else (b.ur, b.tur)
            inside = np.minimum(src_tid, b.threads - 1)
            v, t = regs[src_reg.index][inside], taint[src_reg.index][inside]
            missing = src_tid >= b.threads
            if not isinstance(ix, slice):
                executing = np.zeros(b.threads, dtype=bool)
                executing[ids] = True
                missing = missing | ~executing[inside]
            v = np.where(missing, _U(0), v)  # the H200 reads 0 from a lane not executing it
            t_extra = np.where(missing, TAINT_UNKNOWN, 0).astype(np.uint8)
        else:
            v, t = spread(ra(b, ix)[0], n), 0
        w(b, ix, v, t | t_extra)
        wp(b, ix, ok, 0)

    return step


def _ballot(b: Block, ix: Idx, p: Any) -> tuple[Any, Any]:
    """Per executing thread: the warp's ballot of ``p`` and the warp's executing mask."""
    ids, row, table = warp_table(b, ix)
    bits = np.zeros(len(ids), dtype=np.uint64)
    pb = np.broadcast_to(p, ids.shape)
    lane_bit = np.uint64(1) << (ids % b.warp_size).astype(np.uint64)
    ballot = np.zeros(table.shape[0], dtype=np.uint64)
    active = np.zeros(table.shape[0], dtype=np.uint64)
    np.bitwise_or.at(ballot, row, np.where(pb, lane_bit, bits))
    np.bitwise_or.at(active, row, lane_bit)
    return ballot[row].astype(_U), active[row].astype(_U)


@op("VOTE", "VOTEU")
def _vote(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    mode = next((m for m in ins.mods if m in ("ALL", "ANY", "EQ")), None)
    if mode is None or len(ops) not in (2, 3):
        raise unsupported(ins)
    # VOTE.ANY R0, PT, P0 (ballot and predicate) or VOTE.ALL P0, P1 (predicate only)
    w = write_u32(ops[0], ins) if len(ops) == 3 else None
    wp = write_pred(ops[-2], ins)
    rp = read_pred(ops[-1], ins)

    def step(b: Block, ix: Idx) -> None:
        p, t = rp(b, ix)
        t = warp_taint(b, ix, t)
        ballot, active = _ballot(b, ix, p)
        if mode == "ALL":
            r = ballot == active
        elif mode == "ANY":
            r = ballot != 0
        else:
            r = (ballot == active) | (ballot == 0)
        if w is not None:
            w(b, ix, ballot, t)
        wp(b, ix, r, t)

    return step


@op("MATCH")
def _match(ins: Instruction, ctx: Context) -> Step:
    """``MATCH.ANY d, a``: the lanes of the warp (among those executing) whose ``a`` equals
    this lane's; ``MATCH.ALL P, d, a``: all of them if every one holds the same value, else 0
    (P: whether they do). ``.U64``: ``a`` is a register pair (``__match_any_sync`` on a
    64-bit value)."""
    ops = list(ins.operands)
    wp = write_pred(ops.pop(0), ins) if "ALL" in ins.mods else None
    if len(ops) != 2:
        raise unsupported(ins)
    w = write_u32(ops[0], ins)
    ra = read_u64(ops[1], ins) if "U64" in ins.mods else read_u32(ops[1], "i", ins)

    def step(b: Block, ix: Idx) -> None:
        ids, row, table = warp_table(b, ix)
        v, t = ra(b, ix)
        t = warp_taint(b, ix, t)
        v = np.broadcast_to(v, ids.shape)
        out = np.zeros(len(ids), dtype=np.uint32)
        allsame = np.zeros(len(ids), dtype=bool)
        for k in range(len(ids)):  # small: one warp's worth per row
            same = (row == row[k]) & (v == v[k])
            lanes = (ids[same] % b.warp_size).astype(np.uint32)
            mask = int(np.bitwise_or.reduce(np.uint32(1) << lanes))
            out[k] = mask
            allsame[k] = bool(same[row == row[k]].all())
        if "ALL" in ins.mods:
            out = np.where(allsame, out, 0).astype(np.uint32)
        w(b, ix, out, t)
        if wp is not None:
            wp(b, ix, allsame, t)

    return step


@op("REDUX")
def _redux(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    # the plain REDUX is the AND (``__reduce_and_sync``; SUM, MIN, MAX, OR, XOR are named)
    kind = next((m for m in ins.mods if m in ("SUM", "MIN", "MAX", "OR", "XOR")), "AND")
    if len(ops) != 2:
        raise unsupported(ins)
    signed = "S32" in ins.mods
    w = write_u32(ops[0], ins)
    ra = read_u32(ops[1], "i", ins)

    def step(b: Block, ix: Idx) -> None:
        ids, row, table = warp_table(b, ix)
        v, t = ra(b, ix)
        v = np.broadcast_to(v, ids.shape).astype(np.int64)
        if signed:
            v = np.where(v >= 1 << 31, v - (1 << 32), v)
        nw = table.shape[0]
        if kind == "SUM":
            acc = np.zeros(nw, dtype=np.int64)
            np.add.at(acc, row, v)
        elif kind in ("MIN", "MAX"):
            acc = np.full(nw, np.iinfo(np.int64).max if kind == "MIN" else np.iinfo(np.int64).min)
            (np.minimum if kind == "MIN" else np.maximum).at(acc, row, v)
        else:
            acc = np.zeros(nw, dtype=np.int64) if kind != "AND" else np.full(nw, 0xFFFFFFFF)
            {"AND": np.bitwise_and, "OR": np.bitwise_or, "XOR": np.bitwise_xor}[kind].at(
                acc, row, v
            )
        w(b, ix, (acc[row] & 0xFFFFFFFF).astype(_U), warp_taint(b, ix, t))

    return step


def waterfall(ins: Instruction) -> bool:
    """R2UR's waterfall form, ``R2UR Pd, URd, Ra``: a step that reads the other lanes of the
    warp (each warp's first lane's value)."""
    return ins.opcode == "R2UR" and bool(ins.operands) and is_pred(ins.operands[0])


@op("R2UR")
def _r2ur(ins: Instruction, ctx: Context) -> Step:
    """``R2UR URd, Ra``; ``R2UR Pd, URd, Ra`` is a waterfall loop's step (nvcc's code for an
    operation on a uniform register, e.g. mbarrier.init, that lanes give different values):
    each warp's uniform register takes its first executing lane's value, and ``Pd`` is set
    for the lanes whose value differs (those the loop runs again for)."""
    ops = [o for o in ins.operands if not is_pred(o)]
    if len(ops) != 2:
        raise unsupported(ins)
    w = write_u32(ops[0], ins)
    ra = read_u32(ops[1], "i", ins)
    if not waterfall(ins):

        def copy(b: Block, ix: Idx) -> None:
            v, t = ra(b, ix)
            w(b, ix, spread(v, b.count(ix)), t)

        return copy
    wp = write_pred(ins.operands[0], ins)

    def step(b: Block, ix: Idx) -> None:
        v, t = ra(b, ix)
        v = spread(v, b.count(ix))
        _, first, which = np.unique(b.warp[b.ids(ix)], return_index=True, return_inverse=True)
        chosen = v[first][which]
        w(b, ix, chosen, t)
        wp(b, ix, v != chosen, t)

    return step
