"""Conversions between number types: integer <-> float (I2F, F2I), float <-> float
(F2F, packed F2FP, 8-bit float pairs unpacked to halves), integer <-> integer (I2I) and
rounding to an integral value (FRND), with the instruction's rounding mode and saturation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Operand, Reg
from ....hardware import nans
from ....hardware.half_round import round_half
from ....hardware.int_double import directed_double, odd_double
from ...distinct_rows import spread
from ..op_table import Context, Step, op, unsupported
from ..operands import read_u32, read_u64, write_u32, write_u64
from ..state import Block, Idx
from ..tensor_units.wgmma import fp8_values
from .floating import NAN16, NAN_TF32, as_f32, canonical_nan16, flush, round_f32, rounding_mode

_U = np.uint32

_INT_TYPES = {"S8": (8, True), "U8": (8, False), "S16": (16, True), "U16": (16, False)}
_INT_TYPES |= {"S32": (32, True), "U32": (32, False), "S64": (64, True), "U64": (64, False)}
_FLOAT_TYPES = ("F16", "F32", "F64", "BF16")


def _types(ins: Instruction, default_dst: str, default_src: str) -> tuple[str, str]:
    ts = [m for m in ins.mods if m in _INT_TYPES or m in _FLOAT_TYPES]
    if len(ts) >= 2:
        return ts[0], ts[1]
    if len(ts) == 1:
        # a single type names the side that is not the default one
        if ins.opcode in ("I2F", "I2FP"):
            return (ts[0], default_src) if ts[0] in _FLOAT_TYPES else (default_dst, ts[0])
        return (ts[0], default_src) if ts[0] in _INT_TYPES else (default_dst, ts[0])
    return default_dst, default_src


def _read_int(
    ins: Instruction, opnd: Operand, typ: str, odd: bool = False, mode: str = "RN"
) -> Any:
    """A reader of the integer operand as float64: exact up to 2^53; a 64-bit one past it
    rounded with ``mode``, or with ``odd`` (a float32, float16 or bfloat16 to come) to odd
    (:mod:`shmem_cli.hardware.int_double`)."""
    bits, signed = _INT_TYPES[typ]
    if bits == 64:
        r64 = read_u64(opnd, ins)

        def rd64(b: Block, ix: Idx) -> tuple[Any, Any]:
            v, t = r64(b, ix)
            if odd:
                return odd_double(v, signed), t
            return directed_double(v, signed, mode), t

        return rd64
    r = read_u32(opnd, "i", ins)
    if bits == 32:  # the register as it is, signed or not

        def rd32(b: Block, ix: Idx) -> tuple[Any, Any]:
            v, t = r(b, ix)
            u = np.asarray(v, dtype=np.uint32)
            return (u.view(np.int32) if signed else u).astype(np.float64), t

        return rd32

    def rd(b: Block, ix: Idx) -> tuple[Any, Any]:
        v, t = r(b, ix)
        x = np.asarray(v, dtype=np.int64) & ((1 << bits) - 1)
        if signed:
            x = np.where(x >= 1 << (bits - 1), x - (1 << bits), x)
        return x.astype(np.float64), t

    return rd


def _read_float(ins: Instruction, opnd: Operand, typ: str) -> Any:
    if typ == "F64":
        r64 = read_u64(opnd, ins, "d")
        return lambda b, ix: (lambda v: (np.asarray(v[0]).view(np.float64), v[1]))(r64(b, ix))
    r = read_u32(opnd, "f", ins)
    if typ == "F16":
        hsel = "H1" in getattr(opnd, "sel", ())

        def rh(b: Block, ix: Idx) -> tuple[Any, Any]:
            v, t = r(b, ix)
            h = (np.asarray(v) >> np.uint32(16)) if hsel else np.asarray(v)
            return (h & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64), t

        return rh
    if typ == "BF16":

        def rbf(b: Block, ix: Idx) -> tuple[Any, Any]:
            v, t = r(b, ix)
            return ((np.asarray(v) & np.uint32(0xFFFF)) << np.uint32(16)).view(np.float32).astype(
                np.float64
            ), t

        return rbf
    return lambda b, ix: (lambda v: (as_f32(v[0]).astype(np.float64), v[1]))(r(b, ix))


def _write_float(ins: Instruction, opnd: Operand, typ: str, mode: str, src: str = "") -> Any:
    """A writer of float64 values as ``typ`` rounded with ``mode``; ``src``, an F2F's source
    type: a NaN converted to or from double (F32, F16, BF16) as the H200 converts it
    (:func:`shmem_cli.hardware.nans.through_double`), the others' the canonical NaN."""
    bits = _float_bits(typ, mode)
    if src != typ and {src, typ} in ({"F64", "F32"}, {"F64", "F16"}, {"F64", "BF16"}):
        ordinary = bits
        bits = lambda x: nans.through_double(x, ordinary(x), typ)  # noqa: E731
    w = write_u64(opnd, ins) if typ == "F64" else write_u32(opnd, ins)
    return lambda b, ix, x, t: w(b, ix, bits(x), t)


