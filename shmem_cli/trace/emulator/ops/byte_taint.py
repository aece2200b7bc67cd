"""Taint by byte for the steps that move or mask bytes: PRMT and LOP3.

ptxas keeps a bool in a register's low bytes and leaves stale bytes above it: ``PRMT R4,
RZ, 0x7610, R4`` (the low half from RZ, the high half R4's, which held global data), then
``LOP3.LUT P0, RZ, R4, 0xff, RZ, 0xc0, !PT`` tests the low byte alone. With one taint byte
per register, P0 would carry the data's taint and the loop it decides would look decided by
global data (every block of a grid run, :mod:`..alike`). So:

* a register whose bytes differ in taint keeps, in :attr:`..state.Block.byte_clean`, per byte
  and thread the taint bits that byte lacks (byte ``k``'s taint: the register's taint less
  ``byte_clean[k]``); its register taint stays the OR of its bytes', so every other reader
  sees the whole taint. Any other write of the register forgets the record for the threads
  it reaches (:func:`..operands.forget_bytes`); control flow's taint goes into every byte
  (:func:`..taint_flow.taint_destinations`);
* PRMT gives each result byte the taint of the source byte it selects (or replicates the sign
  of); a tainted selector, every source byte's and its own to every byte;
* LOP3's result varies only in the bits that change with the tainted bits of its inputs, the
  untainted bits (an immediate's, RZ's, an untainted byte's: the same in every block) held as
  they are: it takes the taints of the inputs' bytes where a bit of that byte varies (in
  every byte of the register: LOP3 keeps no record), none where no bit does. Its predicate
  is untainted where a bit is 1 whatever the tainted bits are, or none varies.

An operand negated or taken as absolute value, a constant read through a register and a
64-bit source keep their whole taint in every byte.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Operand, Reg
from ..operands import write_u32
from ..state import Block, Idx

#: (4, threads) uint8: each byte's taint, byte 0 the lowest; None where every byte carries
#: the register's taint
Bytes: TypeAlias = Any
_BYTE_MASKS = np.array([0xFF << (8 * k) for k in range(4)], dtype=np.uint32)[:, None]
_SHIFTS = np.array([0, 8, 16, 24], dtype=np.uint32)[:, None]
_ALL = np.uint32(0xFFFFFFFF)


def byte_reader(op: Operand) -> Callable[[Block, Idx, Any], Bytes]:
    """Per byte of operand ``op``, its taint, from the taint ``t`` its reader gave: the
    register's bytes where a record holds them, else None (``t`` in every byte)."""
    if not isinstance(op, Reg) or op.kind not in ("R", "UR") or op.is_zero:
        return lambda b, ix, t: None
    if op.neg or op.abs or op.sel:  # bits move between bytes: the whole taint
        return lambda b, ix, t: None
    key = (op.kind, op.index)

    def by_byte(b: Block, ix: Idx, t: Any) -> Bytes:
        rec = b.byte_clean.get(key) if b.byte_clean else None
        return None if rec is None else np.asarray(t, dtype=np.uint8)[None, :] & ~rec[:, ix]

    return by_byte


def byte_writer(op: Operand, ins: Instruction) -> Callable[[Block, Idx, Any, Any, Bytes], None]:
    """Write a 32-bit register with its taint ``t`` and, where not None, a taint per byte
    ``tb`` (their OR is ``t``): a record where the bytes differ."""
    w = write_u32(op, ins)
    exact = isinstance(op, Reg) and not op.is_zero
    kind, index = (op.kind, op.index) if isinstance(op, Reg) else ("R", 0)

    def wb(b: Block, ix: Idx, v: Any, t: Any, tb: Bytes) -> None:
        w(b, ix, v, t)  # (forgets the record)
        if tb is None or not exact:
            return
        clean = np.asarray(t, dtype=np.uint8)[None, :] & ~tb
        if np.count_nonzero(clean):
            _keep(b, kind, index, ix, clean)

    return wb


def _keep(b: Block, kind: str, index: int, ix: Idx, clean: Any) -> None:
    rec = b.byte_clean.get((kind, index))
    if rec is None:
        rec = b.byte_clean[(kind, index)] = np.zeros((4, b.threads), dtype=np.uint8)
    if b.mask is not None:  # a wide step: its write lands where the mask is
        np.copyto(rec, clean, where=b.mask[None, :])
    else:
        rec[:, ix] = clean


