"""Floating-point instructions: float32, half2, float64, conversions and MUFU.

Arithmetic is computed in float64 and rounded once to float32 with the
instruction's rounding mode (the product of two float32 is exact in float64, so
FADD/FMUL are exact and FFMA rounds twice only in rare ties). MUFU functions are
computed correctly rounded; the hardware approximates them within about 1 ulp, so
their last bits may differ.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from .decode import Context, Step, op, unsupported
from .operands import read_pred, read_u32, read_u64, write_pred, write_u32, write_u64
from .sass import Imm, Instruction, Operand
from .state import Block, Idx

_U = np.uint32
_ROUND = ("RN", "RZ", "RM", "RP")


def as_f32(v: Any) -> Any:
    return v.view(np.float32) if v.dtype == _U else np.asarray(v, dtype=_U).view(np.float32)


def round_f32(x: Any, mode: str) -> Any:
    """float64 values rounded to float32 bits (uint32) with rounding mode RN/RZ/RM/RP."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
        if mode != "RN":
            back = f.astype(np.float64)
            if mode == "RZ":
                fix = np.abs(back) > np.abs(x)
                f = np.where(fix, np.nextafter(f, np.float32(0)), f)
            elif mode == "RM":
                f = np.where(back > x, np.nextafter(f, np.float32(-np.inf)), f)
            else:
                f = np.where(back < x, np.nextafter(f, np.float32(np.inf)), f)
    return np.asarray(f, dtype=np.float32).view(_U)


def _mode(ins: Instruction) -> str:
    return next((m for m in ins.mods if m in _ROUND), "RN")


def _sat(ins: Instruction, x: Any) -> Any:
    return np.clip(x, 0.0, 1.0) if "SAT" in ins.mods else x


def _srcs32(
    ins: Instruction, ops: tuple[Operand, ...] | list[Operand], mode: str = "f"
) -> list[Any]:
    return [read_u32(o, mode, ins) for o in ops]


