"""Integer arithmetic, compare, select and move instructions (and their uniform U* forms).

Values are uint32 arrays; arithmetic wraps modulo 2**32 like the hardware. Carries
between the halves of a 64-bit addition travel in predicates: an instruction's carry
count c (0..2) sets its first carry-out predicate to c >= 1 and its second to c >= 2,
and the ``.X`` form adds its carry-in predicates back, which is the same sum. The
bitwise families (logic, shifts, permutes, bit fields) are in :mod:`.ops_bits`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Imm, Operand, Reg
from ...distinct_rows import spread
from ..op_table import Context, Step, op, unsupported
from ..operands import is_pred, read_pred, read_u32, read_u64, write_pred, write_u32, write_u64
from ..state import Block, Idx

M32 = np.int64(0xFFFFFFFF)
_U = np.uint32


def both(names: str) -> tuple[str, ...]:
    """A name and its uniform-datapath twin (IADD3 and UIADD3)."""
    out: list[str] = []
    for n in names.split():
        out += [n, "U" + n]
    return tuple(out)


def split_preds(
    ops: tuple[Operand, ...],
) -> tuple[Operand, list[Operand], list[Operand], list[Operand]]:
    """(destination, carry-out predicates, sources, trailing predicates)."""
    dest = ops[0]
    i = 1
    outs: list[Operand] = []
    while i < len(ops) and is_pred(ops[i]) and not _negated(ops[i]):
        outs.append(ops[i])
        i += 1
    rest = list(ops[i:])
    ins_preds: list[Operand] = []
    while rest and is_pred(rest[-1]):
        ins_preds.insert(0, rest.pop())
    return dest, outs, rest, ins_preds


def _negated(o: Operand) -> bool:
    return isinstance(o, Reg) and o.not_


def _carry_in(preds: list[Operand], ins: Instruction) -> list[Any]:
    """Readers of the carry-in predicates; ``!PT`` (always 0) is left out."""
    return [read_pred(p, ins) for p in preds if not (isinstance(p, Reg) and p.is_true and p.not_)]


def _carry_outs(outs: list[Operand], ins: Instruction) -> list[Any]:
    return [write_pred(p, ins) for p in outs]


def _set_carries(b: Block, ix: Idx, writers: list[Any], carry: Any, taint: Any) -> None:
    for k, w in enumerate(writers):
        w(b, ix, carry >= k + 1, taint)


def _finish_sum(
    b: Block,
    ix: Idx,
    total: Any,
    taint: Any,
    carry_in: list[Any],
    write: Any,
    carry_out: list[Any],
) -> None:
    """An adder's last steps: add the carry-in predicates to ``total`` (int64), write its
    low 32 bits and set the carry-out predicates from what is above them."""
    for r in carry_in:
        p, t = r(b, ix)
        total = total + p.astype(np.int64)
        taint = taint | t
    write(b, ix, (total & M32).astype(_U), taint)
    if carry_out:
        _set_carries(b, ix, carry_out, total >> 32, taint)


@op(*both("IADD3"))
def _iadd3(ins: Instruction, ctx: Context) -> Step:
    dest, outs, srcs, cin = split_preds(ins.operands)
    if len(srcs) != 3:
        raise unsupported(ins, "expected three sources")
    if "64" in ins.mods:
        return _iadd3_64(ins, dest, outs, srcs, cin)
    # a '-' operand is added as ~x + 1 so that the carry matches a subtraction
    negs = [isinstance(s, Reg) and s.neg for s in srcs]
    plain = [_strip_neg(s) for s in srcs]
    ra, rb, rc = (read_u32(s, "i", ins) for s in plain)
    w = write_u32(dest, ins)
    wout = _carry_outs(outs, ins)
    rin = _carry_in(cin, ins) if "X" in ins.mods else []
    zero = [isinstance(s, Reg) and s.is_zero and not s.inv for s in plain]
    if not wout and not rin:  # no carry: the sum modulo 2^32 is all there is
        return _sum32(ra, rb, rc, negs, w, zero)
    # RZ adds nothing (-RZ adds 2^32, a carry)
    terms = [(r, n) for r, n, z in zip((ra, rb, rc), negs, zero, strict=True) if n or not z]

    def step(b: Block, ix: Idx) -> None:
        total: Any = np.int64(0)
        taint: Any = 0
        for r, neg in terms:
            v, t = r(b, ix)
            v = v.astype(np.int64)
            total = total + ((~v & M32) + 1 if neg else v)
            taint = taint | t
        _finish_sum(b, ix, total, taint, rin, w, wout)

    return step


def _sum32(ra: Any, rb: Any, rc: Any, negs: list[bool], w: Any, zero: list[bool]) -> Step:
    """A three-way add without carries, in uint32 arithmetic (wrapping as the hardware); the
    ``zero`` terms (RZ) are left out."""
    ufuncs = [np.subtract if n else np.add for n in negs]
    terms = [(r, f) for r, f, z in zip((ra, rb, rc), ufuncs, zero, strict=True) if not z]

    def step(b: Block, ix: Idx) -> None:
        total: Any = _U(0)
        taint: Any = 0
        for r, ufunc in terms:
            v, t = r(b, ix)
            total = ufunc(total, np.asarray(v, dtype=_U), dtype=_U)
            taint = taint | t
        w(b, ix, total, taint)

    return step


def _iadd3_64(
    ins: Instruction, dest: Operand, outs: list[Operand], srcs: list[Operand], cin: list[Operand]
) -> Step:
    """``IADD3.64``: three 64-bit register pairs (a '-' one negated) added modulo 2^64, as
    Triton's wgmma loops step a descriptor pair (``UIADD3.64 UR24, UR6, -UR24, URZ``)."""
    if outs or cin:
        raise unsupported(ins, "a 64-bit add with carries")
    readers = [read_u64(s, ins) for s in srcs]  # a '-' register pair is read negated
    w = write_u64(dest, ins)

    def step(b: Block, ix: Idx) -> None:
        total: Any = np.zeros(b.count(ix), dtype=np.uint64)
        taint: Any = 0
        for r in readers:
            v, t = r(b, ix)
            total = total + np.asarray(v, dtype=np.uint64)
            taint = taint | t
        w(b, ix, total, taint)

    return step


