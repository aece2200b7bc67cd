"""Floating-point compares: ``FSETP``/``DSETP`` (two predicates, the compare and its
negation, each combined with a predicate operand; ``DSETP.MIN``/``.MAX``: a double minimum's
or maximum's selects), ``FSET`` (the compare as a register: all ones, or 1.0 with ``.BF``)
and ``FCHK`` (whether a float32 division needs the slow path). The comparisons (``EQ``,
``LT``, ..., their unordered ``U`` forms, ``NUM``, ``NAN``, ``T``, ``F``) and how a result
is combined with a predicate are shared with the half-precision compares (:mod:`.half`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ...distinct_rows import spread
from ..op_table import Context, Step, op, unsupported
from ..operands import read_pred, read_u32, read_u64, write_pred, write_u32
from ..state import Block, Idx
from .floating import as_f32, flush, takes_second

_FCMP = {
    "EQ": lambda x, y: x == y,
    "NE": lambda x, y: (x != y) & ~np.isnan(x) & ~np.isnan(y),
    "LT": lambda x, y: x < y,
    "LE": lambda x, y: x <= y,
    "GT": lambda x, y: x > y,
    "GE": lambda x, y: x >= y,
    "NUM": lambda x, y: ~np.isnan(x) & ~np.isnan(y),
    "NAN": lambda x, y: np.isnan(x) | np.isnan(y),
}
# how a compare's result is combined with its predicate operand
BOOL_OPS = {"AND": np.logical_and, "OR": np.logical_or, "XOR": np.logical_xor}


def float_compare(name: str, x: Any, y: Any) -> Any:
    with np.errstate(invalid="ignore"):
        if name in _FCMP:
            return _FCMP[name](x, y)
        if name.endswith("U") and name[:-1] in _FCMP:
            return _FCMP[name[:-1]](x, y) | np.isnan(x) | np.isnan(y)
        if name == "T":
            return np.ones(np.broadcast(x, y).shape, dtype=bool)
        if name == "F":
            return np.zeros(np.broadcast(x, y).shape, dtype=bool)
    raise ValueError(name)


def compare_name(ins: Instruction) -> str:
    """The comparison an instruction names: EQ, LT, ..., their unordered U forms, T or F."""
    for m in ins.mods:
        if m in _FCMP or (m.endswith("U") and m[:-1] in _FCMP) or m in ("T", "F"):
            return m
    raise unsupported(ins, "no comparison")


@op("FSETP", "DSETP")
def _fsetp(ins: Instruction, ctx: Context) -> Step:
    if ins.opcode == "DSETP" and {"MIN", "MAX"} & set(ins.mods):
        return _dsetp_min_max(ins)
    name = compare_name(ins)
    bop = next((m for m in ins.mods if m in BOOL_OPS), "AND")
    ops = ins.operands
    if len(ops) != 5:
        raise unsupported(ins)
    w1, w2 = write_pred(ops[0], ins), write_pred(ops[1], ins)
    dbl = ins.opcode == "DSETP"
    ra, rb = (read_u64(o, ins, "d") if dbl else read_u32(o, "f", ins) for o in ops[2:4])
    rp = read_pred(ops[4], ins)
    comb = BOOL_OPS[bop]
    ftz = "FTZ" in ins.mods and not dbl  # denormals compare as zeros

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        fx = np.asarray(x).view(np.float64) if dbl else as_f32(x)
        fy = np.asarray(y).view(np.float64) if dbl else as_f32(y)
        if ftz:
            fx, fy = flush(fx), flush(fy)
        r = float_compare(name, fx, fy)
        t = tx | ty | tp
        w1(b, ix, comb(r, p), t)
        w2(b, ix, comb(~r, p), t)

    return step


def _dsetp_min_max(ins: Instruction) -> Step:
    """``DSETP.MIN|MAX.AND Pa, Pn, a, b, p``: the predicates of a double minimum or maximum
    that nvcc writes as selects (sm_90 has no DMNMX): ``Pa`` says the result is ``a`` (the
    smaller, or larger, of two numbers, -0 below +0; the number when the other is NaN),
    ``Pn`` that both are NaN (the result is then ``b`` with its quiet bit set); both
    combined with ``p`` (:func:`takes_second`'s order). From the selects nvcc writes after it
    for ``fmin``/``fmax``, as the H200 computes them (tests/data/trace/opcodes_cuda's
    ``double_min_max`` and ``nan_payloads``)."""
    bop = next((m for m in ins.mods if m in BOOL_OPS), "AND")
    ops = ins.operands
    if len(ops) != 5:
        raise unsupported(ins)
    w1, w2 = write_pred(ops[0], ins), write_pred(ops[1], ins)
    ra, rb = read_u64(ops[2], ins, "d"), read_u64(ops[3], ins, "d")
    rp = read_pred(ops[4], ins)
    comb = BOOL_OPS[bop]
    smaller = "MIN" in ins.mods

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        fx, fy = np.asarray(x).view(np.float64), np.asarray(y).view(np.float64)
        both_nan = np.isnan(fx) & np.isnan(fy)
        takes_a = ~takes_second(fx, fy, smaller) & ~both_nan
        t = tx | ty | tp
        w1(b, ix, comb(takes_a, p), t)
        w2(b, ix, comb(both_nan, p), t)

    return step


@op("FSET")
def _fset(ins: Instruction, ctx: Context) -> Step:
    name = compare_name(ins)
    bop = next((m for m in ins.mods if m in BOOL_OPS), "AND")
    ops = ins.operands
    if len(ops) != 4:
        raise unsupported(ins)
    w = write_u32(ops[0], ins)
    ra, rb = read_u32(ops[1], "f", ins), read_u32(ops[2], "f", ins)
    rp = read_pred(ops[3], ins)
    one = np.uint32(0x3F800000 if "BF" in ins.mods else 0xFFFFFFFF)  # .BF: 1.0

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        r = BOOL_OPS[bop](float_compare(name, as_f32(x), as_f32(y)), p)
        w(b, ix, spread(np.where(r, one, np.uint32(0)), b.count(ix)), tx | ty | tp)

    return step


@op("FCHK")
def _fchk(ins: Instruction, ctx: Context) -> Step:
    """True when a/b needs the slow path: special or tiny/huge operands or quotient."""
    ops = ins.operands
    w = write_pred(ops[0], ins)
    ra, rb = read_u32(ops[1], "f", ins), read_u32(ops[2], "f", ins)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty) = ra(b, ix), rb(b, ix)
        ex, ey = ((np.asarray(v, dtype=np.int64) >> 23) & 0xFF for v in (x, y))  # exponents
        bad = (ey == 0) | (ey == 255) | (ex == 255) | (ey >= 253)
        bad |= (ex != 0) & ((ex - ey > 125) | (ex - ey < -125) | (ex <= 24))
        w(b, ix, spread(bad, b.count(ix)), tx | ty)

    return step