def _whole(t: Any, n: int) -> Any:
    return np.broadcast_to(np.asarray(t, dtype=np.uint8), (4, n))


def prmt_bytes(
    sel: Any, ta: Any, tc: Any, ts: Any, bytes_a: Bytes, bytes_c: Bytes, n: int
) -> Bytes:
    """PRMT's result taint per byte (None: every byte ``ta | tc | ts``): that of the source
    byte each selector nibble names (bytes 0-3 of ``a``, 4-7 of ``c``; a sign-replicating
    nibble's too). Where the selector carries taint (another block may pick other bytes)
    every byte takes every source byte's and the selector's."""
    if np.count_nonzero(ts):
        return None
    nibbles = [(np.asarray(sel) >> np.uint64(4 * k)) & np.uint64(7) for k in range(4)]
    if bytes_a is None and bytes_c is None and np.ndim(sel) == 0:
        sides = {int(x) >= 4 for x in nibbles}
        if len(sides) == 1:  # every byte from one source, whole
            return None
    src = np.concatenate([_whole(ta, n) if bytes_a is None else bytes_a,
                          _whole(tc, n) if bytes_c is None else bytes_c])  # fmt: skip
    pick = np.broadcast_to(np.stack(nibbles).astype(np.intp).reshape(4, -1), (4, n))
    out: Bytes = np.take_along_axis(src, pick, axis=0)
    return out


def _free_bits(t: Any, tb: Bytes) -> Any:
    """The bits of an operand that carry taint, per thread (or one value for all), None
    where none does."""
    if tb is not None:
        return np.bitwise_or.reduce(np.where(tb != 0, _BYTE_MASKS, np.uint32(0)), axis=0)
    t = np.asarray(t)
    tainted = np.count_nonzero(t)
    if not tainted:
        return None
    return _ALL if tainted == t.size else np.where(t != 0, _ALL, np.uint32(0))


def lop3_taint(
    lut: Callable[[Any, Any, Any], Any],
    values: list[Any],
    taints: list[Any],
    bytes_: list[Bytes],
    n: int,
) -> tuple[Any, Any]:
    """LOP3's result taint and its predicate's, per thread of ``n``, for the inputs'
    ``values``, ``taints`` and bytes (None: whole), ``lut`` its function of three uint32
    inputs. The result takes the taints of the bytes whose bits change it, in every byte."""
    free = [_free_bits(t, tb) for t, tb in zip(taints, bytes_, strict=True)]
    low: Any = None
    high: Any = None
    varied = [k for k in range(3) if free[k] is not None]
    for combo in range(1 << len(varied)):  # each tainted input's free bits all 0, or all 1
        ins = list(values)
        for j, k in enumerate(varied):
            on = combo >> j & 1
            if free[k] is _ALL:  # every bit free: the input is all 0s or all 1s
                ins[k] = _ALL if on else np.uint32(0)
            else:
                kept = np.asarray(values[k], dtype=np.uint32) & ~free[k]
                ins[k] = kept | free[k] if on else kept
        out = np.asarray(lut(*ins), dtype=np.uint32)
        low = out if low is None else low & out
        high = out if high is None else high | out
    vary = high & ~low  # the result bits that change with the tainted bits
    known_one = low != 0  # a bit that is 1 whatever the tainted bits: the predicate is true
    if all(tb is None for tb in bytes_):
        t = np.asarray(taints[0] | taints[1] | taints[2], dtype=np.uint8)
        tr = np.where(vary != 0, t, np.uint8(0))
    else:  # the taints of the inputs' bytes where a bit of that byte of the result varies
        varies = (np.broadcast_to(vary, (n,))[None, :] >> _SHIFTS) & np.uint32(0xFF) != 0
        either = np.bitwise_or.reduce(
            [_whole(tt, n) if b is None else b for tt, b in zip(taints, bytes_, strict=True)]
        )
        tb = np.where(varies, either, np.uint8(0))
        tr = tb[0] | tb[1] | tb[2] | tb[3]
    tr = np.broadcast_to(tr, (n,)).astype(np.uint8)
    return tr, np.where(known_one, np.uint8(0), tr)