def _strip_neg(o: Operand) -> Operand:
    if isinstance(o, Reg) and o.neg:
        return Reg(o.kind, o.index, inv=o.inv, abs=o.abs, sel=o.sel)
    return o


@op(*both("IMAD"))
def _imad(ins: Instruction, ctx: Context) -> Step:
    dest, outs, srcs, cin = split_preds(ins.operands)
    mods = set(ins.mods)
    signed = "U32" not in mods
    if len(srcs) != 3:
        raise unsupported(ins, "expected three sources")
    a_op, b_op, c_op = srcs
    ra, rb = read_u32(a_op, "i", ins), read_u32(b_op, "i", ins)
    rin = _carry_in(cin, ins) if "X" in mods else []
    wout = _carry_outs(outs, ins)
    if "WIDE" in mods:
        rc64 = read_u64(c_op, ins)
        w64 = write_u64(dest, ins)

        def wide(b: Block, ix: Idx) -> None:
            (x, tx), (y, ty), (z, tz) = ra(b, ix), rb(b, ix), rc64(b, ix)
            if signed:
                prod = (
                    x.view(np.int32).astype(np.int64) * y.view(np.int32).astype(np.int64)
                ).astype(np.uint64)
            else:
                prod = x.astype(np.uint64) * y.astype(np.uint64)
            t = tx | ty | tz
            total = prod + z
            for r in rin:
                p_, tp = r(b, ix)
                total = total + p_.astype(np.uint64)
                t = t | tp
            w64(b, ix, total, t)
            if wout:  # the carry out of the 64-bit addition
                _set_carries(b, ix, wout, (total < prod).astype(np.int64), t)

        return wide
    hi = "HI" in mods
    # IMAD.HI adds a 64-bit c (a register pair) to the 64-bit product and keeps the top half
    rc = read_u64(c_op, ins) if hi else read_u32(c_op, "i", ins)
    w = write_u32(dest, ins)
    alone = not hi and not rin and not wout  # the low word alone: a * b + c modulo 2^32

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (z, tz) = ra(b, ix), rb(b, ix), rc(b, ix)
        t = tx | ty | tz
        if alone:
            prod = np.multiply(np.asarray(x, dtype=_U), np.asarray(y, dtype=_U), dtype=_U)
            w(b, ix, np.add(prod, np.asarray(z, dtype=_U), dtype=_U), t)
            return
        if hi:
            if signed:
                p = x.view(np.int32).astype(np.int64) * y.view(np.int32).astype(np.int64)
                p_lo = p & M32
                p_hi = p >> 32
            else:
                pu = x.astype(np.uint64) * y.astype(np.uint64)
                p_lo = (pu & np.uint64(0xFFFFFFFF)).astype(np.int64)
                p_hi = (pu >> np.uint64(32)).astype(np.int64)
            z64 = np.asarray(z, dtype=np.uint64)
            z_lo = (z64 & np.uint64(0xFFFFFFFF)).astype(np.int64)
            z_hi = (z64 >> np.uint64(32)).astype(np.int64)
            total = p_hi + z_hi + ((p_lo + z_lo) >> 32)
        else:
            total = (x.astype(np.uint64) * y.astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(
                np.int64
            ) + z.astype(np.int64)
        _finish_sum(b, ix, total, t, rin, w, wout)

    return step


@op(*both("LEA"))
def _lea(ins: Instruction, ctx: Context) -> Step:
    dest, outs, srcs, cin = split_preds(ins.operands)
    mods = set(ins.mods)
    if not srcs or not isinstance(srcs[-1], Imm) or srcs[-1].int_value is None:
        raise unsupported(ins, "expected a shift amount")
    s = srcs[-1].int_value & 63
    srcs = srcs[:-1]
    w = write_u32(dest, ins)
    wout = _carry_outs(outs, ins)
    rin = _carry_in(cin, ins) if "X" in mods else []
    if "HI" in mods:
        sx = "SX32" in mods
        if len(srcs) != (2 if sx else 3):
            raise unsupported(ins)
        ra, rb = read_u32(srcs[0], "i", ins), read_u32(srcs[1], "i", ins)
        rc = None if sx else read_u32(srcs[2], "i", ins)

        def hi(b: Block, ix: Idx) -> None:
            (a, ta), (bb, tb) = ra(b, ix), rb(b, ix)
            if rc is None:
                c, tc = (a.view(np.int32) >> 31).view(_U), 0
            else:
                c, tc = rc(b, ix)
            full = (c.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
            part = ((full >> np.uint64(32 - s)) & np.uint64(0xFFFFFFFF)).astype(np.int64)
            total = part + bb.astype(np.int64)
            t = ta | tb | tc
            _finish_sum(b, ix, total, t, rin, w, wout)

        return hi
    if len(srcs) != 2:
        raise unsupported(ins)
    ra, rb = read_u32(srcs[0], "i", ins), read_u32(srcs[1], "i", ins)
    if not wout and not rin and s < 32:  # (a << s) + b modulo 2^32

        def lo32(b: Block, ix: Idx) -> None:
            (a, ta), (bb, tb) = ra(b, ix), rb(b, ix)
            shifted = np.left_shift(np.asarray(a, dtype=_U), _U(s), dtype=_U)
            w(b, ix, np.add(shifted, np.asarray(bb, dtype=_U), dtype=_U), ta | tb)

        return lo32

    def lo(b: Block, ix: Idx) -> None:
        (a, ta), (bb, tb) = ra(b, ix), rb(b, ix)
        shifted = (a.astype(np.int64) << s) & M32
        total = shifted + bb.astype(np.int64)
        t = ta | tb
        _finish_sum(b, ix, total, t, rin, w, wout)

    return lo


#: ISETP's integer comparisons, by modifier (also what :mod:`..alike.agree` evaluates)
COMPARES = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}
_BOOL = {"AND": np.logical_and, "OR": np.logical_or, "XOR": np.logical_xor}


def compare_mods(ins: Instruction) -> tuple[str, str]:
    cmp_ = next((m for m in ins.mods if m in COMPARES or m in ("T", "F")), None)
    bop = next((m for m in ins.mods if m in _BOOL), "AND")
    if cmp_ is None:
        raise unsupported(ins, "no comparison")
    return cmp_, bop


@op(*both("ISETP"))
def _isetp(ins: Instruction, ctx: Context) -> Step:
    cmp_, bop = compare_mods(ins)
    ops = ins.operands
    ex = "EX" in ins.mods
    if len(ops) != (6 if ex else 5):
        raise unsupported(ins)
    w1, w2 = write_pred(ops[0], ins), write_pred(ops[1], ins)
    ra, rb = read_u32(ops[2], "i", ins), read_u32(ops[3], "i", ins)
    rp = read_pred(ops[4], ins)
    rprev = read_pred(ops[5], ins) if ex else None
    signed = "U32" not in ins.mods
    comb = _BOOL[bop]
    # which of the two predicates are written (not PT), and whether ``r AND PT`` is ``r``
    first, second = (not (isinstance(o, Reg) and o.is_true) for o in ops[:2])
    q = ops[4]
    as_is = bop == "AND" and isinstance(q, Reg) and q.is_true and not q.not_

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        if signed:
            x, y = x.view(np.int32), y.view(np.int32)
        t = tx | ty | tp
        if cmp_ in ("T", "F"):
            r = np.full(np.broadcast(x, y).shape, cmp_ == "T")
        elif rprev is None:
            r = COMPARES[cmp_](x, y)
        else:
            prev, tq = rprev(b, ix)
            t = t | tq
            eq = x == y
            if cmp_ in ("EQ", "NE"):
                r = (eq & prev) if cmp_ == "EQ" else (~eq | prev)
            else:
                strict = {"LT": "LT", "LE": "LT", "GT": "GT", "GE": "GT"}[cmp_]
                r = COMPARES[strict](x, y) | (eq & prev)
        if first:
            w1(b, ix, r if as_is else comb(r, p), t)
        if second:
            w2(b, ix, ~r if as_is else comb(~r, p), t)

    return step


@op(*both("SEL"), "FSEL")
def _sel(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) != 4:
        raise unsupported(ins)
    mode = "f" if ins.opcode == "FSEL" else "i"
    w = write_u32(ops[0], ins)
    ra, rb, rp = read_u32(ops[1], mode, ins), read_u32(ops[2], mode, ins), read_pred(ops[3], ins)

    def step(b: Block, ix: Idx) -> None:
        (x, tx), (y, ty), (p, tp) = ra(b, ix), rb(b, ix), rp(b, ix)
        n = b.count(ix)
        w(b, ix, spread(np.where(p, x, y), n).astype(_U), np.where(p, tx, ty) | tp)

    return step


@op(*both("MOV"))
def _mov(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) not in (2, 3):
        raise unsupported(ins)
    w = write_u32(ops[0], ins)
    ra = read_u32(ops[1], "i", ins)

    def step(b: Block, ix: Idx) -> None:
        v, t = ra(b, ix)
        n = b.count(ix)
        w(b, ix, spread(v, n), t)  # a row as is

    return step


@op("IABS")
def _iabs(ins: Instruction, ctx: Context) -> Step:
    w = write_u32(ins.operands[0], ins)
    ra = read_u32(ins.operands[1], "i", ins)

    def step(b: Block, ix: Idx) -> None:
        v, t = ra(b, ix)
        w(b, ix, np.abs(v.view(np.int32)).view(_U), t)

    return step
