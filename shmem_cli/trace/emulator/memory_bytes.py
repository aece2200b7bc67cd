"""The bytes of memory, as the memory families read and write them: words and their taint
gathered from and scattered to byte offsets, and the element-wise reductions of the async
proxy's reduction copies (``cp.reduce.async.bulk.tensor``: ``UTMAREDG``), the old element
and the one from shared memory combined in the tensor's element type. No opcodes of its own.

PTX's operations and types: ``add`` (integers, float16, bfloat16, float32, float64),
``min``/``max`` (integers, float16, bfloat16), ``inc``/``dec`` (uint32), ``and``/``or``/``xor``
(integers). Float adds round to nearest even; float minima and maxima order -0 below +0
(the emulator's one rule, :func:`.ops.floating.minimum_maximum`); ``inc`` wraps to 0 past the
shared value and ``dec`` to the shared value below 1 or above it, as ``atom.inc``/``atom.dec``
do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...cuda.sass import Instruction
from .op_table import unsupported
from .ops.convert import bf16_bits
from .ops.floating import minimum_maximum

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


_STEPS: dict[int, Any] = {}


def _steps(n: int) -> Any:
    """``np.arange(n)[:, None]``, made once per ``n`` (read-only): the words, or bytes, of an
    access after its first, as a column."""
    steps = _STEPS.get(n)
    if steps is None:
        steps = _STEPS[n] = np.arange(n)[:, None]
        steps.flags.writeable = False
    return steps


def _words(off: Any, width: int) -> Any:
    """(width / 4, n) the word index of each word an access of ``width`` bytes at the byte
    offsets ``off`` (non-negative, aligned) covers."""
    return (off >> 2)[None, :] + _steps(width // 4)


def _rows(data: Any, off: Any, width: int) -> Any:
    """(n, width) the bytes at the offsets ``off``, each a multiple of ``width`` (a power of
    two): rows of a view of ``data``, taken (cheaper on a warp than an index per byte)."""
    rows = data[: len(data) // width * width].reshape(-1, width)
    return rows.take(off >> (width.bit_length() - 1), axis=0)


def gather(data: Any, off: Any, width: int, signed: bool, aligned: bool = False) -> Any:
    """(words, n) uint32 read from byte offsets; sub-word reads are extended. ``aligned``:
    every offset is a multiple of ``width`` (a shared window's, checked)."""
    if aligned and width > 4:
        return _rows(data, off, width).view(np.uint32).T
    if width == 4:
        return data.view(np.uint32)[off >> 2][None, :]
    if width > 4:
        return data.view(np.uint32)[_words(off, width)]
    raw = data[off[None, :] + _steps(width)].astype(np.uint32)
    v = raw[0] | (raw[1] << np.uint32(8)) if width == 2 else raw[0]
    if signed:
        bits = 8 * width
        v = np.where(v >> np.uint32(bits - 1), v | np.uint32((0xFFFFFFFF << bits) & 0xFFFFFFFF), v)
    return v[None, :].astype(np.uint32)


def scatter(data: Any, off: Any, width: int, vals: Any) -> None:
    """Write (words, n) uint32 to byte offsets (sub-word: the low bytes of word 0)."""
    if width >= 4:
        data.view(np.uint32)[_words(off, width)] = vals
        return
    v = vals[0]
    for k in range(width):
        data[off + k] = (v >> np.uint32(8 * k)) & np.uint32(0xFF)


def gather_taint(taint: Any, off: Any, width: int, aligned: bool = False) -> Any:
    """The OR of the taint bytes each lane reads (whole words at once from 4 bytes on;
    ``aligned``, as :func:`gather`'s: each lane's row of bytes)."""
    if aligned and width >= 4:
        if len(off) <= _FEW:
            return np.bitwise_or.reduce(_rows(taint, off, width), axis=1)
        words = taint[: len(taint) // width * width].view(np.uint32)
        return _fold(_rows(words, off >> 2, width // 4))
    if width >= 4:
        if width == 4:
            w = taint.view(np.uint32)[off >> 2]
        else:
            w = np.bitwise_or.reduce(taint.view(np.uint32)[_words(off, width)], axis=0)
        w = w | (w >> np.uint32(16))  # a new array: the bytes' OR folded into the low one
        w |= w >> np.uint32(8)
        return w.astype(np.uint8)  # the low byte
    t = taint[off[None, :] + _steps(width)]
    return np.bitwise_or.reduce(t, axis=0)


#: lanes up to which an aligned gather's taint ORs its rows' bytes in one reduce; past them
#: the rows' words are ORed and folded (a reduce over rows of 4 to 16 bytes costs some 15 ns
#: a lane, the words' calls 2 to 3 over 4,096 lanes and more)
_FEW = 128


def _fold(words: Any) -> Any:
    """The OR of the bytes of each row of ``words`` ((n, k) uint32) as uint8."""
    w = words[:, 0]
    if words.shape[1] > 1:
        w = w | words[:, 1]
        for k in range(2, words.shape[1]):
            w |= words[:, k]
    w = w | (w >> np.uint32(16))
    w |= w >> np.uint32(8)
    return w.astype(np.uint8)  # the low byte


def scatter_taint(taint: Any, off: Any, width: int, t: Any) -> None:
    tt = np.asarray(t, dtype=np.uint8)  # per lane, or one for all (the stores broadcast it)
    if width >= 4:
        word = tt.astype(np.uint32) * np.uint32(0x01010101)
        taint.view(np.uint32)[_words(off, width)] = word
        return
    for k in range(width):
        taint[off + k] = tt


def or_all(ts: Any) -> Any:
    out: Any = 0
    for t in ts:
        out = out | t
    return out


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
            r = a + b if how == "ADD" else minimum_maximum(a, b, how == "MIN")
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
            pick = minimum_maximum(a, b, how == "MIN")
            r = pick.view(np.uint32) >> np.uint32(16)
        return _bytes(np.asarray(r, dtype=np.uint16))

    return combine


def _as(raw: Any, t: np.dtype[Any]) -> Any:
    return np.ascontiguousarray(raw).view(t).reshape(-1)


def _bytes(values: Any) -> Any:
    v = np.ascontiguousarray(values)
    return v.view(np.uint8).reshape(len(v), -1)