def _float_bits(typ: str, mode: str) -> Any:
    if typ == "F64":
        return lambda x: np.asarray(x, dtype=np.float64).view(np.uint64)
    if typ == "F16":
        return lambda x: half_bits(x, mode)
    if typ == "BF16":
        return lambda x: bf16_bits(x, mode)
    return lambda x: round_f32(x, mode)


def half_bits(x: Any, mode: str = "RN") -> Any:
    """Values as float16 bits rounded with ``mode`` (:func:`.half_round.round_half`: once,
    as IEEE 754 rounds); a NaN is :data:`.floating.NAN16`."""
    return canonical_nan16(x, round_half(x, "F16", mode))


def bf16_bits(x: Any, mode: str = "RN") -> Any:
    """Values as bfloat16 bits rounded with ``mode``, a double once (PTX's
    ``cvt.rn.bf16.f64``: not through float32); a NaN is :data:`.floating.NAN16`."""
    return canonical_nan16(x, round_half(x, "BF16", mode))


def _round_int(x: Any, ins: Instruction) -> Any:
    mods = set(ins.mods)
    if "TRUNC" in mods:
        return np.trunc(x)
    if "FLOOR" in mods:
        return np.floor(x)
    if "CEIL" in mods:
        return np.ceil(x)
    return np.rint(x)


@op("I2F", "I2FP")
def _i2f(ins: Instruction, ctx: Context) -> Step:
    dst, src = _types(ins, "F32", "S32")
    mode = rounding_mode(ins)
    rd = _read_int(ins, ins.operands[1], src, odd=dst != "F64", mode=mode)  # rounded once
    wr = _write_float(ins, ins.operands[0], dst, mode)

    def step(b: Block, ix: Idx) -> None:
        x, t = rd(b, ix)
        wr(b, ix, spread(x, b.count(ix)), t)

    return step


@op("F2I")
def _f2i(ins: Instruction, ctx: Context) -> Step:
    dst, src = _types(ins, "S32", "F32")
    if dst in _FLOAT_TYPES:
        dst, src = src, dst
    rd = _read_float(ins, ins.operands[1], src)
    bits, signed = _INT_TYPES[dst]
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    w = write_u64(ins.operands[0], ins) if bits == 64 else write_u32(ins.operands[0], ins)

    def step(b: Block, ix: Idx) -> None:
        x, t = rd(b, ix)
        with np.errstate(invalid="ignore"):
            r = _round_int(np.asarray(x, dtype=np.float64), ins)
            r = np.where(np.isnan(r), 0, np.clip(r, lo, hi))
        if bits == 64:
            v = np.array([int(q) & 0xFFFFFFFFFFFFFFFF for q in np.atleast_1d(r)], dtype=np.uint64)
        else:
            v = (r.astype(np.int64) & 0xFFFFFFFF).astype(_U)
        w(b, ix, spread(v, b.count(ix)), t)

    return step


@op("F2F")
def _f2f(ins: Instruction, ctx: Context) -> Step:
    dst, src = _types(ins, "F32", "F32")
    rd = _read_float(ins, ins.operands[1], src)
    wr = _write_float(ins, ins.operands[0], dst, rounding_mode(ins), src)

    def step(b: Block, ix: Idx) -> None:
        x, t = rd(b, ix)
        if any(m in ins.mods for m in ("TRUNC", "FLOOR", "CEIL")):
            x = _round_int(x, ins)
        wr(b, ix, spread(x, b.count(ix)), t)

    return step


