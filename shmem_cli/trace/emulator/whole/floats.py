"""Whole steps of the plain float32 arithmetic (FADD, FMUL, FFMA rounding to nearest, no
``.SAT``, no ``.FTZ``) on registers as written: the float64 product and sum of
:func:`..ops.floating._farith`'s fast step, its test (:func:`..ops.floating.plain`), the
cast written into the destination's row. Where the test fails (a NaN, a possible tie, a
tiny value) the instruction's own step runs: nothing was written yet."""

from __future__ import annotations

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Operand, Reg
from ..op_table import Step
from ..operands import forget_bytes
from ..ops.floating import plain, rounding_mode
from ..state import Block
from .rows import Rows, WholeStep

_F64 = np.dtype(np.float64)
_EVERY = slice(None)


def _register(o: Operand) -> int | None:
    """The index of an R register read or written as it is (no ``-``, ``|.|``, ``~``), or
    None (RZ, a constant, an immediate: the instruction's own step)."""
    if isinstance(o, Reg) and o.kind == "R" and not (o.is_zero or o.neg or o.inv or o.abs):
        return o.index
    return None


def float_step(ins: Instruction, general: Step) -> WholeStep | None:
    """The whole step of a plain FADD, FMUL or FFMA of registers, or None."""
    kind = ins.opcode
    count = {"FADD": 3, "FMUL": 3, "FFMA": 4}.get(kind)
    if count is None or len(ins.operands) != count or rounding_mode(ins) != "RN":
        return None
    if "SAT" in ins.mods or "FTZ" in ins.mods:
        return None
    regs = [_register(o) for o in ins.operands]
    if None in regs:
        return None
    d, a, b_ = regs[0], regs[1], regs[2]
    assert d is not None and a is not None and b_ is not None
    c = regs[3] if kind == "FFMA" else None

    def whole(b: Block, rows: Rows) -> None:
        f, t, r = rows.f, rows.t, rows.wide
        if kind == "FADD":
            np.add(f[a], f[b_], out=r, dtype=_F64)
        else:  # a product of two float32 is exact in float64
            np.multiply(f[a], f[b_], out=r, dtype=_F64)
            if c is not None:
                np.add(r, f[c], out=r)
        if not plain(r, rows.wide_bits):
            general(b, _EVERY)
            return
        f[d][...] = r  # (the cast astype makes)
        if c is None:
            np.bitwise_or(t[a], t[b_], out=t[d])
        else:
            np.bitwise_or(t[a] | t[b_], t[c], out=t[d])
        if b.byte_clean:
            forget_bytes(b, "R", d, _EVERY)

    return whole
