"""``MUFU.RCP64H`` and ``MUFU.RSQ64H``, the seeds of double division and square root, bit for
bit as the H200 computes them.

Each reads the high word of a double (its sign, 11-bit exponent and the top 20 bits of the
significand; ptxas puts a zero low word beside the result) and is the float32 table of
``MUFU.RCP`` (``MUFU.RSQ``) on that 20-bit significand, whose result's top 20 fraction bits
are the result's: 1/x = rcp(1.f) * 2^(1023 - e) (1/sqrt(x): rsq of 1.f, times 2 where the
exponent is odd, the halved exponent subtracted). A denormal or zero gives an infinity of
its sign, a result below the smallest normal a zero (of the sign for ``RCP64H``), 1/inf a
zero of its sign, rsqrt(+inf) +0; a NaN, and ``RSQ64H`` of a negative number or -inf, give
the high word 0x7fffffff. Measured on the H200 (tests/data/trace/probes2: every high word of
[1, 2), of [1, 4) for ``RSQ64H``, every positive denormal one and every 4096th of all).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .interpolate import rcp, rsq

_I = np.int64


def _fields(bits: Any) -> tuple[Any, Any, Any]:
    """sign, biased exponent and 20-bit fraction of the high words ``bits``."""
    h = np.asarray(bits, dtype=np.uint32).astype(_I)
    return h >> 31, (h >> 20) & 0x7FF, h & 0xFFFFF


def _high(sign: Any, e: Any, f32: Any) -> Any:
    """The high word of sign, exponent ``e`` plus the float32 result's, and its fraction's top
    20 bits (a zero of ``sign`` where the exponent is 0 or below)."""
    r = np.asarray(f32).astype(_I)
    exp = ((r >> 23) & 0xFF) - 127 + e
    word = (sign << 31) | (np.clip(exp, 0, 0x7FF) << 20) | ((r & 0x7FFFFF) >> 3)
    return np.where(exp <= 0, sign << 31, word)


def rcp64h(bits: Any) -> Any:
    """``MUFU.RCP64H`` of high words ``bits``."""
    sign, e, f = _fields(bits)
    out = _high(sign, 2046 - e, rcp((0x3F800000 | (f << 3)).astype(np.uint32)))
    out = np.where(e == 0, (sign << 31) | 0x7FF00000, out)
    out = np.where(e == 0x7FF, np.where(f == 0, sign << 31, 0x7FFFFFFF), out)
    return out.astype(np.uint32)


def rsq64h(bits: Any) -> Any:
    """``MUFU.RSQ64H`` of high words ``bits``."""
    sign, e, f = _fields(bits)
    odd = (e - 1023) & 1
    root = rsq((((127 + odd) << 23) | (f << 3)).astype(np.uint32))
    out = _high(_I(0), 1023 - ((e - 1023 - odd) >> 1), root)
    out = np.where(e == 0, (sign << 31) | 0x7FF00000, out)
    out = np.where((sign == 1) & (e != 0), 0x7FFFFFFF, out)
    out = np.where((e == 0x7FF) & (sign == 0), np.where(f == 0, 0, 0x7FFFFFFF), out)
    return out.astype(np.uint32)
