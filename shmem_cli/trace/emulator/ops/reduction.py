"""Element-wise reductions into global memory, as the async proxy's reduction copies do
them (``cp.reduce.async.bulk.tensor``: ``UTMAREDG``): the old element and the one from
shared memory combined in the tensor's element type.

PTX's operations and types: ``add`` (integers, float16, bfloat16, float32, float64),
``min``/``max`` (integers, float16, bfloat16), ``inc``/``dec`` (uint32), ``and``/``or``/``xor``
(integers). Float adds round to nearest even; ``inc`` wraps to 0 past the shared value and
``dec`` to the shared value below 1 or above it, as ``atom.inc``/``atom.dec`` do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ..op_table import unsupported
from .convert import bf16_bits

_NAMES = ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR")
_INTEGER = {
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "int32": np.int32,
    "uint64": np.uint64,
    "int64": np.int64,
}
_FLOAT = {
    "float16": np.float16,
    "float32": np.float32,
    "float32_ftz": np.float32,
    "float64": np.float64,
}

#: combine(old, new) on byte arrays of shape (n, element size): the bytes written back
Combine = Callable[[Any, Any], Any]


def reduction_name(ins: Instruction) -> str:
    """The operation a reduction instruction names (``UTMAREDG.2D.ADD``: ADD)."""
    found = [m for m in ins.mods if m in _NAMES]
    if len(found) != 1:
        raise unsupported(ins, "no reduction operation")
    return found[0]


def element_reduction(how: str, dtype: str, ins: Instruction) -> Combine:
    """The combining function for ``how`` on elements of the tensor-map type ``dtype``."""
    if dtype in _INTEGER:
        return _integer(how, np.dtype(_INTEGER[dtype]), ins)
    if dtype == "bfloat16" and how in ("ADD", "MIN", "MAX"):
        return _bfloat16(how)
    if dtype in _FLOAT and how in ("ADD", "MIN", "MAX"):
        return _float(how, np.dtype(_FLOAT[dtype]))
    raise unsupported(ins, f"a {how.lower()} reduction of {dtype} elements")


def _integer(how: str, t: np.dtype[Any], ins: Instruction) -> Combine:
    if how in ("INC", "DEC") and t != np.dtype(np.uint32):
        raise unsupported(ins, f"{how.lower()} of {t} elements (PTX has it for u32 only)")

    def combine(old: Any, new: Any) -> Any:
        a, b = _as(old, t), _as(new, t)
        if how == "ADD":
            r = a + b  # wraps, as the hardware's integer add
        elif how == "MIN":
            r = np.minimum(a, b)
        elif how == "MAX":
            r = np.maximum(a, b)
        elif how == "AND":
            r = a & b
        elif how == "OR":
            r = a | b
        elif how == "XOR":
            r = a ^ b
        elif how == "INC":
            r = np.where(a >= b, 0, a + 1).astype(t)
        else:
            r = np.where((a == 0) | (a > b), b, a - 1).astype(t)
        return _bytes(r)

    return combine


def _float(how: str, t: np.dtype[Any]) -> Combine:
    def combine(old: Any, new: Any) -> Any:
        a, b = _as(old, t), _as(new, t)
        with np.errstate(over="ignore", invalid="ignore"):
            r = a + b if how == "ADD" else np.fmin(a, b) if how == "MIN" else np.fmax(a, b)
        return _bytes(np.asarray(r, dtype=t))

    return combine


def _bfloat16(how: str) -> Combine:
    def combine(old: Any, new: Any) -> Any:
        a = (_as(old, np.dtype(np.uint16)).astype(np.uint32) << 16).view(np.float32)
        b = (_as(new, np.dtype(np.uint16)).astype(np.uint32) << 16).view(np.float32)
        if how == "ADD":
            with np.errstate(over="ignore", invalid="ignore"):
                r = bf16_bits(a + b)  # float32 holds it closely enough to round once
        else:
            pick = np.fmin(a, b) if how == "MIN" else np.fmax(a, b)
            r = pick.view(np.uint32) >> np.uint32(16)
        return _bytes(np.asarray(r, dtype=np.uint16))

    return combine


def _as(raw: Any, t: np.dtype[Any]) -> Any:
    return np.ascontiguousarray(raw).view(t).reshape(-1)


def _bytes(values: Any) -> Any:
    v = np.ascontiguousarray(values)
    return v.view(np.uint8).reshape(len(v), -1)
