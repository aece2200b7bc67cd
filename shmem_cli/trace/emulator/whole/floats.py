"""Whole steps of the plain float32 arithmetic (FADD, FMUL, FFMA rounding to nearest, no
``.SAT``, no ``.FTZ``) of R and UR registers, negated or not, RZ and immediates: the float64
product and sum of :func:`..ops.floating._farith`'s fast step (a negated factor negates the
exact product, a negated addend is subtracted: the same values), its test
(:func:`..ops.floating.plain`), the cast written into the destination's row. Where the test
fails (a NaN, a possible tie, a tiny value) the instruction's own step runs: nothing was
written yet."""

from __future__ import annotations

from typing import cast

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Imm, Operand, Reg
from ..op_table import Step
from ..operands import forget_bytes, read_u32
from ..ops.floating import plain, rounding_mode
from ..state import Block
from .rows import EVERY, Rows, WholeStep

_F64 = np.dtype(np.float64)


#: a source: (uniform, register, negated), or a value (RZ, an immediate) as a float
_Source = tuple[bool, int, bool] | float


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


def float_step(ins: Instruction, general: Step) -> WholeStep | None:
    """The whole step of such a plain FADD, FMUL or FFMA, or None."""
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

    def whole(blk: Block, rows: Rows) -> None:
        r = rows.wide
        x = (rows.uf if ua else rows.f)[a]
        if b_ < 0:
            r[...] = x  # (widened exactly)
        else:
            np.multiply(x, (rows.uf if ub else rows.f)[b_], out=r, dtype=_F64)
        if flip:
            np.negative(r, out=r)
        if isinstance(c, float):
            np.add(r, c, out=r)
        elif c is not None:
            (np.subtract if c[2] else np.add)(r, (rows.uf if c[0] else rows.f)[c[1]], out=r)
        if not plain(r, rows.wide_bits):
            general(blk, EVERY)
            return
        rows.f[d][...] = r  # (the cast astype makes)
        t = [(rows.tur if u else rows.t)[i] for u, i in taints]
        np.bitwise_or(t[0] if len(t) == 2 else t[0] | t[2], t[1], out=rows.t[d])
        if blk.byte_clean:
            forget_bytes(blk, "R", d, EVERY)

    return whole
