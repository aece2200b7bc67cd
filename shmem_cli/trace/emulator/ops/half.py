"""Packed half-precision (half2) instructions: HADD2, HMUL2, HFMA2, HMNMX2 and HSETP2.

Each 32-bit register holds two float16 values (low, high); they are computed in
float64 and rounded to float16 lane by lane. As the H200 computes them: a NaN result is the
canonical ``0x7fff``, and ``.SAT`` clamps to [0, 1] with NaN and -0 going to +0
(tests/data/trace/opcodes' ``half_ops``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Imm, Operand
from ..op_table import Context, Step, op, unsupported
from ..operands import read_pred, read_u32, write_pred, write_u32
from ..state import Block, Idx
from .floating import BOOL_OPS, compare_name, float_compare

_U = np.uint32


def _half_operands(ins: Instruction) -> list[Operand]:
    """Join a trailing pair of immediates (high, low) into one packed operand."""
    ops = list(ins.operands)
    out: list[Operand] = []
    i = 0
    while i < len(ops):
        a = ops[i]
        nxt = ops[i + 1] if i + 1 < len(ops) else None
        if isinstance(a, Imm) and isinstance(nxt, Imm):
            hi = int(np.array(a.float_value, dtype=np.float16).view(np.uint16))
            lo = int(np.array(nxt.float_value, dtype=np.float16).view(np.uint16))
            out.append(Imm(f"0x{(hi << 16) | lo:x}", (hi << 16) | lo, 0.0))
            i += 2
        else:
            out.append(a)
            i += 1
    return out


_NAN = np.uint32(0x7FFF)  # the half NaN the GPU's arithmetic writes, whatever went in


def _h2(v: Any) -> Any:
    """uint32 -> (low, high) halves as float64."""
    v = np.asarray(v, dtype=_U)
    lo = (v & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
    hi = (v >> np.uint32(16)).astype(np.uint16).view(np.float16).astype(np.float64)
    return lo, hi


def _half_bits(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        bits = x.astype(np.float16).view(np.uint16).astype(_U)
    return np.where(np.isnan(x), _NAN, bits)


def _pack_h2(lo: Any, hi: Any) -> Any:
    return _half_bits(lo) | (_half_bits(hi) << np.uint32(16))


def _saturate(x: Any) -> Any:
    """[0, 1]; NaN and -0 become +0."""
    return np.clip(np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0) + 0.0


@op("HADD2", "HMUL2", "HFMA2", "HMNMX2")
def _half(ins: Instruction, ctx: Context) -> Step:
    ops = _half_operands(ins)
    kind = ins.opcode
    if "BF16_V2" in ins.mods or "BF16" in ins.mods:
        raise unsupported(ins, "bf16 half2 arithmetic")
    w = write_u32(ops[0], ins)
    readers = []
    for o in ops[1:]:
        if isinstance(o, Imm) and o.text.startswith("0x"):
            readers.append(read_u32(o, "i", ins))
        elif kind == "HMNMX2" and o is ops[-1]:
            readers.append(read_pred(o, ins))
        else:
            readers.append(read_u32(o, "h", ins))
    f32_out = "F32" in ins.mods
    sat = "SAT" in ins.mods

    def step(b: Block, ix: Idx) -> None:
        vals = [r(b, ix) for r in readers]
        t: Any = 0
        for _, tt in vals:
            t = t | tt
        h = [_h2(v) for v, _ in vals[: 3 if kind == "HFMA2" else 2]]
        res = []
        for k in range(2):
            x = [hh[k] for hh in h]
            if kind == "HADD2":
                r = x[0] + x[1]
            elif kind == "HMUL2":
                r = x[0] * x[1]
            elif kind == "HFMA2":
                r = x[0] * x[1] + x[2]
            else:
                p = vals[2][0]
                r = np.where(p, np.fmin(x[0], x[1]), np.fmax(x[0], x[1]))
            res.append(_saturate(r) if sat else r)
        out = np.asarray(res[0], dtype=np.float32).view(_U) if f32_out else _pack_h2(*res)
        w(b, ix, np.broadcast_to(out, (b.count(ix),)), t)

    return step


@op("HSETP2")
def _hsetp2(ins: Instruction, ctx: Context) -> Step:
    name = compare_name(ins)
    bop = next((m for m in ins.mods if m in BOOL_OPS), "AND")
    ops = _half_operands(ins)
    if len(ops) != 5:
        raise unsupported(ins)
    w1, w2 = write_pred(ops[0], ins), write_pred(ops[1], ins)
    ra, rb = read_u32(ops[2], "h", ins), read_u32(ops[3], "h", ins)
    rp = read_pred(ops[4], ins)
    comb = BOOL_OPS[bop]

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        (xl, xh), (yl, yh) = _h2(x), _h2(y)
        t = tx | ty | tp
        w1(b, ix, comb(float_compare(name, xl, yl), p), t)
        w2(b, ix, comb(float_compare(name, xh, yh), p), t)

    return step
