"""Bitwise instructions (and their uniform U* forms): three-input logic (LOP3, PLOP3),
funnel and plain shifts, byte permutes (PRMT), and bit-field work: population count,
find leading one, bit reverse, masks, sign extension and predicate <-> register packing.

Values are uint32 arrays, as in :mod:`.ops_int`, which also holds ``both``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Imm, Operand, Reg, Special
from ...distinct_rows import spread
from ..op_table import Context, Step, op, unsupported
from ..operands import is_pred, read_pred, read_u32, write_pred, write_u32
from ..state import PT, Block, Idx
from .byte_taint import byte_reader, byte_writer, lop3_taint, prmt_bytes
from .integer import M32, both

_U = np.uint32


#: the truth tables nvcc emits most, each as its expression (a=0xF0, b=0xCC, c=0xAA)
_KNOWN_LUTS: dict[int, Any] = {
    0xC0: lambda a, b, c: a & b,
    0xFC: lambda a, b, c: a | b,
    0x3C: lambda a, b, c: a ^ b,
    0x96: lambda a, b, c: a ^ b ^ c,
    0xF8: lambda a, b, c: a | (b & c),
    0xFE: lambda a, b, c: a | b | c,
    0xE2: lambda a, b, c: (a & b) | (c & ~b),
    0x80: lambda a, b, c: a & b & c,
    0x33: lambda a, b, c: ~b,
    0x0F: lambda a, b, c: ~a,
    0x55: lambda a, b, c: ~c,
    0xF0: lambda a, b, c: a,
    0xCC: lambda a, b, c: b,
    0xAA: lambda a, b, c: c,
}


def lut3(lut: int, a: Any, b: Any, c: Any) -> Any:
    """The bitwise function of three inputs whose truth table is ``lut``
    (a=0xF0, b=0xCC, c=0xAA)."""
    f = _KNOWN_LUTS.get(lut)
    if f is not None:
        return f(a, b, c)
    out: Any = None
    for k in range(8):
        if lut >> k & 1:
            term = (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
            out = term if out is None else out | term
    if out is None:
        return a & ~a
    return out


@op(*both("LOP3"))
def _lop3(ins: Instruction, ctx: Context) -> Step:
    ops = list(ins.operands)
    wp = None
    if is_pred(ops[0]):
        wp = write_pred(ops.pop(0), ins)
    if len(ops) != 6 or not isinstance(ops[4], Imm) or ops[4].int_value is None:
        raise unsupported(ins)
    lut = ops[4].int_value
    w = write_u32(ops[0], ins)
    ra, rb, rc = (read_u32(o, "i", ins) for o in ops[1:4])
    bytes_of = [byte_reader(o) for o in ops[1:4]]

    def fn(p: Any, q: Any, r: Any) -> Any:
        return lut3(lut, p, q, r)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (z, tz) = ra(b, ix), rb(b, ix), rc(b, ix)
        v = np.asarray(lut3(lut, x, y, z), dtype=_U)
        t = tx | ty | tz
        if v.ndim == 0:
            v = np.full(b.count(ix), v, dtype=_U)
        if not np.count_nonzero(t):
            w(b, ix, v, t)
            if wp is not None:
                wp(b, ix, v != 0, t)
            return
        # taint by byte and bit: only what the tainted bits decide (ops/byte_taint.py)
        taints = (tx, ty, tz)
        by_byte = [f(b, ix, tt) for f, tt in zip(bytes_of, taints, strict=True)]
        tr, tp = lop3_taint(fn, [x, y, z], list(taints), by_byte, len(v))
        w(b, ix, v, tr)
        if wp is not None:
            wp(b, ix, v != 0, tp)

    return step


@op("PLOP3", "UPLOP3")
def _plop3(ins: Instruction, ctx: Context) -> Step:
    """``PLOP3.LUT p, q, a, b, c, lut1, lut2``: p and q are the 3-input truth tables of a, b
    and c; ``UPLOP3`` the same on uniform predicates."""
    ops = ins.operands
    if len(ops) != 7 or not all(isinstance(o, Imm) for o in ops[5:7]):
        raise unsupported(ins)
    w1, w2 = write_pred(ops[0], ins), write_pred(ops[1], ins)
    ra, rb, rc = (read_pred(o, ins) for o in ops[2:5])
    l1 = ops[5].int_value if isinstance(ops[5], Imm) else 0
    l2 = ops[6].int_value if isinstance(ops[6], Imm) else 0
    fixed = [not o.not_ if isinstance(o, Reg) and o.index == PT else None for o in ops[2:5]]
    if fixed.count(None) == 1:  # one input not PT: each result a function of it alone
        free = fixed.index(None)
        return _plop3_of_one(
            (ra, rb, rc)[free], w1, w2, _of_one(l1 or 0, fixed), _of_one(l2 or 0, fixed)
        )

    def step(b: Block, ix: Idx) -> None:
        n = b.count(ix)
        (x, tx), (y, ty), (z, tz) = ra(b, ix), rb(b, ix), rc(b, ix)
        x, y, z = (spread(v, n) for v in (x, y, z))
        t = tx | ty | tz
        w1(b, ix, lut3(l1 or 0, x, y, z), t)
        w2(b, ix, lut3(l2 or 0, x, y, z), t)

    return step


def _of_one(lut: int, fixed: list[bool | None]) -> tuple[bool, bool]:
    """A 3-input truth table's results where the one input not in ``fixed`` (the others'
    values) is false and true."""
    out = []
    for v in (False, True):
        a, b, c = (v if f is None else f for f in fixed)
        out.append(bool(lut >> (4 * a + 2 * b + c) & 1))
    return out[0], out[1]


def _plop3_of_one(
    read: Any, w1: Any, w2: Any, f1: tuple[bool, bool], f2: tuple[bool, bool]
) -> Step:
    """PLOP3 whose inputs but one are PT: each result that input, its negation or a constant
    (the values and taint of :func:`lut3` on the three, without its terms)."""

    def result(f: tuple[bool, bool], v: Any) -> Any:
        if f[0] != f[1]:
            return v if f[1] else ~v
        return v | ~v if f[0] else v & ~v

    def step(b: Block, ix: Idx) -> None:
        v, t = read(b, ix)
        v = spread(v, b.count(ix))
        w1(b, ix, result(f1, v), t)
        w2(b, ix, result(f2, v), t)

    return step


@op(*both("SHF"))
def _shf(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) != 4:
        raise unsupported(ins)
    mods = set(ins.mods)
    left = "L" in mods
    hi = "HI" in mods
    wide = bool(mods & {"U64", "S64"})
    signed = bool(mods & {"S32", "S64"})
    wrap = "W" in mods
    w = write_u32(ops[0], ins)
    ra, rs, rc = read_u32(ops[1], "i", ins), read_u32(ops[2], "i", ins), read_u32(ops[3], "i", ins)
    limit = 64 if wide else 32

    def step(b: Block, ix: Idx) -> None:
        (a, ta), (s, ts), (c, tc) = ra(b, ix), rs(b, ix), rc(b, ix)
        sh = s.astype(np.int64)
        sh = sh & (limit - 1) if wrap else np.minimum(sh, limit)
        if signed:
            full = (c.view(np.int32).astype(np.int64) << 32) | a.astype(np.int64)
        else:
            full = ((c.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)).view(np.int64)
        full = np.asarray(full)
        shu = np.asarray(sh)
        if left:
            r = np.where(
                shu >= 64, 0, full.view(np.uint64) << np.minimum(shu, 63).astype(np.uint64)
            )
            r = np.asarray(r, dtype=np.uint64)
        elif signed:
            r = (full >> np.minimum(shu, 63)).view(np.uint64)
        else:
            r = np.where(
                shu >= 64, 0, full.view(np.uint64) >> np.minimum(shu, 63).astype(np.uint64)
            ).astype(np.uint64)
        out = (r >> np.uint64(32)) if hi else r
        w(b, ix, (out & np.uint64(0xFFFFFFFF)).astype(_U), ta | ts | tc)

    count = _fixed_count(ops[2])  # a shift by an immediate below 64: no clamp to choose
    k = None if count is None else (count & (limit - 1) if wrap else min(count, limit))
    if k is None or k >= 64:
        return step
    by = np.uint64(k)

    def fixed(b: Block, ix: Idx) -> None:
        (a, ta), (c, tc) = ra(b, ix), rc(b, ix)
        if signed:
            full = np.asarray((c.view(np.int32).astype(np.int64) << 32) | a.astype(np.int64))
            r = (full >> k).view(np.uint64) if not left else full.view(np.uint64) << by
        else:
            r = np.asarray((c.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64))
            r = r << by if left else r >> by
        out = (r >> np.uint64(32)) if hi else r
        w(b, ix, (out & np.uint64(0xFFFFFFFF)).astype(_U), ta | tc)

    return fixed


def _fixed_count(o: Operand) -> int | None:
    """The value of an immediate shift count (as the reader reads it), else None."""
    if not isinstance(o, Imm) or o.reloc is not None or o.int_value is None or o.abs:
        return None
    return o.int_value & 0xFFFFFFFF


@op(*both("PRMT"))
def _prmt(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) != 4 or len(ins.mods) > 0:
        raise unsupported(ins, "only the default byte-select mode")
    w, wb = write_u32(ops[0], ins), byte_writer(ops[0], ins)
    ra, rsel, rb = (
        read_u32(ops[1], "i", ins),
        read_u32(ops[2], "i", ins),
        read_u32(ops[3], "i", ins),
    )
    bytes_a, bytes_c = byte_reader(ops[1]), byte_reader(ops[3])

    def step(b: Block, ix: Idx) -> None:
        (a, ta), (sel, ts), (c, tc) = ra(b, ix), rsel(b, ix), rb(b, ix)
        n = b.count(ix)
        src = (c.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
        src = spread(src, n)
        s = spread(sel, n).astype(np.uint64)
        out = np.zeros(n, dtype=np.uint64)
        for k in range(4):
            nib = (s >> np.uint64(4 * k)) & np.uint64(0xF)
            byte = (src >> ((nib & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
            rep = np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0))
            byte = np.where(nib & np.uint64(8), rep, byte)
            out |= byte << np.uint64(8 * k)
        t = ta | ts | tc
        if not np.count_nonzero(t):
            w(b, ix, out.astype(_U), t)
            return
        # each byte the taint of the byte it takes (ops/byte_taint.py)
        tb = prmt_bytes(sel, ta, tc, ts, bytes_a(b, ix, ta), bytes_c(b, ix, tc), n)
        if tb is not None:
            t = tb[0] | tb[1] | tb[2] | tb[3]
        wb(b, ix, out.astype(_U), t, tb)

    return step


def _unary(ins: Instruction, fn: Any) -> Step:
    ops = ins.operands
    w = write_u32(ops[0], ins)
    ra = read_u32(ops[-1], "i", ins)

    def step(b: Block, ix: Idx) -> None:
        v, t = ra(b, ix)
        w(b, ix, spread(fn(np.asarray(v, dtype=_U)), b.count(ix)).astype(_U), t)

    return step


def popcount(v: Any) -> Any:
    v = v.astype(np.uint32)
    v = v - ((v >> 1) & 0x55555555)
    v = (v & 0x33333333) + ((v >> 2) & 0x33333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F
    return ((v * np.uint32(0x01010101)) & 0xFFFFFFFF) >> 24


def _flo(signed: bool, shift: bool) -> Any:
    def f(v: Any) -> Any:
        x = v.view(np.int32).astype(np.int64) if signed else v.astype(np.int64)
        if signed:
            x = np.where(x < 0, ~x, x)
        pos = np.full(x.shape, -1, dtype=np.int64)
        for k in range(32):
            pos = np.where((x >> k) & 1, k, pos)
        if shift:
            pos = np.where(pos < 0, -1, 31 - pos)
        return pos.astype(np.int64) & 0xFFFFFFFF

    return f


def _brev(v: Any) -> Any:
    out = np.zeros(v.shape, dtype=np.uint32)
    for k in range(32):
        out |= ((v >> np.uint32(k)) & np.uint32(1)) << np.uint32(31 - k)
    return out


@op(*both("POPC"))
def _popc(ins: Instruction, ctx: Context) -> Step:
    return _unary(ins, popcount)


@op(*both("FLO"))
def _flo_op(ins: Instruction, ctx: Context) -> Step:
    return _unary(ins, _flo("U32" not in ins.mods, "SH" in ins.mods))


@op(*both("BREV"))
def _brev_op(ins: Instruction, ctx: Context) -> Step:
    return _unary(ins, _brev)


@op(*both("BMSK"))
def _bmsk(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    w = write_u32(ops[0], ins)
    rpos, rw = read_u32(ops[1], "i", ins), read_u32(ops[2], "i", ins)
    wrap = "W" in ins.mods

    def step(b: Block, ix: Idx) -> None:
        (p, tp), (n, tn) = rpos(b, ix), rw(b, ix)
        p64, n64 = p.astype(np.int64) & 0xFF, n.astype(np.int64) & 0xFF
        if wrap:
            p64, n64 = p64 & 31, n64 & 31
        else:
            p64, n64 = np.minimum(p64, 32), np.minimum(n64, 32)
        m = ((np.int64(1) << n64) - 1) << p64
        w(b, ix, spread(m & M32, b.count(ix)).astype(_U), tp | tn)

    return step


@op(*both("SGXT"))
def _sgxt(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    w = write_u32(ops[0], ins)
    ra, rw = read_u32(ops[1], "i", ins), read_u32(ops[2], "i", ins)
    unsigned = "U32" in ins.mods

    def step(b: Block, ix: Idx) -> None:
        (a, ta), (n, tn) = ra(b, ix), rw(b, ix)
        bits = np.minimum(n.astype(np.int64) & 0xFF, 32)
        x = a.astype(np.int64) & ((np.int64(1) << bits) - 1)
        if not unsigned:
            sign = (x >> np.maximum(bits - 1, 0)) & 1
            x = np.where((sign == 1) & (bits > 0), x - (np.int64(1) << bits), x)
        w(b, ix, spread(x & M32, b.count(ix)).astype(_U), ta | tn)

    return step


def _byte_shift(ins: Instruction, reg: Operand) -> int:
    """The bit offset of P2R/R2P's byte: ``.B1``..``.B3`` on the opcode or on the register
    (``R2P PR, R7.B1, 0x3`` reads bits 8.. of R7)."""
    sel = reg.sel if isinstance(reg, Reg) else ()
    for m in (*ins.mods, *sel):
        if m in ("B1", "B2", "B3"):
            return 8 * int(m[1])
    return 0


def _predicate_file(ins: Instruction, operand: Operand) -> None:
    """P2R/R2P name the predicates as ``PR`` (``UPR`` for the uniform forms)."""
    want = "UPR" if ins.opcode.startswith("U") else "PR"
    if not (isinstance(operand, Special) and operand.name == want):
        raise unsupported(ins, f"expected {want} as the predicate operand")


@op("P2R", "UP2UR")
def _p2r(ins: Instruction, ctx: Context) -> Step:
    """``P2R Rd, PR, Rb, mask``: Rd = Rb with bit (shift + k) replaced by predicate k for
    every k in ``mask`` (k < 7); shift is 8 x the byte of ``.B1``..``.B3``. ``UP2UR URd,
    UPR, URb, mask`` the same from the uniform predicates into a uniform register."""
    ops = ins.operands
    if len(ops) != 4 or not isinstance(ops[3], Imm):
        raise unsupported(ins)
    _predicate_file(ins, ops[1])
    w = write_u32(ops[0], ins)
    rb = read_u32(ops[2], "i", ins)
    mask = (ops[3].int_value or 0) & 0x7F
    shift = _byte_shift(ins, ops[2])
    uniform = ins.opcode.startswith("U")

    def step(b: Block, ix: Idx) -> None:
        base, t = rb(b, ix)
        preds, taints = (b.up, b.tup) if uniform else (b.p, b.tp)
        v = np.zeros(b.count(ix), dtype=np.uint32)
        tv = spread(t, b.count(ix)).copy()
        for k in range(7):
            if mask >> k & 1:
                v |= preds[k][ix].astype(np.uint32) << np.uint32(k)
                tv |= taints[k][ix]
        keep = np.uint32(~(mask << shift) & 0xFFFFFFFF)
        w(b, ix, (base & keep) | (v << np.uint32(shift)), tv)

    return step


@op("R2P")
def _r2p(ins: Instruction, ctx: Context) -> Step:
    """``R2P PR, Ra, mask``: predicate k = bit (shift + k) of Ra for every k in ``mask``."""
    ops = ins.operands
    if len(ops) != 3 or not isinstance(ops[2], Imm):
        raise unsupported(ins)
    _predicate_file(ins, ops[0])
    ra = read_u32(ops[1], "i", ins)
    mask = (ops[2].int_value or 0) & 0x7F
    shift = _byte_shift(ins, ops[1])
    kind = "UP" if ins.opcode.startswith("U") else "P"
    # each through a writer: the predicates are the instruction's destinations, which a
    # decision on data around it taints (taint_flow; a guard of P1 set here was left clean)
    writes = [(k, write_pred(Reg(kind, k), ins)) for k in range(7) if mask >> k & 1]

    def step(b: Block, ix: Idx) -> None:
        v, t = ra(b, ix)
        for k, w in writes:
            w(b, ix, (v >> np.uint32(shift + k)) & np.uint32(1) != 0, t)

    return step
