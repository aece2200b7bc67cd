"""Operand access, decoded once per instruction into small closures.

A reader returns ``(value, taint)`` for the threads of an index: 32-bit values as
``uint32`` (an immediate or constant as a 0-d array that broadcasts), 64-bit values as
``uint64``, predicates as ``bool``; taint as a ``uint8`` array or the integer 0. The
operand's sign and absolute-value marks are applied as the mode says: ``"i"``
integer (``-x`` is two's complement, ``~x`` bitwise not), ``"f"`` float32 (sign bit),
``"h"`` a pair of float16 (both sign bits), ``"d"`` float64.

While :func:`collecting_destinations` is open, every writer made records the registers it
writes (a :data:`Dest`): what an instruction writes, known once when it is decoded.

A plain register read over every thread (a slice: a converged step, or a wide one) is a view
of the register file, not a copy. So a step computes every value it writes before its first
write: a destination may be a source, or overlap one (``IMAD.WIDE.U32 R2, R3, 0x4, R2``,
``IADD3 R0, P0, R0, R7, RZ``, ``LDS.64 R2, [R2]``), and numpy's arithmetic makes new arrays.
A step that writes two destinations and computes the second after the first reads only
copies: predicate operands (:func:`read_pred`), a register's lanes (``VIMNMX``'s). Issue
29/30's review ran every instruction form of the tests' cubins, each source renamed onto each
destination, over views and over copies: they agree (tests/test_trace_ops_alias.py keeps the
forms that overlap).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeAlias

import numpy as np

from ...cuda.sass import Instruction
from ...cuda.sass_operands import Const, Imm, Operand, Reg
from .state import PT, RZ, TAINT_UNKNOWN, URZ, Block, Idx, TraceError

Reader: TypeAlias = Callable[[Block, Idx], tuple[Any, Any]]
Writer: TypeAlias = Callable[[Block, Idx, Any, Any], None]
#: registers an instruction writes: (kind R/UR/P/UP, first index, count)
Dest: TypeAlias = tuple[str, int, int]
_collected: list[Dest] | None = None


@contextmanager
def collecting_destinations() -> Iterator[list[Dest]]:
    """The registers the writers made inside the block write, in a list."""
    global _collected
    outer, _collected = _collected, []
    try:
        yield _collected
    finally:
        _collected = outer


def _destination(kind: str, index: int, count: int) -> None:
    if _collected is not None:
        _collected.append((kind, index, count))


_SIGN32 = np.uint32(0x80000000)
_SIGN_H2 = np.uint32(0x80008000)
_SIGN64 = np.uint64(0x8000000000000000)


def u32(v: int) -> Any:
    return np.array(v & 0xFFFFFFFF, dtype=np.uint32)


def f32_bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def imm_bits(op: Imm, mode: str) -> int:
    """The 32-bit pattern of an immediate in an instruction of the given mode."""
    if mode == "f" and not op.text.lstrip("-").startswith("0x"):
        return f32_bits(op.float_value)
    if mode == "h":
        return int(np.array(op.float_value, dtype=np.float16).view(np.uint16))
    if op.int_value is None:
        return f32_bits(op.float_value)
    return op.int_value & 0xFFFFFFFF


def _apply_mods(v: Any, neg: bool, inv: bool, absolute: bool, mode: str) -> Any:
    if mode == "i":
        if absolute:
            v = np.abs(v.view(np.int32)).view(np.uint32)
        if neg:
            v = (np.uint32(0) - v).astype(np.uint32)
        if inv:
            v = ~v
        return v
    sign = _SIGN_H2 if mode == "h" else _SIGN32
    if absolute:
        v = v & ~sign
    if neg:
        v = v ^ sign
    if inv:
        v = ~v
    return v


def _apply_mods64(v: Any, neg: bool, absolute: bool, mode: str) -> Any:
    """A 64-bit operand's ``-`` and ``|..|``: on a double's sign bit, or an integer's
    two's complement negation."""
    if mode == "d":
        if absolute:
            v = v & ~_SIGN64
        if neg:
            v = v ^ _SIGN64
    elif neg:
        v = np.uint64(0) - v
    return v


