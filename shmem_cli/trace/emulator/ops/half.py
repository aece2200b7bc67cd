"""Packed half-precision (half2 and bf16x2) instructions: HADD2, HMUL2, HFMA2, HMNMX2,
HSETP2 and HSET2.

Each 32-bit register holds two float16 values (low, high), or two bf16 values with
``.BF16_V2``; they are computed in float64 and rounded once to 16 bits lane by lane
(subnormals kept, as PTX says). As the H200 computes them: a NaN result is the canonical
``0x7fff`` (bf16 too), ``.SAT`` clamps to [0, 1] with NaN and -0 going to +0, ``.RELU``
turns -0 into +0, and a minimum or maximum puts -0 below +0 (tests/data/trace/opcodes'
``half_ops``, tests/data/trace/opcodes_cuda's ``bf16_ops``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Imm, Operand
from ...distinct_rows import spread
from ..op_table import Context, Step, op, unsupported
from ..operands import read_pred, read_u32, write_pred, write_u32
from ..state import Block, Idx
from .float_compare import BOOL_OPS, compare_name, float_compare
from .floating import NAN16, canonical_nan32, minimum_maximum, takes_second, two_sum

_U = np.uint32


def _half_operands(ins: Instruction, bf16: bool = False) -> list[Operand]:
    """Join a trailing pair of immediates (high, low) into one packed operand."""
    ops = list(ins.operands)
    out: list[Operand] = []
    i = 0
    while i < len(ops):
        a = ops[i]
        nxt = ops[i + 1] if i + 1 < len(ops) else None
        if isinstance(a, Imm) and isinstance(nxt, Imm):
            hi, lo = (int(_bits(np.float64(x.float_value), bf16)) for x in (a, nxt))
            out.append(Imm(f"0x{(hi << 16) | lo:x}", (hi << 16) | lo, 0.0))
            i += 2
        else:
            out.append(a)
            i += 1
    return out


_NAN = NAN16  # the half NaN the GPU's arithmetic writes, whatever went in


def _h2(v: Any, bf16: bool = False) -> Any:
    """uint32 -> (low, high) halves (or bf16 values) as float64."""
    v = np.asarray(v, dtype=_U)
    if bf16:
        lo = ((v & np.uint32(0xFFFF)) << np.uint32(16)).view(np.float32).astype(np.float64)
        return lo, (v & np.uint32(0xFFFF0000)).view(np.float32).astype(np.float64)
    lo = (v & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
    hi = (v >> np.uint32(16)).astype(np.uint16).view(np.float16).astype(np.float64)
    return lo, hi


def _bits(x: Any, bf16: bool = False, err: Any = 0.0) -> Any:
    """float64 -> 16-bit pattern (as uint32), rounded once to nearest even; ``err`` is what
    ``x`` lacks of the exact value (a tie is broken by its sign). NaN: ``0x7fff``."""
    x = np.asarray(x, dtype=np.float64)
    if not bf16:
        with np.errstate(over="ignore", invalid="ignore"):
            bits = x.astype(np.float16).view(np.uint16).astype(_U)
        return np.where(np.isnan(x), _NAN, bits)
    finite = np.isfinite(x)
    xf = np.where(finite, x, 0.0)
    _, e = np.frexp(xf)
    ulp = np.ldexp(1.0, np.maximum(e - 8, -133))  # 8 significant bits; denormals below 2^-126
    mag = np.abs(xf) / ulp  # exact: a power-of-two scaling
    whole = np.floor(mag)
    frac = mag - whole
    larger = np.asarray(err) * np.sign(xf) > 0  # the exact magnitude is above |x|
    exact_tie = np.asarray(err) == 0
    odd = np.fmod(whole, 2) == 1
    up = (frac > 0.5) | ((frac == 0.5) & (larger | (exact_tie & odd)))
    r = np.copysign(whole + up, xf)  # -0 stays -0
    with np.errstate(over="ignore"):
        y = np.where(finite, r * ulp, x).astype(np.float32)
    bits = (y.view(_U) >> np.uint32(16)).astype(_U)
    return np.where(np.isnan(x), _NAN, bits)


def _pack_h2(lo: Any, hi: Any, bf16: bool = False, errs: Any = (0.0, 0.0)) -> Any:
    return _bits(lo, bf16, errs[0]) | (_bits(hi, bf16, errs[1]) << np.uint32(16))


def _saturate(x: Any) -> Any:
    """[0, 1]; NaN and -0 become +0."""
    return np.clip(np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0) + 0.0


@op("HADD2", "HMUL2", "HFMA2", "HMNMX2")
def _half(ins: Instruction, ctx: Context) -> Step:
    """Per lane ``a + b``, ``a * b``, ``a * b + c`` (one rounding), or the minimum of ``a``
    and ``b`` where the predicate holds, else the maximum (-0 below +0; a NaN loses to a
    number, both NaN give NaN; ``.NAN``: a NaN wins). ``.BF16_V2``: bf16 lanes; ``.RELU``: a
    negative result or -0 becomes +0; ``.SAT``: clamped to [0, 1]."""
    bf16 = "BF16_V2" in ins.mods
    ops = _half_operands(ins, bf16)
    kind = ins.opcode
    if "BF16" in ins.mods:
        raise unsupported(ins, "bf16 arithmetic")
    if "XORSIGN" in ins.mods:  # min.xorsign.abs.f16x2: Triton 3.6 clamps in float32 instead
        raise unsupported(ins, ".XORSIGN")
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
    sat, relu, nan = "SAT" in ins.mods, "RELU" in ins.mods, "NAN" in ins.mods

    def step(b: Block, ix: Idx) -> None:
        vals = [r(b, ix) for r in readers]
        t: Any = 0
        for _, tt in vals:
            t = t | tt
        h = [_h2(v, bf16) for v, _ in vals[: 3 if kind == "HFMA2" else 2]]
        res, errs = [], []
        for k in range(2):
            x = [hh[k] for hh in h]
            err: Any = 0.0
            if kind == "HADD2":
                r, err = two_sum(x[0], x[1])
            elif kind == "HMUL2":
                r = x[0] * x[1]  # exact in float64 (at most 2 x 11 significant bits)
            elif kind == "HFMA2":
                r, err = two_sum(x[0] * x[1], x[2])
            else:
                p = vals[2][0]
                r = minimum_maximum(x[0], x[1], p)
                if nan:
                    r = np.where(np.isnan(x[0]) | np.isnan(x[1]), np.nan, r)
            if relu:
                r = np.where(r <= 0, 0.0, r)  # -0 too (the H200's bf16 fma); NaN stays NaN
            res.append(_saturate(r) if sat else r)
            errs.append(err)
        if f32_out:  # a NaN the canonical 0x7fffffff (HADD2.F32 of a half NaN: probes2)
            out = canonical_nan32(res[0], np.asarray(res[0], dtype=np.float32).view(_U))
        else:
            out = _pack_h2(res[0], res[1], bf16, errs)
        w(b, ix, spread(out, b.count(ix)), t)

    return step


@op("HSET2")
def _hset2(ins: Instruction, ctx: Context) -> Step:
    """``HSET2[.BF16_V2][.BF].CMP.BOP d, a, b, p``: each lane's compare combined with ``p``,
    written as 1.0 (``.BF``: 0x3c00, or 0x3f80 for bf16 lanes) or 0, else as 0xffff or 0
    (``__hlt2``, ``__heq2_mask``)."""
    bf16 = "BF16_V2" in ins.mods
    name = compare_name(ins)
    bop = next((m for m in ins.mods if m in BOOL_OPS), "AND")
    ops = _half_operands(ins, bf16)
    if len(ops) != 4:
        raise unsupported(ins)
    w = write_u32(ops[0], ins)
    ra, rb = read_u32(ops[1], "h", ins), read_u32(ops[2], "h", ins)
    rp = read_pred(ops[3], ins)
    true = (0x3F80 if bf16 else 0x3C00) if "BF" in ins.mods else 0xFFFF

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        (xl, xh), (yl, yh) = _h2(x, bf16), _h2(y, bf16)
        lo = BOOL_OPS[bop](float_compare(name, xl, yl), p)
        hi = BOOL_OPS[bop](float_compare(name, xh, yh), p)
        out = np.where(lo, true, 0) | (np.where(hi, true, 0) << 16)
        w(b, ix, spread(out.astype(_U), b.count(ix)), tx | ty | tp)

    return step


@op("HSETP2")
def _hsetp2(ins: Instruction, ctx: Context) -> Step:
    bf16 = "BF16_V2" in ins.mods
    name = compare_name(ins)
    bop = next((m for m in ins.mods if m in BOOL_OPS), "AND")
    ops = _half_operands(ins, bf16)
    if len(ops) != 5:
        raise unsupported(ins)
    w1, w2 = write_pred(ops[0], ins), write_pred(ops[1], ins)
    ra, rb = read_u32(ops[2], "h", ins), read_u32(ops[3], "h", ins)
    rp = read_pred(ops[4], ins)
    comb = BOOL_OPS[bop]

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        (xl, xh), (yl, yh) = _h2(x, bf16), _h2(y, bf16)
        t = tx | ty | tp
        w1(b, ix, comb(float_compare(name, xl, yl), p), t)
        w2(b, ix, comb(float_compare(name, xh, yh), p), t)

    return step


@op("VHMNMX")
def _vhmnmx(ins: Instruction, ctx: Context) -> Step:
    """``VHMNMX d, a, b, c, p``: per 16-bit lane the minimum of a, b and c where p holds, else
    their maximum (ptxas's fusion of two ``min.f16x2``/``max.f16x2``, ``.BF16_V2`` of
    bf16x2): a NaN loses to a number, as in ``min``/``max`` without ``.NaN``, and -0 is below
    +0 (:func:`.floating.takes_second`); the result is one of the inputs, bit for bit (a lane
    of NaNs alone gives the canonical NaN 0x7fff). ``.NAN`` (``__hmin2_nan``): a NaN in
    any of the three gives 0x7fff (tests/data/trace/probes' ``min3_nan``)."""
    bf16 = "BF16_V2" in ins.mods
    ops = _half_operands(ins, bf16)
    if len(ops) != 5:
        raise unsupported(ins)
    nan = "NAN" in ins.mods
    w = write_u32(ops[0], ins)
    readers = [read_u32(o, "h", ins) for o in ops[1:4]]
    rp = read_pred(ops[4], ins)

    def step(b: Block, ix: Idx) -> None:
        vals = [r(b, ix) for r in readers]
        p, tp = rp(b, ix)
        t: Any = tp
        bits = []
        for v, tv in vals:
            t = t | tv
            bits.append(spread(np.asarray(v, dtype=_U), b.count(ix)))
        out = np.zeros(b.count(ix), dtype=_U)
        for k in range(2):
            shift = _U(16 * k)
            r, pick = _h2(bits[0], bf16)[k], (bits[0] >> shift) & _U(0xFFFF)
            seen = np.isnan(r)
            for v in bits[1:]:
                x = _h2(v, bf16)[k]
                second = takes_second(r, x, p)
                r, pick = np.where(second, x, r), np.where(second, (v >> shift) & _U(0xFFFF), pick)
                seen = seen | np.isnan(x)
            out |= np.where(np.isnan(r) | (seen & nan), _NAN, pick) << shift
        w(b, ix, out, t)

    return step
