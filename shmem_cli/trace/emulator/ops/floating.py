"""Floating-point arithmetic: float32 (add, multiply, fused multiply-add, min/max, MUFU)
and float64; their compares are :mod:`.float_compare`'s.

Arithmetic is computed in float64 and rounded once to float32 with the instruction's
rounding mode: the product of two float32 is exact in float64, and a sum carries what float64
lost (TwoSum) wherever a mode, ``.SAT`` or ``.FTZ`` is named (:func:`round_exact_f32`); the
plain FFMA takes that path only where its float64 sum could have rounded onto a float32
tie. MUFU's functions are the H200's own approximations, bit for bit (:mod:`..mufu`); half2
in :mod:`.half`, conversions between number types in :mod:`.convert`.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Const, Imm, Operand, Reg
from ....hardware import nans
from ...distinct_rows import spread
from .. import mufu
from ..op_table import Context, Step, op, unsupported
from ..operands import read_pred, read_u32, read_u64, write_u32, write_u64
from ..state import PT, Block, Idx

_U = np.uint32
_ROUND = ("RN", "RZ", "RM", "RP")


def as_f32(v: Any) -> Any:
    return v.view(np.float32) if v.dtype == _U else np.asarray(v, dtype=_U).view(np.float32)


# The NaNs the GPU writes, whatever NaN went in (payload and sign dropped): every float32
# result of FADD, FMUL, FFMA, FRND, F2F (but from double: hardware.nans) and MUFU, and every
# half or bf16 result of the packed arithmetic and of F2FP/F2F, as the H200 computed them
# (tests/data/trace/opcodes' half_ops, opcodes_tri's ceil, sqrt_rn, sin and rtz casts).
# FMNMX.NAN writes the same float32 NaN (PTX's min.NaN/max.NaN).
NAN32 = _U(mufu.NAN)
NAN16 = _U(0x7FFF)
#: tf32's NaN (F2FP.TF32.F32.PACK_B): float32's, its low 13 bits cleared as every tf32 value's
#: (an H100, tests/data/trace/f2fp_sat)
NAN_TF32 = _U(0x7FFFE000)


def canonical_nan32(x: Any, bits: Any) -> Any:
    """float32 ``bits`` of the values ``x``, with :data:`NAN32` wherever ``x`` is a NaN."""
    nan = np.isnan(x)
    if isinstance(bits, np.ndarray) and bits.dtype == _U and not np.count_nonzero(nan):
        return bits  # no NaN: uint32 bits as they are
    return np.where(nan, NAN32, bits).astype(_U)


def canonical_nan16(x: Any, bits: Any) -> Any:
    """16-bit ``bits`` (as uint32) of the values ``x``, :data:`NAN16` wherever ``x`` is a NaN."""
    return np.where(np.isnan(x), NAN16, bits).astype(_U)


def round_f32(x: Any, mode: str) -> Any:
    """float64 values rounded to float32 bits (uint32) with rounding mode RN/RZ/RM/RP; a NaN
    becomes :data:`NAN32`."""
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
    return canonical_nan32(x, np.asarray(f, dtype=np.float32).view(_U))


_TINY = np.float32(2.0**-126)  # the smallest normal float32


def flush(f: Any) -> Any:
    """float32 values with every denormal replaced by a zero of its sign (``.FTZ``)."""
    f = np.asarray(f, dtype=np.float32)
    return np.where(np.abs(f) < _TINY, np.copysign(np.float32(0), f), f).astype(np.float32)


def rounding_mode(ins: Instruction) -> str:
    """The rounding mode an instruction names (RN when it names none)."""
    return next((m for m in ins.mods if m in _ROUND), "RN")


def below(x: Any, y: Any) -> Any:
    """Where ``x`` is below ``y`` in the order of the GPU's minimum and maximum: the numbers'
    order with -0 below +0 (a NaN is below nothing and nothing is below it). Measured on the
    H200: HMNMX2.BF16_V2 and DSETP.MIN/.MAX on -0 and +0 (tests/data/trace/opcodes_cuda's
    ``bf16_ops`` and ``double_min_max``)."""
    with np.errstate(invalid="ignore"):
        return (x < y) | ((x == y) & np.signbit(x) & ~np.signbit(y))


def takes_second(x: Any, y: Any, smaller: Any) -> Any:
    """Where the minimum (``smaller``) or maximum of ``x`` and ``y`` is ``y``: ``y`` is
    below (above) ``x``, or ``x`` is a NaN and ``y`` a number (a NaN loses to a number; of
    two NaNs, ``x``). The result is one of the two, bit for bit."""
    if np.ndim(smaller) == 0:  # one choice for all (PT): only its side is compared
        second = below(y, x) if smaller else below(x, y)
    else:
        second = np.where(smaller, below(y, x), below(x, y))
    return second | (np.isnan(x) & ~np.isnan(y))


def minimum_maximum(x: Any, y: Any, smaller: Any) -> Any:
    """The minimum of ``x`` and ``y`` where ``smaller`` holds, else their maximum; of two NaNs
    all bits but the sign set (H200: FMNMX, the TMA reductions; tests/data/trace/probes)."""
    r = np.where(takes_second(x, y, smaller), y, x)
    bits = np.dtype(f"u{r.dtype.itemsize}")
    nan = np.array(np.iinfo(bits).max >> 1, dtype=bits).view(r.dtype)
    return np.where(np.isnan(x) & np.isnan(y), nan, r)


def two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``a + b`` in float64 and what that rounding lost (Knuth's TwoSum; 0 past the finite)."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = a + b
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(e), e, 0.0)


def round_exact_f32(s: Any, e: Any, mode: str, ftz: bool) -> Any:
    """float32 bits of the exact ``s + e`` (:func:`two_sum`'s pair) rounded once, as the H200
    rounds FADD/FMUL/FFMA; ``.FTZ`` flushes what is tiny after rounding to 24 bits with no bound
    on the exponent (IEEE 754's tininess after rounding; tests/data/trace/probes' ftz_edges)."""
    f = np.asarray(round_f32(s, mode)).view(np.float32)
    g, beyond = f.astype(np.float64), (e != 0) & (np.signbit(e) != np.signbit(s))
    with np.errstate(invalid="ignore", over="ignore"):
        if mode == "RN":  # halfway between f and o: o where e points to it
            o = np.nextafter(f, np.where(s > g, np.float32(np.inf), np.float32(-np.inf)))
            step = (e != 0) & (s == (g + o.astype(np.float64)) / 2) & ((e > 0) == (o > f))
        else:  # on the grid: one point down (toward zero for RZ) where e points there
            o = np.nextafter(f, np.where(e > 0, np.float32(np.inf), np.float32(-np.inf)))
            step = (g == s) & ((e < 0) if mode == "RM" else beyond if mode == "RZ" else (e > 0))
    r = np.where(step, o, f).astype(np.float32).view(_U)
    if ftz:  # scaled by 2^64 (exactly), the 24-bit rounding is a normal float32's
        big = round_exact_f32(s * 2.0**64, e * 2.0**64, mode, False).view(np.float32)
        tiny = (s != 0) & (np.abs(big) < np.float32(2.0**-62))
        r = np.where(tiny, np.where(s < 0, _U(0x80000000), _U(0)), r).astype(_U)
    return r


_LOW29, _HALF29 = np.uint64((1 << 29) - 1), np.uint64(1 << 28)
_ABS, _ONE = np.uint64((1 << 63) - 1), np.uint64(1)
_TINY_BITS = np.float64(2.0**-126).view(np.uint64)  # the smallest normal float32, as float64
_TINY_F64 = np.float64(2.0**-126)


def _halfway(r: Any) -> Any:
    """Where a float64 value of ``r`` could be a float32 tie that float64 rounded onto (the 29
    bits float32 drops exactly one half), or is nonzero below the smallest normal float32
    (where float32 drops more): only there does rounding twice differ from once."""
    bits = np.asarray(r, dtype=np.float64).view(np.uint64)
    return ((bits & _LOW29) == _HALF29) | ((bits & _ABS) - _ONE < _TINY_BITS - _ONE)


def _maybe_halfway(r: Any) -> bool:
    """Whether some value of ``r`` is one :func:`_halfway` names."""
    return bool(np.count_nonzero(_halfway(r)))


def _exact_at(r: Any, p: Any, c: Any, v: Any) -> Any:
    """``v`` (the float32 bits cast from the float64 sums ``r`` of the exact products ``p``
    and the float32 addends ``c``) with the lanes :func:`_halfway` names rounded
    exactly (:func:`round_exact_f32`): elsewhere the exact rounding is the cast (no tie to
    round twice onto), so only those lanes are made (a batch of many blocks has a few)."""
    if np.ndim(r) != 1 or np.ndim(v) != 1:
        return round_exact_f32(*two_sum(p, np.asarray(c, dtype=np.float64)), "RN", False)
    at = np.flatnonzero(_halfway(r))
    pp = np.broadcast_to(p, r.shape)[at]
    cc = np.broadcast_to(np.asarray(c, dtype=np.float64), r.shape)[at]
    v[at] = round_exact_f32(*two_sum(pp, cc), "RN", False)
    return v


_ODD: dict[tuple[int, ...], tuple[Any, ...]] = {}  # plain's constants, per shape
_U64 = np.dtype(np.uint64)


def _plain_bits(r: Any) -> Any:
    """float32 bits of the float64 results ``r``, or None where one of them needs more than
    a cast: a NaN (:func:`canonical_nan32`), or :func:`_maybe_halfway`'s tie or tiny value
    (:func:`plain`)."""
    return r.astype(np.float32).view(_U) if plain(r) else None


def plain(r: Any, bits: Any = None) -> bool:
    """Whether the float64 results ``r`` (one dimension; ``bits``: their view as uint64,
    where the caller keeps one) round to float32 by a cast: the same tests as
    :func:`canonical_nan32`'s and :func:`_maybe_halfway`'s, counted on arrays of constants
    made once per shape (a NumPy scalar operand costs twice an array's on a warp): no tie,
    and every value at least the smallest normal float32 in magnitude or else a zero (what
    is neither is tiny or a NaN), a fused FFMA's common case in six NumPy calls."""
    c = _ODD.get(r.shape)
    if c is None:
        if r.ndim != 1:
            return False
        n = r.shape[0]
        c = _ODD[r.shape] = (
            np.full(n, _LOW29), np.full(n, _HALF29), np.full(n, _TINY_F64), np.zeros(n)
        )  # fmt: skip
    if np.count_nonzero(np.bitwise_and(r.view(_U64) if bits is None else bits, c[0]) == c[1]):
        return False  # a tie
    normal = np.count_nonzero(np.abs(r) >= c[2])  # false for a zero, a tiny value, a NaN
    return bool(normal == r.size or normal + np.count_nonzero(r == c[3]) == r.size)


def _fmnmx_fixed(ra: Any, rb: Any, w: Any, smaller: bool, general: Step) -> Step:
    """FMNMX with PT or !PT (no modifier): np.fmin or np.fmax (a NaN loses to a number, as
    :func:`minimum_maximum`'s), the lanes where both are zeros the sum that orders -0 below
    +0 (max: x + y; min: -(-x - y)); where both are NaNs (the NaN it writes) the own step."""
    pick = np.fmin if smaller else np.fmax

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty) = ra(b, ix), rb(b, ix)
        fx, fy = np.asarray(as_f32(x)), np.asarray(as_f32(y))
        r = pick(fx, fy)
        if np.count_nonzero(r != r):
            general(b, ix)
            return
        if np.count_nonzero(r == 0):
            zeros = (fx == 0) & (fy == 0)
            r = np.where(zeros, -(-fx - fy) if smaller else fx + fy, r)
        w(b, ix, spread(np.asarray(r, dtype=np.float32).view(_U), b.count(ix)), tx | ty)

    return step


def _sat(ins: Instruction, x: Any) -> Any:  # PTX's .sat: [0, 1], a NaN +0
    return np.nan_to_num(np.clip(x, 0.0, 1.0), nan=0.0) if "SAT" in ins.mods else x


def _without_abs(o: Operand, ins: Instruction) -> Any:
    """A reader of the operand's bits before its ``|.|`` (its sign, for ``.XORSIGN``)."""
    if isinstance(o, (Reg, Const)) and not o.neg:
        return read_u32(replace(o, abs=False), "f", ins)
    if isinstance(o, Imm) and not o.abs:
        return read_u32(o, "f", ins)
    raise unsupported(ins, "a negated operand of .XORSIGN")


@op("FADD", "FMUL", "FFMA", "FMNMX")
def _farith(ins: Instruction, ctx: Context) -> Step:
    kind = ins.opcode
    ops = ins.operands
    if len(ops) != {"FADD": 3, "FMUL": 3, "FFMA": 4, "FMNMX": 4}[kind]:
        raise unsupported(ins)
    w = write_u32(ops[0], ins)
    mode = rounding_mode(ins)
    if kind == "FMNMX":
        if set(ins.mods) - {"FTZ", "NAN", "XORSIGN"}:
            raise unsupported(ins)
        ra, rb = (read_u32(o, "f", ins) for o in ops[1:3])
        rp = read_pred(ops[3], ins)
        nan = "NAN" in ins.mods  # PTX's min.NaN/max.NaN: a NaN in, the canonical NaN out
        cast = flush if "FTZ" in ins.mods else np.asarray  # .FTZ: denormals are signed zeros
        # PTX's min.xorsign.abs (Triton's clamp): the magnitude of |a| and |b|'s minimum,
        # the sign the XOR of a's and b's own signs (the operands as read before their |.|)
        signs = [_without_abs(o, ins) for o in ops[1:3]] if "XORSIGN" in ins.mods else None

        def mnmx(b: Block, ix: Idx) -> None:
            (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
            fx, fy = cast(as_f32(x)), cast(as_f32(y))
            r = minimum_maximum(fx, fy, p).astype(np.float32).view(_U)
            if nan:
                r = np.where(np.isnan(fx) | np.isnan(fy), NAN32, r)
            if signs is not None:
                (sx, _), (sy, _) = signs[0](b, ix), signs[1](b, ix)
                flip = (np.asarray(sx, dtype=_U) ^ np.asarray(sy, dtype=_U)) & _U(0x80000000)
                number = ~np.isnan(r.view(np.float32))  # a NaN result keeps its sign
                r = np.where(number, (r & _U(0x7FFFFFFF)) | flip, r).astype(_U)
            w(b, ix, spread(r, b.count(ix)), tx | ty | tp)

        c = ops[3]
        if ins.mods or not (isinstance(c, Reg) and c.index == PT):
            return mnmx
        return _fmnmx_fixed(ra, rb, w, not c.not_, mnmx)
    readers = [read_u32(o, "f", ins) for o in ops[1:]]
    ftz = "FTZ" in ins.mods  # denormal sources and results are zeros of their sign
    plain = mode == "RN" and "SAT" not in ins.mods and not ftz
    if plain:  # a product is exact in float64, a sum rounds there, then both to float32
        ra, rb = readers[0], readers[1]
        rc = readers[2] if kind == "FFMA" else None

        def fast(b: Block, ix: Idx) -> None:
            # uint32 bits viewed as float32, each widened exactly by the ufunc; float
            # exceptions are values (execute runs every block under np.errstate(all="ignore"))
            (x, tx), (y, ty) = ra(b, ix), rb(b, ix)
            if kind == "FADD":
                p, c = x.view(np.float32).astype(np.float64), y.view(np.float32)
            else:
                p = np.multiply(x.view(np.float32), y.view(np.float32), dtype=np.float64)
                c = None  # (a product is exact in float64)
                if rc is not None:
                    z, tz = rc(b, ix)
                    c, ty = z.view(np.float32), ty | tz
            r = p if c is None else p + c
            v = _plain_bits(r)  # (a value per thread: r has the threads' shape)
            if v is None:  # a NaN, or rare: the sum may have rounded onto a tie
                with np.errstate(invalid="ignore", over="ignore"):
                    v = canonical_nan32(r, r.astype(np.float32).view(_U))
                if c is not None and _maybe_halfway(r):
                    v = _exact_at(r, p, c, v)
                v = spread(v, b.count(ix))
            w(b, ix, v, tx | ty)

        return fast

    def step(b: Block, ix: Idx) -> None:
        vals = [r(b, ix) for r in readers]
        f = [(flush(as_f32(v)) if ftz else as_f32(v)).astype(np.float64) for v, _ in vals]
        t: Any = 0
        for _, tt in vals:
            t = t | tt
        a0, a1 = (f[0], f[1]) if kind == "FADD" else (f[0] * f[1], f[2] if kind == "FFMA" else 0)
        s, e = two_sum(a0, a1) if kind != "FMUL" else (a0, np.zeros_like(a0))
        zero = s == 0  # an exact zero (before .SAT's clamp to [0, 1])
        if "SAT" in ins.mods:
            out = (s < 0) | (s > 1) | (s == 0) & (e < 0) | (s == 1) & (e > 0) | np.isnan(s)
            s, e = np.where(out, _sat(ins, s), s), np.where(out, 0.0, e)
        r = round_exact_f32(s, e, mode, ftz)
        if mode == "RM" and kind != "FMUL":  # an exact zero sum is -0 unless both were +0
            plus = (a0 == 0) & (a1 == 0) & ~np.signbit(a0) & ~np.signbit(a1)
            r = np.where(zero & ~plus, _U(0x80000000), r).astype(_U)
        w(b, ix, spread(r, b.count(ix)), t)

    return step


@op("MUFU")
def _mufu(ins: Instruction, ctx: Context) -> Step:
    """``MUFU.fn d, a``: :func:`..mufu.pick`'s function of a's bits (``.F16``/``.BF16``: of
    a's low half, ``.H1`` its high one)."""
    half = bool({"F16", "BF16"} & set(ins.mods))
    fn = mufu.pick(ins.mods, "H1" in getattr(ins.operands[1], "sel", ()))
    if fn is None:
        raise unsupported(ins)
    w = write_u32(ins.operands[0], ins)
    ra = read_u32(ins.operands[1], "h" if half else "f", ins)

    def step(b: Block, ix: Idx) -> None:
        v, t = ra(b, ix)
        w(b, ix, spread(fn(v), b.count(ix)), t)

    return step


def fma64(a: Any, b: Any, c: Any, mode: str = "RN") -> Any:
    """a * b + c rounded once with ``mode`` (RN, RZ, RM, RP; exact rationals where finite,
    :func:`round64`); an exact zero sum toward minus infinity is -0 unless both addends are
    +0 (IEEE 754)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64), c)
    ab = np.isfinite(a) & np.isfinite(b)  # a finite product plus an infinity is that
    out = np.where(ab & np.isinf(c), c, a * b + c)
    flat = out.reshape(-1)
    for k in np.flatnonzero((ab & np.isfinite(c)).reshape(-1)):
        x, y, z = a.flat[k], b.flat[k], c.flat[k]
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        if exact == 0:
            plus = x * y == 0 == z and not (np.signbit(x * y) or np.signbit(z))
            flat[k] = -0.0 if mode == "RM" and not plus else flat[k]
            continue
        flat[k] = round64(exact, mode)
    return out


def round64(exact: Fraction, mode: str) -> float:
    """A nonzero rational rounded to float64 with ``mode``; past the largest finite value
    infinity, or the largest where the mode rounds toward zero from there (the H200's
    ``DMUL.RM``, ``DFMA`` of a product past it: tests/data/trace/probes2's nan_double)."""
    big = abs(exact) >= 2**1024 - 2**970  # the largest finite value and half its ulp: inf
    r = (np.inf if exact > 0 else -np.inf) if big else float(exact)  # to nearest, even
    if np.isinf(r):
        inward = mode == "RZ" or mode == ("RM" if exact > 0 else "RP")
        return float(np.copysign(np.finfo(np.float64).max, r)) if inward else r
    down = Fraction(r) > exact and (mode == "RM" or mode == "RZ" and exact > 0)
    up = Fraction(r) < exact and (mode == "RP" or mode == "RZ" and exact < 0)
    return float(np.nextafter(r, -np.inf if down else np.inf)) if down or up else r


@op("DADD", "DMUL", "DFMA")
def _double(ins: Instruction, ctx: Context) -> Step:
    """Double ``a + b``, ``a * b``, ``a * b + c`` rounded once; a NaN result as the H200
    writes it (:func:`shmem_cli.hardware.nans.double_result`)."""
    ops = ins.operands
    kind, mode = ins.opcode, rounding_mode(ins)
    w = write_u64(ops[0], ins)
    srcs = ops[1 : 4 if kind == "DFMA" else 3]
    readers = [read_u64(o, ins, "d") for o in srcs]
    plain = [read_u64(_unmodified(o), ins, "d") for o in srcs]
    order = [1, 2, 0] if kind == "DFMA" else [1, 0]  # which operand's NaN wins: b, c, a

    def step(b: Block, ix: Idx) -> None:
        vals = [r(b, ix) for r in readers]
        f = [np.asarray(v).view(np.float64) for v, _ in vals]
        t: Any = 0
        for _, tt in vals:
            t = t | tt
        with np.errstate(all="ignore"):
            if kind == "DFMA" or mode != "RN":
                y, z = (1.0, f[1]) if kind == "DADD" else (f[1], 0.0 if kind == "DMUL" else f[2])
                x = fma64(f[0], y, z, mode)
                if kind == "DMUL":  # a zero product keeps its sign
                    x = np.where(f[0] * f[1] == 0, f[0] * f[1], x)
            else:
                x = f[0] + f[1] if kind == "DADD" else f[0] * f[1]
        nan = bool(np.isnan(x).any())  # the operands' bits, without modifiers, only then
        x = nans.double_result(x, [plain[k](b, ix)[0] for k in order] if nan else [])
        w(b, ix, spread(x, b.count(ix)), t)

    return step


def _unmodified(o: Operand) -> Operand:
    """The operand without its ``-`` and ``|..|`` (what a NaN passes on)."""
    return replace(o, neg=False, abs=False) if isinstance(o, (Reg, Const)) else o