@op("FADD", "FMUL", "FFMA", "FMNMX", "FADD32I", "FMUL32I", "FFMA32I")
def _farith(ins: Instruction, ctx: Context) -> Step:
    kind = ins.opcode.replace("32I", "")
    ops = ins.operands
    want = {"FADD": 3, "FMUL": 3, "FFMA": 4, "FMNMX": 4}[kind]
    if len(ops) != want:
        raise unsupported(ins)
    w = write_u32(ops[0], ins)
    mode = _mode(ins)
    if kind == "FMNMX":
        ra, rb = _srcs32(ins, ops[1:3])
        rp = read_pred(ops[3], ins)

        def mnmx(b: Block, ix: Idx) -> None:
            (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
            fx, fy = as_f32(x), as_f32(y)
            r = np.where(p, np.fmin(fx, fy), np.fmax(fx, fy)).astype(np.float32)
            w(b, ix, np.broadcast_to(r.view(_U), (b.count(ix),)), tx | ty | tp)

        return mnmx
    readers = _srcs32(ins, ops[1:])
    plain = mode == "RN" and "SAT" not in ins.mods
    if kind == "FFMA" and plain:
        ra, rb, rc = readers
        f64 = np.float64

        def ffma(b: Block, ix: Idx) -> None:
            # the float32 product is exact in float64; the sum rounds there, then to float32
            (x, tx), (y, ty), (z, tz) = ra(b, ix), rb(b, ix), rc(b, ix)
            r = as_f32(x).astype(f64) * as_f32(y) + as_f32(z)
            v = r.astype(np.float32).view(_U)
            if v.shape != (b.count(ix),):
                v = np.broadcast_to(v, (b.count(ix),))
            w(b, ix, v, tx | ty | tz)

        return ffma

    def step(b: Block, ix: Idx) -> None:
        vals = [r(b, ix) for r in readers]
        f = [as_f32(v).astype(np.float64) for v, _ in vals]
        t: Any = 0
        for _, tt in vals:
            t = t | tt
        if kind == "FADD":
            x = f[0] + f[1]
        elif kind == "FMUL":
            x = f[0] * f[1]
        else:
            x = f[0] * f[1] + f[2]
        w(b, ix, np.broadcast_to(round_f32(_sat(ins, x), mode), (b.count(ix),)), t)

    return step


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
_BOOL = {"AND": np.logical_and, "OR": np.logical_or, "XOR": np.logical_xor}


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


def _fcmp_name(ins: Instruction) -> str:
    for m in ins.mods:
        if m in _FCMP or (m.endswith("U") and m[:-1] in _FCMP) or m in ("T", "F"):
            return m
    raise unsupported(ins, "no comparison")


@op("FSETP", "DSETP")
def _fsetp(ins: Instruction, ctx: Context) -> Step:
    name = _fcmp_name(ins)
    bop = next((m for m in ins.mods if m in _BOOL), "AND")
    ops = ins.operands
    if len(ops) != 5:
        raise unsupported(ins)
    w1, w2 = write_pred(ops[0], ins), write_pred(ops[1], ins)
    dbl = ins.opcode == "DSETP"
    if dbl:
        ra, rb = read_u64(ops[2], ins, "d"), read_u64(ops[3], ins, "d")
    else:
        ra, rb = read_u32(ops[2], "f", ins), read_u32(ops[3], "f", ins)
    rp = read_pred(ops[4], ins)
    comb = _BOOL[bop]

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        fx = np.asarray(x).view(np.float64) if dbl else as_f32(x)
        fy = np.asarray(y).view(np.float64) if dbl else as_f32(y)
        r = float_compare(name, fx, fy)
        t = tx | ty | tp
        w1(b, ix, comb(r, p), t)
        w2(b, ix, comb(~r, p), t)

    return step


@op("FSET")
def _fset(ins: Instruction, ctx: Context) -> Step:
    name = _fcmp_name(ins)
    bop = next((m for m in ins.mods if m in _BOOL), "AND")
    ops = ins.operands
    if len(ops) != 4:
        raise unsupported(ins)
    w = write_u32(ops[0], ins)
    ra, rb = read_u32(ops[1], "f", ins), read_u32(ops[2], "f", ins)
    rp = read_pred(ops[3], ins)
    as_float = "BF" in ins.mods

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        r = _BOOL[bop](float_compare(name, as_f32(x), as_f32(y)), p)
        one = np.uint32(0x3F800000) if as_float else np.uint32(0xFFFFFFFF)
        w(b, ix, np.broadcast_to(np.where(r, one, np.uint32(0)), (b.count(ix),)), tx | ty | tp)

    return step


@op("FCHK")
def _fchk(ins: Instruction, ctx: Context) -> Step:
    """True when a/b needs the slow path: special or tiny/huge operands or quotient."""
    ops = ins.operands
    w = write_pred(ops[0], ins)
    ra, rb = read_u32(ops[1], "f", ins), read_u32(ops[2], "f", ins)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty) = ra(b, ix), rb(b, ix)
        ex = (np.asarray(x, dtype=np.int64) >> 23) & 0xFF
        ey = (np.asarray(y, dtype=np.int64) >> 23) & 0xFF
        bad = (ey == 0) | (ey == 255) | (ex == 255) | (ey >= 253)
        bad |= (ex != 0) & ((ex - ey > 125) | (ex - ey < -125) | (ex <= 24))
        w(b, ix, np.broadcast_to(bad, (b.count(ix),)), tx | ty)

    return step


_MUFU: dict[str, Callable[[Any], Any]] = {
    "RCP": lambda x: 1.0 / x,
    "RSQ": lambda x: 1.0 / np.sqrt(x),
    "SQRT": np.sqrt,
    "EX2": np.exp2,
    "LG2": np.log2,
    "SIN": np.sin,
    "COS": np.cos,
    "TANH": np.tanh,
}