@op("FRND")
def _frnd(ins: Instruction, ctx: Context) -> Step:
    typ = "F64" if "F64" in ins.mods else "F32"
    rd = _read_float(ins, ins.operands[1], typ)
    wr = _write_float(ins, ins.operands[0], typ, "RN")
    ftz = "FTZ" in ins.mods and typ == "F32"  # a denormal source is a zero of its sign

    def step(b: Block, ix: Idx) -> None:
        x, t = rd(b, ix)
        if ftz:
            x = flush(np.asarray(x, dtype=np.float32))
        wr(b, ix, spread(_round_int(x, ins), b.count(ix)), t)

    return step


@op("I2I")
def _i2i(ins: Instruction, ctx: Context) -> Step:
    """Narrowing with saturation (``cvt.sat.s8.s32``): the value clamped to the narrow
    type's range, left sign- or zero-extended in the register."""
    dst, src = _types(ins, "S32", "S32")
    rd = _read_int(ins, ins.operands[1], src)
    clamp = _clamp(dst)
    w = write_u32(ins.operands[0], ins)

    def step(b: Block, ix: Idx) -> None:
        x, t = rd(b, ix)
        r = clamp(x)
        w(b, ix, spread((r.astype(np.int64) & 0xFFFFFFFF).astype(_U), b.count(ix)), t)

    return step


@op("I2IP")
def _i2ip(ins: Instruction, ctx: Context) -> Step:
    """Saturating packs (``cvt.pack.sat``): ``I2IP.U16.S32.SAT d, a, b, c`` puts a's
    narrowed value in the high half of ``d`` and b's in the low; the 8-bit forms fill only
    the low half (a in byte 1, b in byte 0) and take the high half from ``c`` (its ``.H1``
    or low half): what the H200 computed for tests/data/trace/opcodes' ``int_narrow``."""
    ops = ins.operands
    if len(ops) != 4 or not isinstance(ops[3], Reg):
        raise unsupported(ins)
    dst, src = _types(ins, "S32", "S32")
    bits, _ = _INT_TYPES[dst]
    if bits not in (8, 16):
        raise unsupported(ins)
    ra, rb = _read_int(ins, ops[1], src), _read_int(ins, ops[2], src)
    plain_c = Reg(ops[3].kind, ops[3].index)
    rc = read_u32(plain_c, "i", ins)
    high_c = "H1" in ops[3].sel
    clamp = _clamp(dst)
    mask = (1 << bits) - 1
    w = write_u32(ops[0], ins)

    def step(b: Block, ix: Idx) -> None:
        (a, ta), (bb, tb) = ra(b, ix), rb(b, ix)
        pa = clamp(a).astype(np.int64) & mask
        pb = clamp(bb).astype(np.int64) & mask
        if bits == 16:
            r, tc = (pa << 16) | pb, 0
        else:
            c, tc = rc(b, ix)
            c = np.asarray(c, dtype=np.int64)
            top = (c >> 16) if high_c else (c & 0xFFFF)
            r = ((top & 0xFFFF) << 16) | (pa << 8) | pb
        n = b.count(ix)
        w(b, ix, spread(r.astype(_U), n), ta | tb | tc)

    return step


def _clamp(typ: str) -> Any:
    bits, signed = _INT_TYPES[typ]
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    return lambda x: np.clip(x, lo, hi)


def _fp8_halves(fmt: str) -> Any:
    """The half-precision bits of each of the 256 bytes of an 8-bit float format (their
    values: :func:`..tensor_units.wgmma.fp8_values`; every one is a half exactly). A NaN becomes the
    canonical half NaN 0x7FFF."""
    values = fp8_values(fmt.lower())
    bits = values.astype(np.float16).view(np.uint16).astype(_U)
    return canonical_nan16(values, bits)


