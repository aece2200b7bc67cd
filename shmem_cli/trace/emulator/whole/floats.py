"""Whole steps of the plain float32 arithmetic (FADD, FMUL, FFMA rounding to nearest, no
``.SAT``, no ``.FTZ``) of R and UR registers, negated or not, RZ and immediates: the float64
product and sum of :func:`..ops.floating._farith`'s fast step (a negated factor negates the
exact product, a negated addend is subtracted: the same values), its test
(:func:`..ops.floating.plain`), the cast written into the destination's row. Where the test
fails (a NaN, a possible tie, a tiny value) the instruction's own step runs: nothing was
written yet. Each operand is widened by a cast into a float64 row, then multiplied and added
there (a ufunc that widens its float32 operands itself costs twice as much on a warp).

:func:`member` gives a step's parts apart (its sum, its taint, its destination), for the
chains of such steps that run one after the other (:mod:`.chains`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Imm, Operand, Reg
from ....plumbing.frozen import frozen
from ..op_table import Step
from ..operands import forget_bytes, read_u32
from ..ops.floating import plain, rounding_mode
from ..state import Block
from .rows import EVERY, Rows, WholeStep

#: a source: (uniform, register, negated), or a value (RZ, an immediate) as a float
_Source = tuple[bool, int, bool] | float


@frozen
class Member:
    """A plain float step's parts: ``sum(rows, r)`` writes its float64 values into ``r`` (a
    float64 row), ``taint(rows)`` ORs its sources' taint into its destination's row, ``d``."""

    sum: Callable[[Rows, Any], None]
    taint: Callable[[Rows], None]
    d: int


def _source(o: Operand, ins: Instruction) -> _Source | None:
    """How a whole step reads a source operand, or None (``|.|``, ``~``, a constant bank, an
    address the driver fills in: the instruction's own step)."""
    if isinstance(o, Reg) and o.kind in ("R", "UR") and not (o.inv or o.abs):
        if not o.is_zero:
            return o.kind == "UR", o.index, o.neg
        value, _ = read_u32(o, "f", ins)(cast(Block, None), EVERY)  # (RZ's: the same for all)
        return float(np.asarray(value, dtype=np.uint32).view(np.float32))
    if isinstance(o, Imm) and o.reloc is None and not o.abs:
        value, _ = read_u32(o, "f", ins)(cast(Block, None), EVERY)
        return float(np.asarray(value, dtype=np.uint32).view(np.float32))
    return None


def member(ins: Instruction) -> Member | None:
    """The parts of such a plain FADD, FMUL or FFMA, or None."""
    kind = ins.opcode
    count = {"FADD": 3, "FMUL": 3, "FFMA": 4}.get(kind)
    if count is None or len(ins.operands) != count or rounding_mode(ins) != "RN":
        return None
    if "SAT" in ins.mods or "FTZ" in ins.mods:
        return None
    dest = ins.operands[0]
    if not isinstance(dest, Reg) or dest.kind != "R" or dest.is_zero:
        return None
    sources = [_source(o, ins) for o in ins.operands[1:]]
    if None in sources or isinstance(sources[0], float) or isinstance(sources[1], float):
        return None
    (ua, a, na), (ub, b_, nb) = sources[0], sources[1]  # type: ignore[misc]
    c = sources[2] if kind == "FFMA" else None
    if kind == "FADD":  # a (widened exactly, negated where it is) plus or minus b
        c, ub, b_, nb = sources[1], False, -1, False
    d, flip = dest.index, na != nb  # (-a) * b = -(a * b), exactly
    regs = [(ua, a), (ub, b_), *([] if c is None or isinstance(c, float) else [c[:2]])]
    taints = [x for x in regs if x[1] >= 0]  # (two or three: a constant carries none)
    return Member(_sum(ua, a, ub, b_, flip, c), _taint(taints, d), d)


def _sum(ua: bool, a: int, ub: bool, b_: int, flip: bool, c: Any) -> Callable[[Rows, Any], None]:
    """The float64 values of ``±a * b + c`` (``b_`` < 0: ``±a + c``) written into a row."""
    add = None if c is None or isinstance(c, float) else (np.subtract if c[2] else np.add)

    def values(rows: Rows, r: Any) -> None:
        r[...] = (rows.uf if ua else rows.f)[a]  # (widened exactly)
        s = rows.spare
        if b_ >= 0:
            s[...] = (rows.uf if ub else rows.f)[b_]
            np.multiply(r, s, out=r)
        if flip:
            np.negative(r, out=r)
        if add is not None:
            s[...] = (rows.uf if c[0] else rows.f)[c[1]]
            add(r, s, out=r)
        elif c is not None:
            np.add(r, c, out=r)

    return values


def _taint(taints: list[tuple[bool, int]], d: int) -> Callable[[Rows], None]:
    """The OR of the sources' taint (two or three rows) written into register ``d``'s."""
    (u0, i0), (u1, i1) = taints[0], taints[1]
    third = taints[2] if len(taints) == 3 else None

    def taint(rows: Rows) -> None:
        t0, t1 = (rows.tur if u0 else rows.t)[i0], (rows.tur if u1 else rows.t)[i1]
        if third is None:
            np.bitwise_or(t0, t1, out=rows.t[d])
            return
        s = rows.spare_taint
        np.bitwise_or(t0, t1, out=s)
        np.bitwise_or(s, (rows.tur if third[0] else rows.t)[third[1]], out=rows.t[d])

    return taint


def float_step(ins: Instruction, general: Step) -> WholeStep | None:
    """The whole step of such a plain FADD, FMUL or FFMA, or None."""
    m = member(ins)
    if m is None:
        return None
    values, taint, d = m.sum, m.taint, m.d

    def whole(blk: Block, rows: Rows) -> None:
        r = rows.wide
        values(rows, r)
        if not plain(r, rows.wide_bits):
            general(blk, EVERY)
            return
        rows.f[d][...] = r  # (the cast astype makes)
        taint(rows)
        if blk.byte_clean:
            forget_bytes(blk, "R", d, EVERY)

    return whole