def const_read(blk: Block, bank: int, off: Any, width: int, ins: Instruction) -> tuple[Any, Any]:
    """``width`` bytes of a constant bank at byte offsets ``off`` (int or array) and their
    taint: inexact where a byte lies in a ``__constant__`` variable nobody set (it reads as
    zero; its name is kept for the report)."""
    img = blk.cbank.get(bank)
    if img is None:
        raise TraceError(
            f"the kernel reads constant bank {bank} (c[0x{bank:x}][...]), which the cubin does "
            "not hold: a __constant__ variable of another module? give the cubin that "
            "defines it",
            ins,
        )
    off_arr = np.asarray(off, dtype=np.int64)
    if off_arr.size and (int(off_arr.min()) < 0 or int(off_arr.max()) + width > len(img)):
        raise TraceError(
            f"constant bank {bank} read at 0x{int(off_arr.max()):x} is past its "
            f"{len(img):,} bytes (the __constant__ variables the cubin defines)",
            ins,
        )
    idx = off_arr[..., None] + np.arange(width)
    mark = blk.cunset.get(bank)
    if mark is None:
        return img[idx], 0
    hit = mark[idx].max(axis=-1)
    if not hit.any():
        return img[idx], 0
    spans = blk.launch.const_unset[bank]
    blk.launch.unset_reads.update(spans[int(k) - 1][2] for k in np.unique(hit) if k)
    return img[idx], np.where(hit > 0, TAINT_UNKNOWN, 0).astype(np.uint8)


def read_u32(op: Operand, mode: str, ins: Instruction) -> Reader:
    if isinstance(op, Reg):
        if op.kind not in ("R", "UR"):
            raise TraceError(f"register {op.kind}{op.index} where a 32-bit value is read", ins)
        if op.is_zero:
            z = u32(0)
            zero = _apply_mods(z, op.neg, op.inv, op.abs, mode)
            return lambda b, ix: (zero, 0)
        i = op.index
        neg, inv, ab = op.neg, op.inv, op.abs
        half = _half_sel(op.sel) if mode == "h" else None
        plain = not (neg or inv or ab or half)
        if op.kind == "R":
            if plain:
                return lambda b, ix: (b.r[i][ix], b.tr[i][ix])

            def rd(b: Block, ix: Idx) -> tuple[Any, Any]:
                v = b.r[i][ix]
                if half:
                    v = half(v)
                return _apply_mods(v, neg, inv, ab, mode), b.tr[i][ix]

            return rd
        if plain:
            return lambda b, ix: (b.ur[i][ix], b.tur[i][ix])

        def rdu(b: Block, ix: Idx) -> tuple[Any, Any]:
            v = b.ur[i][ix]
            if half:
                v = half(v)
            return _apply_mods(v, neg, inv, ab, mode), b.tur[i][ix]

        return rdu
    if isinstance(op, Imm) and op.reloc is not None:  # an address the driver fills in
        unknown = u32(0)
        return lambda b, ix: (unknown, TAINT_UNKNOWN)
    if isinstance(op, Imm):
        bits = imm_bits(op, mode)
        if mode == "h":
            bits = bits | (bits << 16)
        val = _apply_mods(
            u32(bits), op.neg and mode == "i" and op.int_value is None, False, False, mode
        )
        if op.abs:
            val = _apply_mods(val, False, False, True, mode)
        return lambda b, ix: (val, 0)
    if isinstance(op, Const):
        return _read_const(op, mode, ins, 4)
    raise TraceError(f"operand '{op}' cannot be read as a 32-bit value", ins)


def _half_sel(sel: tuple[str, ...]) -> Callable[[Any], Any] | None:
    """Selectors of a half2 operand: H0_H0 repeats the low half, H1_H1 the high one."""
    if "H0_H0" in sel:
        return lambda v: (v & np.uint32(0xFFFF)) * np.uint32(0x10001)
    if "H1_H1" in sel:
        return lambda v: (v >> np.uint32(16)) * np.uint32(0x10001)
    return None


def _read_const(op: Const, mode: str, ins: Instruction, width: int) -> Reader:
    bank, off = op.bank, op.offset
    dtype = np.uint32 if width == 4 else np.uint64
    # a half2 operand's selector (c[0x0][0x168].H1_H1: a __half parameter in the upper
    # half of its word, repeated)
    half = _half_sel(op.sel) if mode == "h" and width == 4 else None
    if op.reg is None:
        cache: dict[int, tuple[Any, Any]] = {}

        def rc(b: Block, ix: Idx) -> tuple[Any, Any]:
            key = id(b)
            if key not in cache:
                raw, t = const_read(b, bank, off, width, ins)
                v = np.frombuffer(raw.tobytes(), dtype=dtype)[0]
                v = np.array(v, dtype=dtype)
                if half is not None:
                    v = np.asarray(half(v), dtype=dtype)
                if width == 4:
                    v = _apply_mods(v, op.neg, op.inv, op.abs, mode)
                else:
                    v = _apply_mods64(v, op.neg, op.abs, mode)
                cache.clear()
                cache[key] = (v, np.uint8(t) if np.ndim(t) == 0 else np.uint8(t.max()))
            return cache[key]

        return rc
    base = read_u32(op.reg, "i", ins)

    def rcr(b: Block, ix: Idx) -> tuple[Any, Any]:
        r, t = base(b, ix)
        offs = r.astype(np.int64) + off
        raw, tc = const_read(b, bank, offs, width, ins)
        v = np.ascontiguousarray(raw).view(dtype)[..., 0]
        if half is not None:
            v = half(v)
        if width == 4:
            v = _apply_mods(v, op.neg, op.inv, op.abs, mode)
        else:
            v = _apply_mods64(v, op.neg, op.abs, mode)
        return v, t | tc

    return rcr


