"""Numbers rounded to half precision (float16), bfloat16 or tf32 as IEEE 754 rounds them,
in each of its four modes: to nearest with ties to even (``RN``), toward zero (``RZ``),
toward -inf (``RM``), toward +inf (``RP``). PTX's ``cvt.{rn,rz,rm,rp}.{f16,bf16}.{f64,f32}``
and ``cvt.{rn,rz}.tf32.f32`` are these roundings (docs/hardware-model.md, 9g); the
emulator's ``F2F``, ``F2FP`` and ``I2F`` to F16, BF16 and TF32 write them.

The value rounds once, from the source itself: a double is not rounded to float first
(which can make a tie of what was not one). The format's subnormals are kept; a magnitude
past the largest finite value becomes infinity where the mode rounds away from zero (``RN``;
``RP`` for a positive value, ``RM`` for a negative one), else the largest finite value.
Zeros and infinities keep their sign. ``satfinite`` (PTX's ``.satfinite``): an infinity,
and a magnitude past the largest finite value in every mode, is the largest finite value of
its sign. A NaN's bits are the caller's to choose: the GPU's are not IEEE's (the canonical
0x7fff, or :func:`.nans.through_double`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FORMATS", "MODES", "round_half"]

#: per format: its mantissa bits, its smallest normal exponent and its largest exponent
#: (tf32: float32's exponents with half's 10 mantissa bits, written as float32 bits)
FORMATS = {"F16": (10, -14, 15), "BF16": (7, -126, 127), "TF32": (10, -126, 127)}
MODES = ("RN", "RZ", "RM", "RP")


def round_half(x: Any, fmt: str, mode: str, satfinite: bool = False) -> Any:
    """float64 or float32 values ``x`` rounded to ``fmt`` (F16, BF16, TF32) with ``mode``
    (RN, RZ, RM, RP): the 16-bit patterns, as uint32 (TF32: float32's 32 bits, the low 13
    zero); a NaN's: see the module's note."""
    if fmt not in FORMATS or mode not in MODES:
        raise ValueError(f"no rounding to {fmt!r} with mode {mode!r}")
    with np.errstate(over="ignore", invalid="ignore"):  # a signalling NaN, 2**1024
        x = np.asarray(x, dtype=np.float64)  # a float32 widens exactly
        return _rounded(x, fmt, mode, satfinite)


def _rounded(x: Any, fmt: str, mode: str, satfinite: bool) -> Any:
    mant, emin, emax = FORMATS[fmt]
    a = np.abs(x)
    number = np.isfinite(a) & (a > 0)
    safe = np.where(number, a, 1.0)
    # the exponent of the format's last place at a: a's own, or the subnormals' below emin
    ulp = np.maximum(np.frexp(safe)[1] - 1, emin) - mant
    # a counted in those places: below 2**(mant + 1), and exact (a scaling by a power of
    # two that loses no bit: down only to a normal double, up from a double's subnormal)
    q = np.ldexp(safe, -ulp)
    low = np.floor(q)
    rest = q - low  # exact
    negative = np.signbit(x)
    away: Any = negative if mode == "RM" else ~negative if mode == "RP" else False
    if mode == "RN":
        up = (rest > 0.5) | ((rest == 0.5) & (np.fmod(low, 2.0) == 1.0))
    else:
        up = (rest > 0) & away
    r = np.ldexp(low + up, ulp)  # exact; 2**1024 from the largest doubles is inf
    top = float((2 ** (mant + 1) - 1) * 2.0 ** (emax - mant))
    beyond = top if satfinite else np.inf if mode == "RN" else np.where(away, np.inf, top)
    r = np.where(r > top, beyond, r)
    r = np.where(number, r, np.minimum(a, top) if satfinite else a)  # NaN stays NaN
    r = np.copysign(r, x)  # zeros, infinities and NaNs keep their sign
    if fmt == "F16":
        return r.astype(np.float16).view(np.uint16).astype(np.uint32)
    bits = r.astype(np.float32).view(np.uint32)  # exact: a bf16 or tf32 value
    return bits if fmt == "TF32" else bits >> np.uint32(16)
