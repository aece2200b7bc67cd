"""The CUDA intrinsics of tests/data/trace/opcodes_cuda's kernels written out in NumPy, from
their definitions in the CUDA Math API documentation (the values the H200 must give and the
emulator with it): the SIMD video functions, three-way and packed minima and maxima, the
dot products, double fmin/fmax."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

I64 = np.int64


def lanes(v: np.ndarray, bits: int, signed: bool) -> list[np.ndarray]:
    v = v.astype(np.uint32).astype(I64)
    size = 1 << bits
    out = []
    for k in range(32 // bits):
        x = (v >> (bits * k)) & (size - 1)
        out.append(np.where(x >= size // 2, x - size, x) if signed else x)
    return out


def pack(parts: list[np.ndarray], bits: int) -> np.ndarray:
    out = np.zeros(parts[0].shape, dtype=I64)
    for k, x in enumerate(parts):
        out |= (x.astype(I64) & ((1 << bits) - 1)) << (bits * k)
    return out.astype(np.uint32)


def u32(x: np.ndarray) -> np.ndarray:
    return (x.astype(I64) & 0xFFFFFFFF).astype(np.uint32)


def per_lane(bits: int, signed: bool, fn, *vs: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    return pack([fn(*xs) for xs in zip(*(lanes(v, bits, signed) for v in vs), strict=True)], bits)


def video_ops(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> list[np.ndarray]:
    """The 38 rows ``video_ops`` writes, in its order."""
    sa, sb, sc = (lanes(v, 32, True)[0] for v in (a, b, c))
    ua, ub, uc = (lanes(v, 32, False)[0] for v in (a, b, c))
    mx3 = lambda x, y, z: np.maximum(np.maximum(x, y), z)  # noqa: E731
    mn3 = lambda x, y, z: np.minimum(np.minimum(x, y), z)  # noqa: E731
    relu = lambda f: lambda *xs: np.maximum(f(*xs), 0)  # noqa: E731
    absd = lambda x, y: np.abs(x - y)  # noqa: E731
    ab8 = [np.abs(x - y) for x, y in zip(lanes(a, 8, False), lanes(b, 8, False), strict=True)]
    a16s, b8s, b8u = lanes(a, 16, True), lanes(b, 8, True), lanes(b, 8, False)
    a16u = lanes(a, 16, False)
    rows = [
        pack(ab8, 8),
        u32(sum(ab8)),
        per_lane(8, True, absd, a, b),
        per_lane(16, False, absd, a, b),
        per_lane(16, True, absd, a, b),
        u32(np.abs(sa - sb) + uc),
        u32(np.abs(ua - ub) + uc),
        u32(sum(x * y for x, y in zip(lanes(a, 8, True), b8s, strict=True)) + sc),
        u32(sum(x * y for x, y in zip(lanes(a, 8, False), b8u, strict=True)) + uc),
        u32(a16s[0] * b8s[0] + a16s[1] * b8s[1] + sc),
        u32(a16s[0] * b8s[2] + a16s[1] * b8s[3] + sc),
        u32(a16u[0] * b8u[0] + a16u[1] * b8u[1] + uc),
        u32(a16u[0] * b8u[2] + a16u[1] * b8u[3] + uc),
        u32(mx3(sa, sb, sc)),
        u32(mx3(ua, ub, uc)),
        u32(mn3(sa, sb, sc)),
        u32(mn3(ua, ub, uc)),
        u32(np.maximum(mx3(sa, sb, sc), 0)),
        u32(np.maximum(mn3(sa, sb, sc), 0)),
        per_lane(16, True, mx3, a, b, c),
        per_lane(16, True, mn3, a, b, c),
        per_lane(16, False, mx3, a, b, c),
        per_lane(16, False, mn3, a, b, c),
        per_lane(16, True, relu(mx3), a, b, c),
        per_lane(16, True, relu(mn3), a, b, c),
        u32(np.maximum(np.maximum(sa, sb), 0)),
        u32(np.maximum(np.minimum(sa, sb), 0)),
        per_lane(16, True, relu(np.maximum), a, b),
        per_lane(16, True, relu(np.minimum), a, b),
        per_lane(16, True, np.maximum, a, b),
        per_lane(16, False, np.minimum, a, b),
    ]
    wrap16 = lambda x: ((x + 0x8000) & 0xFFFF) - 0x8000  # noqa: E731
    rows.append(per_lane(16, True, lambda x, y, z: np.maximum(wrap16(x + y), z), a, b, c))
    rows.append(per_lane(16, False, lambda x, y, z: np.minimum((x + y) & 0xFFFF, z), a, b, c))
    rows.append(
        per_lane(16, True, lambda x, y, z: np.maximum(np.maximum(wrap16(x + y), z), 0), a, b, c)
    )
    rows.append(u32(np.maximum(sa, sb) + np.where(sa >= sb, 0x100000, 0)))
    rows.append(
        np.minimum(ua, ub).astype(np.uint32) ^ np.where(ua <= ub, 0x80000000, 0).astype(np.uint32)
    )
    for signed, fn, lo_bit, hi_bit in (
        (True, np.maximum, 0x10000, 1),
        (False, np.minimum, 0x20000, 2),
    ):
        xa, xb = lanes(a, 16, signed), lanes(b, 16, signed)
        res = [fn(x, y) for x, y in zip(xa, xb, strict=True)]
        lo, hi = res[0] == xa[0], res[1] == xa[1]  # pred_lo, pred_hi: the result is a's
        flags = np.where(hi, hi_bit, 0) | np.where(lo, lo_bit, 0)
        rows.append(pack(res, 16) ^ flags.astype(np.uint32))
    return rows


def wrap32(x: np.ndarray) -> np.ndarray:
    return ((x.astype(I64) + 2**31) % 2**32 - 2**31).astype(I64)


def jump_table(x: np.ndarray, n: int) -> np.ndarray:
    """``jump_table``'s two switches, in Python integers (int32 wrapping)."""
    out = []
    xs = x.astype(I64).tolist()
    for t, v in enumerate(xs):
        case = v & 7
        r = [v * 3, v ^ 77, v + 100, v >> 2, -v, v * v, v | 0x100, v - 9][case]
        r = int(wrap32(np.array(r)))
        for k in range(n):
            c = int(np.fmod(v + k, 6))  # C's % truncates toward zero
            if c == 0:
                r += 1
            elif c == 1:
                r *= 3
            elif c == 2:
                r ^= k
            elif c == 3:
                r -= 5
            elif c == 4:
                r <<= 1
            else:
                r -= xs[(t + k) & 63]
            r = int(wrap32(np.array(r)))
        out.append(r)
    return np.array(out, dtype=I64).astype(np.int32)