def read_u64(op: Operand, ins: Instruction, mode: str = "i") -> Reader:
    """A 64-bit operand: a register pair, a constant, or a sign-extended immediate."""
    if isinstance(op, Reg):
        if op.is_zero:  # -RZ of a double operation is -0 (DADD -RZ, -a: -(+0) is -0)
            z = _apply_mods64(np.array(0, dtype=np.uint64), op.neg, op.abs, mode)
            return lambda b, ix: (z, 0)
        if op.kind not in ("R", "UR"):
            raise TraceError(f"register {op.kind}{op.index} where a 64-bit value is read", ins)
        i = op.index
        neg, ab = op.neg, op.abs
        uniform = op.kind != "R"

        def rd(b: Block, ix: Idx) -> tuple[Any, Any]:
            regs, taint = (b.ur, b.tur) if uniform else (b.r, b.tr)
            v = (regs[i + 1][ix].astype(np.uint64) << np.uint64(32)) | regs[i][ix]  # a new array
            t = taint[i][ix] | taint[i + 1][ix]
            return (_apply_mods64(v, neg, ab, mode) if neg or ab else v), t

        return rd
    if isinstance(op, Imm):
        if mode == "d":
            val = np.array(op.float_value, dtype=np.float64).view(np.uint64)
            if op.text.startswith("0x") and op.int_value is not None:
                # a 32-bit hex immediate of a double op holds the upper word
                val = np.array(op.int_value << 32, dtype=np.uint64)
        else:
            iv = op.int_value if op.int_value is not None else 0
            if iv & 0x80000000 and iv < (1 << 32):
                iv -= 1 << 32
            val = np.array(iv & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64)
        return lambda b, ix: (val, 0)
    if isinstance(op, Const):
        return _read_const(op, mode, ins, 8)
    raise TraceError(f"operand '{op}' cannot be read as a 64-bit value", ins)


def read_pred(op: Operand, ins: Instruction) -> Reader:
    if not isinstance(op, Reg) or op.kind not in ("P", "UP"):
        raise TraceError(f"expected a predicate, found '{op}'", ins)
    i, neg = op.index, op.not_
    if i == PT:
        v = np.array(not neg)
        return lambda b, ix: (v, 0)
    # a copy, never a view of the predicate file: an instruction that writes two predicates
    # reads its predicate operand after writing the first (``HSETP2.LEU.XOR P0, P1, R5, R6,
    # P0``: P1 combines the high compare with the P0 read, not the P0 just written); a block
    # of converged threads is indexed by a slice, whose rows are views
    if op.kind == "P":
        if neg:
            return lambda b, ix: (~b.p[i][ix], b.tp[i][ix].copy())
        return lambda b, ix: (b.p[i][ix].copy(), b.tp[i][ix].copy())
    if neg:
        return lambda b, ix: (~b.up[i][ix], b.tup[i][ix].copy())
    return lambda b, ix: (b.up[i][ix].copy(), b.tup[i][ix].copy())


def _nowrite(b: Block, ix: Idx, v: Any, t: Any) -> None:
    return None


def _put(values: Any, taints: Any, b: Block, ix: Idx, v: Any, t: Any) -> None:
    """Write one register's (or predicate's) row: at the threads ``ix``, or, in a wide step
    (:meth:`.state.Block.run_wide`), wherever the block's mask is set."""
    if b.mask is not None:
        np.copyto(values, v, where=b.mask, casting="unsafe")
        np.copyto(taints, t, where=b.mask, casting="unsafe")
        return
    values[ix] = v
    taints[ix] = t


