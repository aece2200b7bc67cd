"""The NaNs the H200 writes where doubles are involved: double arithmetic (``DADD``, ``DMUL``,
``DFMA``) and conversions to and from double (``F2F.F64.F32``, ``F2F.F64.F16``,
``F2F.F64.BF16``, ``F2F.F32.F64``, ``F2F.F16.F64``, ``F2F.BF16.F64``), the rules in one
place (docs/hardware-model.md, 9g; measured: tests/data/trace/probes2's ``nan_double`` and
``nan_convert``, tests/data/trace/probes3's ``nan_misc``).

Unlike the float32, half and bf16 results, which are the canonical NaN whatever NaN went in
(0x7fffffff, 0x7fff: ``trace/emulator/ops/floating``), a NaN through these keeps its sign
and its payload's top bits, its quiet bit set. Of several NaN operands of one double
operation the second wins (``b``), then the addend (``c``), then the first (``a``); a
``-`` or ``|..|`` on the operand does not reach the NaN passed on. An operation that makes a
NaN of numbers (inf - inf, 0 x inf) writes :data:`INVALID64`. The host's floating point
(x86: the first operand's NaN, the default NaN negative; ARM: the default NaN positive) has
no say: every function here works on bit patterns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["INVALID64", "double_result", "through_double"]

#: the NaN a double operation makes of numbers (inf - inf, 0 x inf)
INVALID64 = np.uint64(0xFFF8000000000000)
_QUIET64 = np.uint64(1 << 51)
_SIGN64 = np.uint64(1 << 63)
_MANTISSA64 = np.uint64((1 << 52) - 1)
#: per narrower type: (mantissa bits, its exponent and quiet bit, its sign bit)
_NARROW = {
    "F32": (23, 0x7FC00000, 1 << 31),
    "F16": (10, 0x7E00, 1 << 15),
    "BF16": (7, 0x7FC0, 1 << 15),
}


def _nan64(bits: Any) -> Any:
    bits = np.asarray(bits, dtype=np.uint64)
    return (bits & ~_SIGN64) > np.uint64(0x7FF0000000000000)


def double_result(result: Any, sources: Sequence[Any]) -> Any:
    """float64 bits of a double operation's ``result`` (float64 values, or their bits),
    its NaNs the H200's: where a source is a NaN the first NaN of ``sources`` (the operands'
    bits without their modifiers, in the order b, c, a) quieted, elsewhere a NaN result
    :data:`INVALID64`."""
    r = np.asarray(result)
    bits = r.view(np.uint64) if r.dtype == np.float64 else r.astype(np.uint64)
    pick = np.broadcast_to(INVALID64, bits.shape)
    for v in reversed(sources):
        v = np.asarray(v, dtype=np.uint64)
        pick = np.where(_nan64(v), v | _QUIET64, pick)
    return np.where(_nan64(bits), pick, bits)


def through_double(value: Any, bits: Any, dst: str) -> Any:
    """The bits a conversion to or from double writes (``dst``: F64, F32, F16 or BF16; the source
    the other side's double): ``bits`` where ``value`` (the source as float64, its NaN's
    payload at the top of the mantissa, as a widening keeps it on any host) is a number,
    else its NaN quieted: to double the payload kept, to float, half or bf16 its top bits."""
    src = np.asarray(value, dtype=np.float64).view(np.uint64)
    nan = _nan64(src)
    if dst == "F64":
        return np.where(nan, src | _QUIET64, np.asarray(bits, dtype=np.uint64))
    mant, quiet, sign = _NARROW[dst]
    narrow = ((src & _MANTISSA64) >> np.uint64(52 - mant)) | np.uint64(quiet)
    narrow = narrow | np.where((src & _SIGN64) != 0, np.uint64(sign), np.uint64(0))
    return np.where(nan, narrow, np.asarray(bits, dtype=np.uint64)).astype(np.uint32)