def _warps(mask: np.ndarray) -> list[np.ndarray]:
    """The lanes of each 32-lane warp where ``mask`` holds."""
    return [np.nonzero(mask[w : w + 32])[0] + w for w in range(0, len(mask), 32)]


def warp_ops(x: np.ndarray, wide: np.ndarray) -> np.ndarray:
    """The 768 words ``warp_ops`` writes (rows of 64, 12 rows)."""
    out = np.zeros((12, 64), dtype=np.uint32)
    sx, ux = x.view(np.int32).astype(I64), x.astype(I64)

    def match_any(v: np.ndarray, lanes: np.ndarray) -> np.ndarray:
        bits = {t: sum(1 << (u % 32) for u in lanes if v[u] == v[t]) for t in lanes}
        return np.array([bits[t] for t in lanes], dtype=np.uint32)

    def match_all(v: np.ndarray, lanes: np.ndarray) -> tuple[int, bool]:
        same = bool((v[lanes] == v[lanes[0]]).all())
        return (sum(1 << (u % 32) for u in lanes) if same else 0), same

    full = np.ones(64, dtype=bool)
    for lanes in _warps(full):
        out[0, lanes] = u32(np.array(ux[lanes].sum()))
        out[1, lanes] = u32(np.array(sx[lanes].min()))
        out[2, lanes] = u32(np.array(ux[lanes].max()))
        out[3, lanes] = np.bitwise_and.reduce(x[lanes])
        out[4, lanes] = np.bitwise_or.reduce(x[lanes])
        out[5, lanes] = np.bitwise_xor.reduce(x[lanes])
        out[6, lanes] = match_any(wide, lanes)
        bits, same = match_all(wide, lanes)
        out[7, lanes] = bits ^ (int(same) << 5)
    for lanes in _warps((x & 4) != 0):
        if len(lanes) == 0:
            continue
        out[8, lanes] = np.bitwise_and.reduce(x[lanes]) ^ x[lanes].min()
        out[9, lanes] = u32(np.array(sx[lanes].max() + ux[lanes].sum()))
        out[10, lanes] = match_any(wide >> np.uint64(3), lanes)
        bits, same = match_all(wide & np.uint64(0xFFFF00000000), lanes)
        out[11, lanes] = bits + int(same)
    for lanes in _warps((x & 4) == 0):
        if len(lanes):
            out[8, lanes] = np.bitwise_or.reduce(x[lanes])
    return out


