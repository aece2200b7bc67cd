"""In which blocks a compare on the block index takes the representative's outcome on every
thread: from per-thread thresholds, without a thread-by-block table.

An ISETP compares ``a = ka(t) + Va(b)`` with ``c = kc(t) + Vc(b)`` (:mod:`.forms`), mod 2^32,
read signed or unsigned. Where only one side moves with the block (``Vc`` zero, else the two
swapped), thread ``t``'s outcome is a function of ``D = Va(b)`` alone, and the values of ``D``
that give it one outcome form one arc of the circle of 32-bit values (a signed compare is
the unsigned one with both sides' top bit flipped): ``u = ka + D < kc`` holds for ``D`` in
``[-ka, -ka + kc)``. So each thread's outcome stays the representative's for ``D`` within the
arc around the representative's ``D0`` that holds it: at most ``up`` above and ``down`` below.
The least of those over the threads bounds the blocks alike: ``D(b)`` no further from ``D0``
than that, either way. An equality (EQ, NE) of two moving sides compares their difference
with zero, the same way; an order of two moving sides keeps the blocks where both vectors
hold the representative's values. The compare's predicate input narrows it further.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Reg
from ..operands import read_u32
from ..state import Block

_W = 1 << 32
_FLIP = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ", "NE": "NE"}
_ORDER = ("LT", "LE", "GT", "GE", "EQ", "NE")


def bounds(cmp: str, k: Any, c: Any, d0: Any, signed: bool) -> tuple[Any, Any]:
    """Per thread: how far ``d`` may move above and below ``d0`` (each thread's own) with
    ``k + d ? c`` (mod 2^32) keeping the outcome it has at ``d0`` (2^32: without end)."""
    k = np.asarray(k, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if signed:  # flip the top bit of both sides: an unsigned compare
        k, c = (k + (1 << 31)) % _W, c ^ (1 << 31)
    base = cmp if cmp in ("LT", "LE", "EQ") else {"GE": "LT", "GT": "LE", "NE": "EQ"}[cmp]
    if base == "LT":
        start, length = (-k) % _W, c
    elif base == "LE":
        start, length = (-k) % _W, c + 1
    else:
        start, length = (c - k) % _W, np.ones_like(k)
    inside = ((d0 - start) % _W) < length
    # the arc holding d0: the set itself, or its complement
    start = np.where(inside, start, (start + length) % _W)
    length = np.where(inside, length, _W - length)
    whole = length >= _W
    up = np.where(whole, _W, (start + length - 1 - d0) % _W)
    down = np.where(whole, _W, (d0 - start) % _W)
    return up, down


def arc(cmp: str, k: Any, c: Any, d: Any, d0: int, signed: bool) -> Any:
    """The candidate blocks whose ``d`` (int64 over blocks, 0..2^32-1) gives ``k + d ? c``
    (per thread, mod 2^32) the outcome it has at ``d0`` on every thread."""
    up, down = bounds(cmp, k, c, d0, signed)
    most_up = int(up.min()) if up.size else _W
    most_down = int(down.min()) if down.size else _W
    return ((d - d0) % _W <= most_up) | ((d0 - d) % _W <= most_down)


def _moving(forms: Any, cmp: str, signed: bool, a: Any, c: Any, sel: Any) -> Any:
    """The agreement of the threads ``sel`` whose side ``a`` moves with the block and ``c``
    does not, every vector at once: each vector's blocks within the least reach of its
    threads."""
    value, vids, negated = a
    rep = forms.rep
    used, which = np.unique(vids[sel], return_inverse=True)
    d = np.stack([_vector(forms, int(u), negated) for u in used])  # vectors x blocks
    d0 = d[:, rep][which]
    k = (value[sel] - d0) % _W
    up, down = bounds(cmp, k, c[0][sel], d0, signed)
    most_up = np.full(len(used), _W, dtype=np.int64)
    most_down = np.full(len(used), _W, dtype=np.int64)
    np.minimum.at(most_up, which, up)
    np.minimum.at(most_down, which, down)
    at = d[:, rep][:, None]
    ok = ((d - at) % _W <= most_up[:, None]) | ((at - d) % _W <= most_down[:, None])
    return ok.all(axis=0)


def _side(forms: Any, ins: Instruction, k: int, form: Any, blk: Block, ids: Any) -> Any:
    """(value per thread, vector id per thread, negated) of compare operand ``k``."""
    op = ins.operands[k]
    value, _ = read_u32(op, "i", ins)(blk, ids)
    value = np.broadcast_to(np.asarray(value, dtype=np.uint32), (len(ids),)).astype(np.int64)
    if not isinstance(op, Reg) or form is None or not form.blocky:
        return value, np.full(len(ids), -1), False
    if op.abs:
        return None
    return value, form.vids, op.neg or op.inv


def isetp(
    forms: Any, ins: Instruction, known: list[Any], ids: Any, blk: Block
) -> dict[tuple[str, int], Any]:
    """The agreement of each predicate an ISETP writes (None: not proven), from the forms
    ``known`` of its sources (a, c, predicate input)."""
    ops = ins.operands
    dests = [o for o in ops[:2] if isinstance(o, Reg) and not o.is_true]
    out: dict[tuple[str, int], Any] = {(o.kind, o.index): None for o in dests}
    cmp = next((x for x in ins.mods if x in _ORDER or x in ("T", "F")), None)
    if cmp is None or "EX" in ins.mods or len(ops) != 5 or len(known) != 3:
        return out
    n = forms.vec.n
    agreed = np.ones(n, dtype=bool)
    if cmp not in ("T", "F"):
        a = _side(forms, ins, 2, known[0], blk, ids)
        c = _side(forms, ins, 3, known[1], blk, ids)
        if a is None or c is None:
            return out
        got = _compare(forms, cmp, "U32" not in ins.mods, a, c)
        if got is None:
            return out
        agreed &= got
    p = ops[4]
    if isinstance(p, Reg) and p.kind in ("P", "UP") and p.index != 7:
        pin = forms.agreement(p.kind, p.index, ids, blk)
        if pin is None:
            return out
        agreed &= pin
    return {key: agreed for key in out}


def _vector(forms: Any, vid: int, negated: bool) -> Any:
    v = forms.vec[vid].astype(np.int64)
    return (-v) % _W if negated else v


def _compare(forms: Any, cmp: str, signed: bool, a: Any, c: Any) -> Any:
    """The agreement of ``a ? c`` over the candidates, each side (value, vector ids, negated)."""
    (va, ia, na), (vc, ic, nc) = a, c
    rep = forms.rep
    out = np.ones(forms.vec.n, dtype=bool)
    alone_a = (ia >= 0) & (ic < 0)
    alone_c = (ia < 0) & (ic >= 0)
    if alone_a.any():
        out &= _moving(forms, cmp, signed, a, c, alone_a)
    if alone_c.any():
        out &= _moving(forms, _FLIP[cmp], signed, c, a, alone_c)
    both = (ia >= 0) & (ic >= 0)
    if not both.any():
        return out
    for i, j in np.unique(np.stack([ia[both], ic[both]]), axis=1).T:
        da, dc = _vector(forms, int(i), na), _vector(forms, int(j), nc)
        if cmp not in ("EQ", "NE"):  # both move: only where both hold their values
            out &= (da == da[rep]) & (dc == dc[rep])
            continue
        sel = both & (ia == i) & (ic == j)
        d = (da - dc) % _W  # a - c == 0
        k = (va[sel] - vc[sel] - int(d[rep])) % _W
        out &= arc(cmp, k, np.zeros_like(k), d, int(d[rep]), False)
    return out
