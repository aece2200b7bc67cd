"""``MUFU.TANH``, ``MUFU.TANH.F16`` and ``MUFU.TANH.BF16``, bit for bit as the H200 computes
them.

``MUFU.TANH`` is the interpolator of :mod:`.interpolate` on a table that spans binades: for
2^-8 <= |x| < 8 the exponent and the significand's top bits pick one of 59 segments (one for
each of the binades of 2^-8, 2^-7 and 2^-6, two for 2^-5 and 2^-4, four for 2^-3 .. 2^-1,
eight for [1, 2), sixteen for [2, 4) and for [4, 8)), the next 17 bits are ``x`` (the bits
below them are dropped) and ``c0 * 2^F + c1 * x + c2 * square(x)`` is the result in units of
2^-F of the argument's last place (F = 23), its high 24 bits the significand (truncated).
Below 2^-8 the result is the argument itself (a denormal kept, not flushed), from 8 on (and
for infinity) 1 of the argument's sign; a NaN gives 0x7fffffff; tanh(-x) = -tanh(x).

``.F16`` and ``.BF16`` take one half of the register (``.H1``: the high one): the half (bf16)
widened to float32 exactly, through ``MUFU.TANH``, then truncated to a half (bf16), a NaN
0x7fff; the result is the destination's low half (its high half is 0 here: PTX never reads
it, ptxas merges the halves with a ``PRMT``).

The table was fitted to what the H200 computed on every float of each binade from 2^-20 to
32 (the probe lab 2 dense dumps, tests/data/trace/probes2): per segment, integers that give
every output; the function gives all of them, those of 2^20 random patterns and every 256th
float, and every half and every bf16 through ``.F16``/``.BF16``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .interpolate import NAN, square

_I = np.int64
_F = 17  # the table's fixed point: 2^-17 of the argument's last place

#: (binade's biased exponent, its segments) from 2^-8 to [4, 8): the significand's top
#: log2(segments) bits pick the segment, the 17 below them are ``x``
_BINADES = ((119, 1), (120, 1), (121, 1), (122, 2), (123, 2), (124, 4), (125, 4), (126, 4),
            (127, 8), (128, 16), (129, 8))  # fmt: skip

# (c0, c1, c2) per segment, hexadecimal, binade after binade: c0 in 2^-3 of the argument's
# last place, c1 and c2 in 2^-17 of it
_TABLE = """
4000000 800000 -400 3fffc00 7ffe00 -c00 3ffec00 7ffa00 -3400 3ffab00 3ff100 -2900 5fee100
3fdc80 -3700 3feab00 3fc300 -9f00 5fb8300 3f7400 -de00 3fab340 1f8280 -8bc0 4f5aec0 1f3c80
-a900 5ee3f80 1ee800 -c580 6e3f400 1e8540 -dec0 3eb2f00 1e1880 -20540 4d7e4c0 1d1500 -25b00
5bbd400 1be6e0 -29f80 695ca00 1a9660 -2d380 3b26940 192e60 -60480 46fd280 1627c0 -62400 514cb40
1312e0 -5e580 5a19c40 101e60 -569c0 30be120 6b450 -265f0 33cbae0 58170 -211e0 364a620 478d0
-1be80 384f2d0 399e8 -17230 39ee080 2e130 -12ea0 3b38f10 24a40 -f520 3c3f8e0 1d010 -c480
3d0f1f0 16e20 -9cd0 1ed9540 900a -3e4a 1f19982 710e -312e 1f4c00a 5892 -26aa 1f7379a 4552 -1e68
1f925a2 362e -17ce 1faa7aa 2a53 -12a8 1fbd51e 2109 -e96 1fcc05a 19c7 -b68 1fd77dc 141a -8e6
1fe06f4 fac -6f2 1fe7680 c37 -56a 1fecd72 985 -43a 1ff1130 76b -34a 1ff45fa 5c7 -28e 1ff6f1a
480 -1fc 1ff8f24 381 -18a ffd430 526 -6d8 ffefe0 1e6 -288 fffa10 b2 -e8 fffdd0 42 -58 ffff34 18
-20 ffffb4 a -10 ffffe4 4 -8 fffff4 2 -4
"""
_COEF = np.array([int(w, 16) for w in _TABLE.split()], dtype=_I).reshape(-1, 3)
_FIRST = np.zeros(512, dtype=_I)  # each binade's first segment, by sign and exponent
_BITS = np.zeros(512, dtype=_I)  # log2 of its segments
_n = 0
for _e, _count in _BINADES:
    _FIRST[[_e, _e + 256]], _BITS[[_e, _e + 256]] = _n, _count.bit_length() - 1
    _n += _count
_E, _SIGN = np.arange(512, dtype=_I) & 0xFF, np.arange(512, dtype=_I) >> 8
_TERMS = (_COEF[:, 0] << (_F - 3), _COEF[:, 1].copy(), _COEF[:, 2].copy())
#: added to a double's bits >> 29 (its top 24 significant bits, exponent 1023-biased):
#: the float32 result's sign and the exponent's bias, less the table's fixed point
_BIAS = (_SIGN << 31) + ((_E - _F - 23 - 1023) << 23)
_SMALL, _LARGE = _E < 119, _E > 129  # tanh(x) = x below 2**-8, ±1 from 8 up


def tanh(bits: Any) -> Any:
    """``MUFU.TANH`` of float32 bits; the sum (below 2**53) is exact as a double, whose bits
    shifted right by 29 are the result's, truncated to 24 significant bits."""
    u = np.asarray(bits, dtype=np.uint32).astype(_I)
    hi, frac = u >> 23, u & 0x7FFFFF
    nb = _BITS[hi]
    seg = _FIRST[hi] + (frac >> (23 - nb))
    x = (frac >> (6 - nb)) & 0x1FFFF
    c0, c1, c2 = _TERMS
    total = c0[seg] + c1[seg] * x + c2[seg] * square(x)
    out = (total.astype(np.float64).view(_I) >> 29) + _BIAS[hi]
    if np.count_nonzero(_SMALL[hi] | _LARGE[hi]):
        out = np.where(_SMALL[hi], u, np.where(_LARGE[hi], (u >> 31 << 31) | 0x3F800000, out))
        out = np.where(u & 0x7FFFFFFF > 0x7F800000, NAN, out)
    return out.astype(np.uint32)


def _halves(bits: Any, high: bool) -> Any:
    """The 16 bits of one half of each word."""
    u = np.asarray(bits, dtype=np.uint32)
    return (u >> np.uint32(16)) if high else (u & np.uint32(0xFFFF))


def tanh_bf16(bits: Any, high: bool = False) -> Any:
    """``MUFU.TANH.BF16`` of the low (``high``: the high) bf16 of each word, in the low half."""
    out = tanh(_halves(bits, high) << np.uint32(16)) >> np.uint32(16)
    return out.astype(np.uint32)


def tanh_f16(bits: Any, high: bool = False) -> Any:
    """``MUFU.TANH.F16`` of the low (``high``: the high) half of each word, in the low half."""
    h = _halves(bits, high).astype(np.uint16).view(np.float16)
    f = tanh(h.astype(np.float32).view(np.uint32)).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        r = f.astype(np.float16)  # to nearest: step back where that went away from zero
        r = np.where(np.abs(r.astype(np.float32)) > np.abs(f), np.nextafter(r, r * 0), r)
    out = np.where(np.isnan(f), np.uint16(0x7FFF), np.asarray(r, np.float16).view(np.uint16))
    return out.astype(np.uint32)