def atomics_wide(
    dsum: np.ndarray, u64: np.ndarray, s64: np.ndarray, dv: np.ndarray, lv: np.ndarray
) -> dict[int, np.ndarray]:
    """The buffers ``atomics_wide`` leaves (by argument position), from their first values:
    every sum is of exactly representable values, so the order of the atomics is moot."""
    t = np.arange(128)
    ul = lv.view(np.uint64)
    d, u, s = dsum.copy(), u64.copy(), s64.copy()
    f = np.zeros(4, dtype=np.float32)
    for j in range(4):
        d[j] += dv[t % 4 == j].sum()
        f[j] = ((t[t % 4 == j] % 16) * 0.25).sum()
    u[0] = np.add.reduce(ul, dtype=np.uint64)
    u[1] = max(u[1], ul.max())
    u[2] = min(u[2], ul.min())
    u[3] &= np.bitwise_and.reduce(ul | np.uint64(0xF0F0))
    u[4] |= np.bitwise_or.reduce(ul & np.uint64(0x0F0F0F0F))
    u[5] ^= np.bitwise_xor.reduce(ul)
    s[0], s[1] = max(s[0], lv.max()), min(s[1], lv.min())
    dold = dsum[4:].copy()
    d[4:] = dsum[4:] + dv
    uold = u64[8:].copy()
    u[8 : 8 + 128] = ul
    cas = u64[136:264]
    u[136:264] = np.where(cas == (t & 1).astype(np.uint64), ul, cas)
    u[264:392] = u64[264:392] + np.uint64(5)
    return {0: d, 1: f, 2: u, 3: s, 4: dold, 5: uold}


def cg_tiles(x: np.ndarray) -> np.ndarray:
    """``cg_tiles`` (tests/data/trace/opcodes_cuda/kernels/collective_o0.cu): tiles of 8
    threads reduce and shift down, read a neighbour's staged value; the odd values' threads of
    each warp reduce with ``greater`` and add their rank among themselves."""
    x = x.astype(I64)
    n = len(x)
    out = np.zeros(n, dtype=I64)
    for t in range(n):
        base = t - t % 8
        down = x[t + 1] if t % 8 < 7 else x[t]
        r = x[base : base + 8].sum() + down + 3 * x[base + (t % 8 + 1) % 8]
        if x[t] & 1:
            warp = range(t - t % 32, t - t % 32 + 32)
            odd = [u for u in warp if x[u] & 1]
            r ^= max(x[u] for u in odd) + (odd.index(t) << 8)
        out[t] = r
    return u32(out)


def collective(x: np.ndarray) -> np.ndarray:
    """``collective`` (tests/data/trace/opcodes_cuda/kernels/collective_o0.cu): a branch on
    each value's low bit splits every warp; each side's ``__activemask()`` is its own lanes,
    and its reductions, ballot, match and ``elect.sync`` (the lowest lane) see those lanes
    only; then the whole warp's OR. A shuffle from a lane of the other side is undefined in
    CUDA; the H200 gives 0 (measured: outputs/collective.arg0.bin)."""
    x = x.astype(I64)
    out = np.zeros(len(x), dtype=I64)
    for w in range(0, len(x), 32):
        xs = x[w : w + 32]
        every = int(np.bitwise_or.reduce(xs))
        for lane in range(32):
            side = [u for u in range(32) if (xs[u] & 1) == (xs[lane] & 1)]
            src = 31 - lane if xs[lane] & 1 else lane ^ 1
            shfl = int(xs[src]) if src in side else 0
            if xs[lane] & 1:
                ballot = sum(1 << u for u in side if xs[u] & 2)
                r = int(xs[side].sum()) + shfl + ballot
                r ^= sum(1 << u for u in side if xs[u] & 12 == xs[lane] & 12) << 1
                r = (r & 0xFFFFFFFF) + 7 * side[0]
            else:
                r = int(xs[side].max()) ^ shfl
            out[w + lane] = r + every
    return u32(out)