def forget_bytes(b: Block, kind: str, index: int, ix: Idx) -> None:
    """Register ``kind``/``index`` of the threads ``ix`` (a wide step's: where the mask is)
    took one taint for all its bytes: they no longer differ (:mod:`.ops.byte_taint`). Every
    change of a register's taint but the byte-exact steps' calls it where
    :attr:`.state.Block.byte_clean` holds anything."""
    rec = b.byte_clean.get((kind, index))
    if rec is None:
        return
    if b.mask is not None:
        rec[:, b.mask] = 0
    elif isinstance(ix, slice):  # every thread
        del b.byte_clean[(kind, index)]
    else:
        rec[:, ix] = 0


def write_u32(op: Operand, ins: Instruction) -> Writer:
    if not isinstance(op, Reg) or op.kind not in ("R", "UR"):
        raise TraceError(f"expected a destination register, found '{op}'", ins)
    if op.is_zero:
        return _nowrite
    i = op.index
    _destination(op.kind, i, 1)
    if op.kind == "R":

        def wr(b: Block, ix: Idx, v: Any, t: Any) -> None:
            _put(b.r[i], b.tr[i], b, ix, v, t)
            if b.byte_clean:
                forget_bytes(b, "R", i, ix)

        return wr

    def wu(b: Block, ix: Idx, v: Any, t: Any) -> None:
        _put(b.ur[i], b.tur[i], b, ix, v, t)
        if b.byte_clean:
            forget_bytes(b, "UR", i, ix)

    return wu


def write_regs(op: Operand, count: int, ins: Instruction) -> Writer:
    """A destination of ``count`` consecutive registers; the value is (count, n) uint32."""
    if not isinstance(op, Reg) or op.kind not in ("R", "UR"):
        raise TraceError(f"expected a destination register, found '{op}'", ins)
    if op.is_zero:
        return _nowrite
    i = op.index
    limit = RZ if op.kind == "R" else URZ
    if i + count > limit:
        raise TraceError(f"register range {op.kind}{i}..{i + count - 1} runs past the last", ins)
    _destination(op.kind, i, count)

    def wr(b: Block, ix: Idx, v: Any, t: Any) -> None:
        regs, taint = (b.r, b.tr) if op.kind == "R" else (b.ur, b.tur)
        for k in range(count if b.byte_clean else 0):
            forget_bytes(b, op.kind, i + k, ix)
        if (
            isinstance(v, np.ndarray)
            and v.ndim == 2
            and not isinstance(t, (list, tuple))
            and not np.may_share_memory(v, regs)
        ):  # a new (count, n) array (a load's): every register at once
            regs[i : i + count, ix] = v
            taint[i : i + count, ix] = t
            return
        per_row = isinstance(t, (list, tuple)) or (isinstance(t, np.ndarray) and t.ndim == 2)
        for k in range(count):
            regs[i + k][ix] = v[k]
            taint[i + k][ix] = t[k] if per_row else t

    return wr


def read_regs(op: Operand, count: int, ins: Instruction) -> Reader:
    """``count`` consecutive registers as a (count, n) array and their OR-ed taint list."""
    if not isinstance(op, Reg) or op.kind not in ("R", "UR"):
        raise TraceError(f"expected a source register, found '{op}'", ins)
    i = op.index

    def rd(b: Block, ix: Idx) -> tuple[Any, Any]:
        n = b.count(ix)
        if op.is_zero:
            return np.zeros((count, n), dtype=np.uint32), [0] * count
        regs, taint = (b.r, b.tr) if op.kind == "R" else (b.ur, b.tur)
        return regs[i : i + count, ix], [taint[i + k][ix] for k in range(count)]

    return rd


def write_u64(op: Operand, ins: Instruction) -> Writer:
    w = write_regs(op, 2, ins)

    def wr(b: Block, ix: Idx, v: Any, t: Any) -> None:
        words = np.ascontiguousarray(v, dtype="<u8").view("<u4")  # low word first
        w(b, ix, (words[0::2], words[1::2]), t)

    return wr


def write_pred(op: Operand, ins: Instruction) -> Writer:
    if not isinstance(op, Reg) or op.kind not in ("P", "UP"):
        raise TraceError(f"expected a destination predicate, found '{op}'", ins)
    if op.is_true:
        return _nowrite
    i = op.index
    _destination(op.kind, i, 1)
    if op.kind == "P":

        def wp(b: Block, ix: Idx, v: Any, t: Any) -> None:
            _put(b.p[i], b.tp[i], b, ix, v, t)

        return wp

    def wup(b: Block, ix: Idx, v: Any, t: Any) -> None:
        _put(b.up[i], b.tup[i], b, ix, v, t)

    return wup


def is_pred(op: Operand) -> bool:
    return isinstance(op, Reg) and op.kind in ("P", "UP")