def _f2fp_unpack(ins: Instruction) -> Step:
    """``F2FP.F16.E5M2.UNPACK_B d, a`` (and ``.E4M3``, PTX's ``cvt.rn.f16x2.e5m2x2``): the
    two 8-bit floats in a's low half (its high half with ``.H1``) become the two halves of d,
    byte 0 the low one."""
    ops = ins.operands
    fmt = next((m for m in ins.mods if m in ("E5M2", "E4M3")), None)
    if fmt is None or "F16" not in ins.mods or len(ops) != 2 or not isinstance(ops[1], Reg):
        raise unsupported(ins)
    table = _fp8_halves(fmt)
    high = "H1" in ops[1].sel
    r = read_u32(Reg(ops[1].kind, ops[1].index), "i", ins)
    w = write_u32(ops[0], ins)

    def step(b: Block, ix: Idx) -> None:
        v, t = r(b, ix)
        u = np.asarray(v, dtype=_U) >> _U(16 if high else 0)
        lo, hi = table[u & _U(0xFF)], table[(u >> _U(8)) & _U(0xFF)]
        w(b, ix, spread(((hi << _U(16)) | lo).astype(_U), b.count(ix)), t)

    return step


def fp8_bits(x: Any, fmt: str, relu: bool = False) -> Any:
    """float64 values as bytes of an 8-bit float (``E4M3``/``E5M2``), as PTX's
    ``cvt.rn.satfinite`` writes them: rounded to nearest, ties to even; a magnitude past the
    largest finite value (infinity too) becomes the largest finite value of its sign, a NaN
    of either sign the format's NaN 0x7F; a result that rounds to zero keeps its sign.
    ``relu``: a negative value and -0 become 0x00, a NaN stays 0x7F (the H200's
    ``.relu``, tests/data/trace/probes' ``fp8_relu``)."""
    if relu:
        x = np.where(np.asarray(x) <= 0, 0.0, x)  # NaN <= 0 is false: NaN stays
    values = fp8_values(fmt.lower())
    finite = values[:0x80][~np.isnan(values[:0x80]) & ~np.isinf(values[:0x80])]
    top = float(finite.max())
    mbits, emin = (3, -6) if fmt == "E4M3" else (2, -14)
    x = np.asarray(x, dtype=np.float64)
    a = np.minimum(np.nan_to_num(np.abs(x), nan=0.0, posinf=top), top)
    with np.errstate(divide="ignore"):
        e = np.maximum(np.floor(np.log2(np.where(a > 0, a, 1.0))), emin)
    q = np.exp2(e - mbits)
    r = np.minimum(np.rint(a / q) * q, top)
    code = np.searchsorted(values[: int(np.argmax(values[:0x80] == top)) + 1], r).astype(_U)
    code = code | np.where(np.signbit(x), _U(0x80), _U(0))
    return np.where(np.isnan(x), _U(0x7F), code).astype(_U)


def _merge_c(ins: Instruction, opnd: Operand) -> Any:
    """The ``_MERGE_C`` source: its half (``.H1``: the high one) lands in the high 16 bits
    of the result, the converted pair in the low 16."""
    if not isinstance(opnd, Reg):
        raise unsupported(ins, "a register as the merged operand")
    high = "H1" in opnd.sel
    r = read_u32(Reg(opnd.kind, opnd.index), "i", ins)

    def read(b: Block, ix: Idx) -> tuple[Any, Any]:
        v, t = r(b, ix)
        v = np.asarray(v, dtype=_U)
        return ((v >> _U(16)) if high else (v & _U(0xFFFF))) << _U(16), t

    return read