@op("MUFU")
def _mufu(ins: Instruction, ctx: Context) -> Step:
    fn_name = next((m for m in ins.mods if m in _MUFU or m in ("RCP64H", "RSQ64H")), None)
    if fn_name is None:
        raise unsupported(ins)
    w = write_u32(ins.operands[0], ins)
    ra = read_u32(ins.operands[1], "f", ins)
    if fn_name in ("RCP64H", "RSQ64H"):
        fn64 = _MUFU[fn_name[:3]]

        def step64(b: Block, ix: Idx) -> None:
            v, t = ra(b, ix)
            d = (np.asarray(v, dtype=np.uint64) << np.uint64(32)).view(np.float64)
            with np.errstate(all="ignore"):
                r = np.asarray(fn64(d), dtype=np.float64).view(np.uint64) >> np.uint64(32)
            w(b, ix, np.broadcast_to(r.astype(_U), (b.count(ix),)), t)

        return step64
    fn = _MUFU[fn_name]

    def step(b: Block, ix: Idx) -> None:
        v, t = ra(b, ix)
        with np.errstate(all="ignore"):
            r = fn(as_f32(v).astype(np.float64))
        w(b, ix, np.broadcast_to(round_f32(r, "RN"), (b.count(ix),)), t)

    return step


# --- conversions ------------------------------------------------------------------------

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


def _read_int(ins: Instruction, opnd: Operand, typ: str) -> Any:
    bits, signed = _INT_TYPES[typ]
    if bits == 64:
        r64 = read_u64(opnd, ins)

        def rd64(b: Block, ix: Idx) -> tuple[Any, Any]:
            v, t = r64(b, ix)
            return (v.view(np.int64) if signed else v).astype(np.float64), t

        return rd64
    r = read_u32(opnd, "i", ins)

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


def _write_float(ins: Instruction, opnd: Operand, typ: str, mode: str) -> Any:
    if typ == "F64":
        w64 = write_u64(opnd, ins)
        return lambda b, ix, x, t: w64(b, ix, np.asarray(x, dtype=np.float64).view(np.uint64), t)
    w = write_u32(opnd, ins)
    if typ == "F16":
        return lambda b, ix, x, t: w(
            b, ix, np.asarray(x, dtype=np.float16).view(np.uint16).astype(_U), t
        )
    if typ == "BF16":
        return lambda b, ix, x, t: w(b, ix, bf16_bits(x).astype(_U), t)
    return lambda b, ix, x, t: w(b, ix, round_f32(x, mode), t)


def bf16_bits(x: Any) -> Any:
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    return (rounded & np.uint64(0xFFFF)).astype(np.uint32)


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
    rd = _read_int(ins, ins.operands[1], src)
    wr = _write_float(ins, ins.operands[0], dst, _mode(ins))

    def step(b: Block, ix: Idx) -> None:
        x, t = rd(b, ix)
        wr(b, ix, np.broadcast_to(x, (b.count(ix),)), t)

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
        w(b, ix, np.broadcast_to(v, (b.count(ix),)), t)

    return step


@op("F2F")
def _f2f(ins: Instruction, ctx: Context) -> Step:
    dst, src = _types(ins, "F32", "F32")
    rd = _read_float(ins, ins.operands[1], src)
    wr = _write_float(ins, ins.operands[0], dst, _mode(ins))

    def step(b: Block, ix: Idx) -> None:
        x, t = rd(b, ix)
        if any(m in ins.mods for m in ("TRUNC", "FLOOR", "CEIL")):
            x = _round_int(x, ins)
        wr(b, ix, np.broadcast_to(x, (b.count(ix),)), t)

    return step


@op("FRND")
def _frnd(ins: Instruction, ctx: Context) -> Step:
    typ = "F64" if "F64" in ins.mods else "F32"
    rd = _read_float(ins, ins.operands[1], typ)
    wr = _write_float(ins, ins.operands[0], typ, "RN")

    def step(b: Block, ix: Idx) -> None:
        x, t = rd(b, ix)
        wr(b, ix, np.broadcast_to(_round_int(x, ins), (b.count(ix),)), t)

    return step


@op("I2I", "I2IP")
def _i2i(ins: Instruction, ctx: Context) -> Step:
    dst, src = _types(ins, "S32", "S32")
    rd = _read_int(ins, ins.operands[1], src)
    bits, signed = _INT_TYPES[dst]
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    w = write_u32(ins.operands[0], ins)
    sat = "SAT" in ins.mods or True

    def step(b: Block, ix: Idx) -> None:
        x, t = rd(b, ix)
        r = np.clip(x, lo, hi) if sat else x
        w(b, ix, np.broadcast_to((r.astype(np.int64) & 0xFFFFFFFF).astype(_U), (b.count(ix),)), t)

    return step


