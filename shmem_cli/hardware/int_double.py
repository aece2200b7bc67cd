"""64-bit integers as float64 for a conversion (``I2F`` from S64 or U64): rounded in the
instruction's mode where the double is the result, or rounded to odd where a narrower float
is to come, so that the value rounds once, from the integer itself. Exact below 2^53."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["directed_double", "odd_double"]


def _sign_magnitude(v: Any, signed: bool) -> tuple[Any, Any]:
    """64-bit integers (their uint64 bits): where each is negative, and its magnitude as
    uint64 (2^63 for -2^63)."""
    u = np.asarray(v, dtype=np.uint64)
    negative = (u >> np.uint64(63)).astype(bool) if signed else np.zeros(u.shape, dtype=bool)
    return negative, np.where(negative, ~u + np.uint64(1), u)


def directed_double(v: Any, signed: bool, mode: str) -> Any:
    """64-bit integers (their uint64 bits) as float64 rounded with ``mode`` (RN, RZ, RM,
    RP): exact below 2^53; past it the nearest double, moved one step toward zero or away
    from it where that double lies on the wrong side of the integer for the mode."""
    negative, m = _sign_magnitude(v, signed)
    near = m.astype(np.float64)  # to nearest, ties to even
    if mode != "RN":
        # the nearest double against the magnitude, exactly (2^64 lies above every uint64)
        top = near >= 2.0**64
        whole = np.where(top, 0.0, near).astype(np.uint64)
        above, below = top | (whole > m), ~top & (whole < m)
        # the magnitude rounds down: toward zero, or toward -inf for a positive value and
        # toward +inf for a negative one
        down = np.full(m.shape, True) if mode == "RZ" else negative if mode == "RP" else ~negative
        near = np.where(down & above, np.nextafter(near, 0.0), near)
        near = np.where(~down & below, np.nextafter(near, np.inf), near)
    return np.where(negative, -near, near)


def odd_double(v: Any, signed: bool) -> Any:
    """64-bit integers (their uint64 bits) as float64 for a narrower float: exact below
    2^53, above it cut to a multiple of 2^11 with the last of those bits set where a bit was
    cut (rounded to odd). A float32, float16 or bfloat16 rounded from that value, in any
    mode, is the one rounded from the integer itself: the odd value lies between the same
    two multiples of 2^12 as the integer and is never a rounding's tie, where rounding
    through the nearest double would make ties (2^60 + 2^36 + 1 to float32)."""
    negative, m = _sign_magnitude(v, signed)
    cut = (m >> np.uint64(11)) | ((m & np.uint64(0x7FF)) != 0).astype(np.uint64)
    mag = np.where(
        m < np.uint64(1 << 53), m.astype(np.float64), np.ldexp(cut.astype(np.float64), 11)
    )
    return np.where(negative, -mag, mag)