def _f2fp_fp8(ins: Instruction, fmt: str) -> Step:
    """``F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C d, a, b, c`` (PTX's
    ``cvt.rn.satfinite.e4m3x2.f32 d, a, b``; ``.E5M2`` alike): a's byte above b's in the low
    16 bits of d; ``F2FP.SATFINITE.E4M3.F16.UNPACK_B_MERGE_C d, a, c`` converts a's two
    halves (``cvt.rn.satfinite.e4m3x2.f16x2``), the high half to the high byte."""
    ops = ins.operands
    pack = "PACK_AB_MERGE_C" in ins.mods
    if "SATFINITE" not in ins.mods or len(ops) != (4 if pack else 3):
        raise unsupported(ins)
    if pack and "F32" not in ins.mods or not pack and "F16" not in ins.mods:
        raise unsupported(ins, "an 8-bit float pair from F32 values or from F16 halves")
    w = write_u32(ops[0], ins)
    merge = _merge_c(ins, ops[-1])
    relu = "RELU" in ins.mods
    if pack:
        ra, rb = read_u32(ops[1], "f", ins), read_u32(ops[2], "f", ins)
    else:
        rh = read_u32(ops[1], "h", ins)

    def step(b: Block, ix: Idx) -> None:
        if pack:
            (x, tx), (y, ty) = ra(b, ix), rb(b, ix)
            hi, lo, t = as_f32(x).astype(np.float64), as_f32(y).astype(np.float64), tx | ty
        else:
            v, t = rh(b, ix)
            u = np.asarray(v, dtype=_U)
            lo = (u & _U(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
            hi = (u >> _U(16)).astype(np.uint16).view(np.float16).astype(np.float64)
        c, tc = merge(b, ix)
        r = c | (fp8_bits(hi, fmt, relu) << _U(8)) | fp8_bits(lo, fmt, relu)
        w(b, ix, spread(np.asarray(r, dtype=_U), b.count(ix)), t | tc)

    return step


@op("F2FP")
def _f2fp(ins: Instruction, ctx: Context) -> Step:
    """Floats to half, bf16 or tf32 (fp8: :func:`_f2fp_fp8`), each rounded once in the
    instruction's mode (:func:`.half_round.round_half`); ``.RELU`` makes a negative value and
    -0 +0, ``.SATFINITE`` an infinity or a magnitude past the largest finite value the
    largest of its sign; a NaN is the canonical 0x7fff (tf32: 0x7fffe000). ``PACK_AB d, a,
    b`` (``cvt.rn.f16x2.f32 d, a, b``): a's above b's; ``MERGE_C d, a, c`` (``cvt.rn.satfinite
    .bf16.f32``, one value): a's in the low 16 bits under c's half (:func:`_merge_c`);
    ``TF32.F32.PACK_B d, a`` (``cvt.rn.tf32.f32``, sm_90): the 32 bits, the low 13 zero.
    sm_80's forms name no ``F32`` and no ``F16`` (``F2FP.SATFINITE.PACK_AB``: to half)."""
    ops = ins.operands
    fmt = next((m for m in ins.mods if m in ("E5M2", "E4M3")), None)
    if "UNPACK_B" in ins.mods:
        return _f2fp_unpack(ins)
    if fmt is not None:
        return _f2fp_fp8(ins, fmt)
    form = next((m for m in ("PACK_AB", "MERGE_C", "PACK_B") if m in ins.mods), "")
    typ = "TF32" if "TF32" in ins.mods else "BF16" if "BF16" in ins.mods else "F16"
    arity = {"PACK_AB": 3, "MERGE_C": 3, "PACK_B": 2}.get(form, 0)
    if len(ops) != arity or (form == "PACK_B") != (typ == "TF32"):
        raise unsupported(ins)
    mode, relu, sat = rounding_mode(ins), "RELU" in ins.mods, "SATFINITE" in ins.mods
    nan = NAN_TF32 if typ == "TF32" else NAN16  # a NaN of any payload, in every mode
    w = write_u32(ops[0], ins)
    ra = read_u32(ops[1], "f", ins)
    rb: Any = None  # PACK_B converts one value
    if form == "PACK_AB":
        rb = read_u32(ops[2], "f", ins)
    elif form == "MERGE_C":
        rb = _merge_c(ins, ops[2])

    def narrow(v: Any) -> Any:
        f = as_f32(v)
        if relu:  # cvt's .relu (CUTLASS's ReLU epilogue): below 0, and -0, is +0; NaN stays
            f = np.where(f <= 0, np.float32(0), f)
        return np.where(np.isnan(f), nan, round_half(f, typ, mode, sat)).astype(_U)

    def step(b: Block, ix: Idx) -> None:
        x, tx = ra(b, ix)
        r = narrow(x)
        if rb is not None:  # PACK_AB: b's below a's; MERGE_C: c's half above a's
            y, ty = rb(b, ix)
            r = (r << _U(16)) | narrow(y) if form == "PACK_AB" else r | y
            tx = tx | ty
        w(b, ix, spread(np.asarray(r, dtype=_U), b.count(ix)), tx)

    return step