@op("F2FP")
def _f2fp(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if "PACK_AB" not in ins.mods or len(ops) != 3:
        raise unsupported(ins)
    bf = "BF16" in ins.mods
    w = write_u32(ops[0], ins)
    ra, rb = read_u32(ops[1], "f", ins), read_u32(ops[2], "f", ins)

    def half(v: Any) -> Any:
        f = as_f32(v)
        return bf16_bits(f) if bf else np.asarray(f, dtype=np.float16).view(np.uint16).astype(_U)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty) = ra(b, ix), rb(b, ix)
        r = (half(x) << np.uint32(16)) | half(y)
        w(b, ix, np.broadcast_to(r.astype(_U), (b.count(ix),)), tx | ty)

    return step


# --- half2 ------------------------------------------------------------------------------


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


def _h2(v: Any) -> Any:
    """uint32 -> (n, 2) float32 halves (low, high)."""
    v = np.asarray(v, dtype=_U)
    lo = (v & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float32)
    hi = (v >> np.uint32(16)).astype(np.uint16).view(np.float16).astype(np.float32)
    return lo, hi


def _pack_h2(lo: Any, hi: Any) -> Any:
    lo16 = np.asarray(lo, dtype=np.float16).view(np.uint16).astype(_U)
    hi16 = np.asarray(hi, dtype=np.float16).view(np.uint16).astype(_U)
    return lo16 | (hi16 << np.uint32(16))


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
            res.append(r)
        out = np.asarray(res[0], dtype=np.float32).view(_U) if f32_out else _pack_h2(*res)
        w(b, ix, np.broadcast_to(out, (b.count(ix),)), t)

    return step


@op("HSETP2")
def _hsetp2(ins: Instruction, ctx: Context) -> Step:
    name = _fcmp_name(ins)
    bop = next((m for m in ins.mods if m in _BOOL), "AND")
    ops = _half_operands(ins)
    if len(ops) != 5:
        raise unsupported(ins)
    w1, w2 = write_pred(ops[0], ins), write_pred(ops[1], ins)
    ra, rb = read_u32(ops[2], "h", ins), read_u32(ops[3], "h", ins)
    rp = read_pred(ops[4], ins)
    comb = _BOOL[bop]

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        (xl, xh), (yl, yh) = _h2(x), _h2(y)
        t = tx | ty | tp
        w1(b, ix, comb(float_compare(name, xl, yl), p), t)
        w2(b, ix, comb(float_compare(name, xh, yh), p), t)

    return step


# --- float64 ----------------------------------------------------------------------------


def fma64(a: Any, b: Any, c: Any) -> Any:
    """a * b + c rounded once, element by element (exact rationals where all are finite)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64), c)
    out = a * b + c
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & np.isfinite(out)
    flat = out.reshape(-1)
    for k in np.flatnonzero(finite.reshape(-1)):
        exact = Fraction(float(a.flat[k])) * Fraction(float(b.flat[k])) + Fraction(float(c.flat[k]))
        flat[k] = float(exact) if exact != 0 else flat[k]
    return out


@op("DADD", "DMUL", "DFMA", "DMNMX")
def _double(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    kind = ins.opcode
    w = write_u64(ops[0], ins)
    n_src = 3 if kind == "DFMA" else 2
    readers = [read_u64(o, ins, "d") for o in ops[1 : 1 + n_src]]
    rp = read_pred(ops[3], ins) if kind == "DMNMX" else None

    def step(b: Block, ix: Idx) -> None:
        vals = [r(b, ix) for r in readers]
        f = [np.asarray(v).view(np.float64) for v, _ in vals]
        t: Any = 0
        for _, tt in vals:
            t = t | tt
        with np.errstate(all="ignore"):
            if kind == "DADD":
                x = f[0] + f[1]
            elif kind == "DMUL":
                x = f[0] * f[1]
            elif kind == "DFMA":
                x = fma64(f[0], f[1], f[2])
            else:
                assert rp is not None
                p, tp = rp(b, ix)
                t = t | tp
                x = np.where(p, np.fmin(f[0], f[1]), np.fmax(f[0], f[1]))
        w(
            b,
            ix,
            np.broadcast_to(np.asarray(x, dtype=np.float64).view(np.uint64), (b.count(ix),)),
            t,
        )

    return step