def _halves(words: np.ndarray, bf16: bool) -> tuple[np.ndarray, np.ndarray]:
    """The (low, high) 16-bit values of each word as float64 (half or bf16)."""
    lo, hi = (words & 0xFFFF).astype(np.uint16), (words >> 16).astype(np.uint16)
    with np.errstate(invalid="ignore"):  # signalling NaNs stay NaNs
        if bf16:
            wide = [(v.astype(np.uint32) << 16).view(np.float32) for v in (lo, hi)]
            return wide[0].astype(np.float64), wide[1].astype(np.float64)
        return lo.view(np.float16).astype(np.float64), hi.view(np.float16).astype(np.float64)


def bf16_compares(x: np.ndarray, h: np.ndarray) -> dict[int, np.ndarray]:
    """Rows 9..16 of ``bf16_ops``: the compares written as 1.0 or 0.0 per lane (bf16 1.0 is
    0x3f80, half 1.0 0x3c00) and as lane masks (0xffff), the CUDA Math API's definitions
    (``__heq2``, ``__hlt2``, ``__hgeu2``, ``__hne2``; the unordered ``u`` forms are true on
    NaN, the others false)."""
    words = x.view(np.uint32)
    a, b = words[:32], words[32:64]
    p, q = h.view(np.uint32)[:32], h.view(np.uint32)[32:64]

    def lanes(f, u: np.ndarray, v: np.ndarray, bf16: bool, one: int) -> np.ndarray:  # type: ignore[no-untyped-def]
        (ul, uh), (vl, vh) = _halves(u, bf16), _halves(v, bf16)
        with np.errstate(invalid="ignore"):
            lo, hi = f(ul, vl), f(uh, vh)
        return (np.where(lo, one, 0) | (np.where(hi, one, 0) << 16)).astype(np.uint32)

    eq = np.equal
    ne = lambda s, t: (s != t) & ~np.isnan(s) & ~np.isnan(t)  # noqa: E731
    geu = lambda s, t: ~(s < t)  # noqa: E731
    return {
        9: lanes(eq, a, b, True, 0x3F80),
        10: lanes(np.less, a, b, True, 0x3F80),
        11: lanes(geu, a, b, True, 0x3F80),
        12: lanes(eq, p, q, False, 0x3C00),
        13: lanes(np.less, p, q, False, 0x3C00),
        14: lanes(geu, p, q, False, 0x3C00),
        15: lanes(ne, p, q, False, 0x3C00),
        16: lanes(eq, p, q, False, 0xFFFF) ^ lanes(np.less, a, b, True, 0xFFFF),
    }


def _bf16_value(bits: int) -> float:
    return float(np.array([bits << 16], dtype=np.uint32).view(np.float32)[0])


def bf16_round(exact: Fraction, negative_zero: bool) -> int:
    """The bf16 pattern of an exact value, rounded to nearest even as PTX's ``.rn`` says:
    subnormals kept (2^-133 the smallest), past the largest finite an infinity."""
    if exact == 0:
        return 0x8000 if negative_zero else 0
    sign = 0x8000 if exact < 0 else 0
    a = abs(exact)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (max(e, -126) - 7)
    n, rest = divmod(a / ulp, 1)
    n = int(n) + (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1))
    if n * ulp >= 2**128:
        return sign | 0x7F80
    return sign | int(np.array([float(n * ulp)], dtype=np.float32).view(np.uint32)[0] >> 16)


def bf16_arithmetic(x: np.ndarray) -> dict[int, list[int | None]]:
    """Rows 0..3 of ``bf16_ops`` (``__hadd2``, ``__hsub2``, ``__hmul2``, ``__hfma2`` on bf16
    pairs), lane by lane in exact rational arithmetic, each rounded once; None where an input
    is NaN or infinite (left to the H200's own outputs)."""
    a, b, c = x[:64].astype(int), x[64:128].astype(int), x[128:192].astype(int)
    rows: dict[int, list[int | None]] = {0: [], 1: [], 2: [], 3: []}
    for k in range(64):
        fa, fb, fc = (_bf16_value(int(v[k])) for v in (a, b, c))
        if not all(math.isfinite(v) for v in (fa, fb, fc)):
            for row in rows.values():
                row.append(None)
            continue
        qa, qb, qc = Fraction(fa), Fraction(fb), Fraction(fc)
        sa, sb, sc = (math.copysign(1, v) < 0 for v in (fa, fb, fc))
        rows[0].append(bf16_round(qa + qb, sa and sb))
        rows[1].append(bf16_round(qa - qb, sa and not sb))
        rows[2].append(bf16_round(qa * qb, sa != sb))
        rows[3].append(bf16_round(qa * qb + qc, (sa != sb) and sc))
    return rows
