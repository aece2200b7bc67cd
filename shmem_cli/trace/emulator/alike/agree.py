"""In which blocks a compare on the block index takes the representative's outcome on every
thread: from per-thread thresholds where one side moves, without a thread-by-block table.

An ISETP compares ``a = ka(t) + Va(b)`` with ``c = kc(t) + Vc(b)`` (:mod:`.forms`), mod 2^32,
read signed or unsigned. Where only one side moves with the block (``Vc`` zero, else the two
swapped), thread ``t``'s outcome is a function of ``D = Va(b)`` alone, and the values of ``D``
that give it one outcome form one arc of the circle of 32-bit values (a signed compare is
the unsigned one with both sides' top bit flipped): ``u = ka + D < kc`` holds for ``D`` in
``[-ka, -ka + kc)``. So each thread's outcome stays the representative's for ``D`` within the
arc around the representative's ``D0`` that holds it: at most ``up`` above and ``down`` below.
The least of those over the threads bounds the blocks alike: ``D(b)`` no further from ``D0``
than that, either way (a subset of the blocks where every thread keeps its outcome: the
arcs of several threads may meet in more than one arc). A compare of two moving sides is
evaluated in each block from the two vectors, once per distinct pair of the threads'
constants, a window of blocks (:meth:`.vectors.Vectors.windows`) and a slice of pairs at a
time: at most :data:`.vectors.ELEMENTS` values. The compare's predicate input narrows it
further.

Where in every group of threads one side moves with a whole vector and the predicate input
does not, the compare's outcome itself is kept that way (:func:`arcs`): per group, the arc of
``D`` on which it is true, an :class:`.distinct.Arc` read as its bool vector, so the
predicate's values are the shadow's, bit for bit. What a decision asks of them is then
answered from the arcs' ends, not from a table of groups x blocks (llm.c's attention
backward: 256 threads' columns against the row over 12,288 blocks, 3 million values at each
decision): the blocks that keep every deciding thread's outcome (:func:`met`: outside the
union of the arcs' complements, exactly the blocks whose values all equal the
representative's) and how many threads a guard on it runs in each block (:func:`counted`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Reg
from ..operands import read_u32
from ..ops.integer import COMPARES
from ..state import Block
from . import vectors
from .distinct import Arc, Spread

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


def _moving(forms: Any, cmp: str, signed: bool, a: Any, c: Any, sel: Any) -> Any:
    """The agreement of the threads ``sel`` whose side ``a`` moves with the block and ``c``
    does not, every vector at once: each vector's blocks within the least reach of its
    threads."""
    value, vids, negated = a
    used, which = np.unique(vids[sel], return_inverse=True)
    at = np.array([_at(forms, int(u), negated) for u in used], dtype=np.int64)
    d0 = at[which]
    k = (value[sel] - d0) % _W
    up, down = bounds(cmp, k, c[0][sel], d0, signed)
    most_up = np.full(len(used), _W, dtype=np.int64)
    most_down = np.full(len(used), _W, dtype=np.int64)
    np.minimum.at(most_up, which, up)
    np.minimum.at(most_down, which, down)
    out = np.ones(forms.vec.n, dtype=bool)
    ids = [int(u) for u in used]
    at, most_up, most_down = at[:, None], most_up[:, None], most_down[:, None]
    for lo, hi, got in forms.vec.windows(ids):
        # the vectors a slice at a time, each a row: one expression for them all (a loop
        # over a causal attention's 26 vectors per compare was a fifth of its watch)
        rows = max(1, vectors.ELEMENTS // max(1, hi - lo))
        for r in range(0, len(ids), rows):
            d = _int64(np.stack([np.asarray(got[v]) for v in ids[r : r + rows]]), negated)
            base = at[r : r + rows]
            near = ((d - base) % _W <= most_up[r : r + rows]) | (
                (base - d) % _W <= most_down[r : r + rows]
            )
            out[lo:hi] &= near.all(axis=0)
    return out


def _side(forms: Any, ins: Instruction, k: int, form: Any, blk: Block, ids: Any) -> Any:
    """(value per thread, vector id per thread, negated) of compare operand ``k``."""
    op = ins.operands[k]
    value, _ = read_u32(op, "i", ins)(blk, ids)
    value = np.broadcast_to(np.asarray(value, dtype=np.uint32), (len(ids),)).astype(np.int64)
    if form is None:  # a thread's register depends on the block with no form
        return None
    if not isinstance(op, Reg) or not form.blocky:
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
    out: dict[tuple[str, int], Any] = {(o.kind, o.index): None for o in dests(ins)}
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


def dests(ins: Instruction) -> list[Reg]:
    """The predicates a compare writes (not PT)."""
    return [o for o in ins.operands[:2] if isinstance(o, Reg) and not o.is_true]


def reads_own(ins: Instruction) -> bool:
    """Whether a compare's predicate input is one it writes (its agreement must be read
    before it runs)."""
    p = ins.operands[4] if len(ins.operands) == 5 else None
    own = {(o.kind, o.index) for o in dests(ins)}
    return isinstance(p, Reg) and (p.kind, p.index) in own


def _int64(v: Any, negated: bool) -> Any:
    """A vector's values as int64 (0..2^32-1), negated mod 2^32 where its operand is."""
    v = np.asarray(v).astype(np.int64)
    return (-v) % _W if negated else v


def _at(forms: Any, vid: int, negated: bool) -> int:
    """Vector ``vid``'s value in the representative block (negated where its operand is)."""
    v: int = forms.vec.at(vid, forms.rep)
    return (-v) % _W if negated else v


def _compare(forms: Any, cmp: str, signed: bool, a: Any, c: Any) -> Any:
    """The agreement of ``a ? c`` over the candidates, each side (value, vector ids, negated)."""
    (va, ia, na), (vc, ic, nc) = a, c
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
        sel = both & (ia == i) & (ic == j)
        ka = (va[sel] - _at(forms, int(i), na)) % _W  # a = ka + Da(b), c = kc + Dc(b)
        kc = (vc[sel] - _at(forms, int(j), nc)) % _W
        out &= _two_moving(forms, cmp, signed, (int(i), na, ka), (int(j), nc, kc))
    return out


def _two_moving(forms: Any, cmp: str, signed: bool, a: Any, c: Any) -> Any:
    """The blocks in which ``ka + Da(b) ? kc + Dc(b)`` (mod 2^32, per thread) has the
    outcome it has in the representative on every thread: each block's outcome computed
    from the two vectors, for each distinct pair of thread constants, a window of blocks
    and a slice of pairs at a time."""
    (i, na, ka), (j, nc, kc) = a, c
    pairs = np.unique(np.stack([ka, kc]), axis=1)  # 2 x distinct (ka, kc)
    top = np.int64(1 << 31) if signed else np.int64(0)
    want = COMPARES[cmp](
        (pairs[0] + _at(forms, i, na)) % _W ^ top, (pairs[1] + _at(forms, j, nc)) % _W ^ top
    )
    out = np.ones(forms.vec.n, dtype=bool)
    for lo, hi, got in forms.vec.windows([i, j]):
        da, dc = _int64(got[i], na), _int64(got[j], nc)
        rows = max(1, vectors.ELEMENTS // max(1, hi - lo))
        for r in range(0, pairs.shape[1], rows):
            x = (pairs[0, r : r + rows, None] + da[None, :]) % _W ^ top
            y = (pairs[1, r : r + rows, None] + dc[None, :]) % _W ^ top
            out[lo:hi] &= (COMPARES[cmp](x, y) == want[r : r + rows, None]).all(axis=0)
    return out


def unique_columns(a: Any) -> tuple[Any, Any, Any]:
    """``np.unique(a, axis=1, return_index=True, return_inverse=True)`` for a 2-D integer
    array: its distinct columns in order, each one's first column, and each column's
    distinct one, by a stable lexical sort (np.unique's view of a column as one record took
    a third of a millisecond for 128 threads, at every step of a watched loop)."""
    n = a.shape[1]
    order = np.lexsort(a[::-1]) if n else np.zeros(0, dtype=np.int64)
    ranked = a[:, order]
    new = np.ones(n, dtype=bool)
    if n > 1:
        new[1:] = (ranked[:, 1:] != ranked[:, :-1]).any(axis=0)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ranked[:, new], order[new], inverse


def _true_arc(cmp: str, k: Any, c: Any, signed: bool) -> tuple[Any, Any]:
    """Per thread: the arc of ``d`` (start, length, mod 2^32) where ``k + d ? c`` holds."""
    k, c = np.asarray(k, dtype=np.int64), np.asarray(c, dtype=np.int64)
    if signed:  # flip the top bit of both sides: an unsigned compare
        k, c = (k + (1 << 31)) % _W, c ^ (1 << 31)
    base = cmp if cmp in ("LT", "LE", "EQ") else {"GE": "LT", "GT": "LE", "NE": "EQ"}[cmp]
    start, length = ((c - k) % _W, np.ones_like(k)) if base == "EQ" else ((-k) % _W, c)
    length = length + 1 if base == "LE" else length
    if base != cmp:  # the complement
        start, length = (start + length) % _W, _W - length
    return start, length


def arcs(
    forms: Any, ins: Instruction, known: list[Any], ids: Any, blk: Block, firsts: Any
) -> dict[tuple[str, int], list[int]] | None:
    """The vectors of the predicate ``ISETP.cmp.op P, PT, a, c, pin`` writes, one per group
    of threads (``firsts``: each group's first), each an :class:`.distinct.Arc`, where in
    every group one side moves with a whole vector, the other does not, and the predicate
    input does not either: the same values the shadow gives (a thread's outcome is a
    function of that vector's value alone), read as thresholds (a per-thread column against
    the block's row: llm.c's ``t3 <= t``, 256 groups, whose agreement and count over 12,288
    blocks were a table of 3 million); None for any other compare."""
    ops = ins.operands
    cmp = next((x for x in ins.mods if x in _ORDER), None)
    op = next((x for x in ins.mods if x in ("AND", "OR", "XOR")), None)
    if cmp is None or op is None or set(ins.mods) - {cmp, op, "U32"} or len(known) != 3:
        return None
    p, q, pin = ops[0], ops[1], ops[4] if len(ops) == 5 else None
    if not isinstance(p, Reg) or not isinstance(q, Reg) or not isinstance(pin, Reg):
        return None
    if p.is_true or not q.is_true or np.any(known[2].vids >= 0):
        return None  # the predicate input moves with the block
    held = (pin.is_true | (known[2].k != 0)) ^ pin.not_  # its value, per thread (PT: true)
    a = _side(forms, ins, 2, known[0], blk, ids)
    c = _side(forms, ins, 3, known[1], blk, ids)
    if a is None or c is None:
        return None
    at = np.asarray(firsts, dtype=np.intp)
    (va, ia, na), (vc, ic, nc) = a, c
    ia, ic = np.asarray(ia)[at], np.asarray(ic)[at]
    if np.any((ia >= 0) == (ic >= 0)):
        return None  # a group where both sides move, or neither
    out: list[int] = []
    for g in range(len(at)):
        flip = bool(ic[g] >= 0)
        vid, neg = (int(ic[g]), nc) if flip else (int(ia[g]), na)
        base = forms.vec.values[vid]
        if not isinstance(base, (np.ndarray, Spread)):
            return None  # kept as a step
        k = (int((vc if flip else va)[at[g]]) - _at(forms, vid, neg)) % _W
        other = int((va if flip else vc)[at[g]])
        s, n = _true_arc(_FLIP[cmp] if flip else cmp, k, other, "U32" not in ins.mods)
        if bool(held[at[g]]) == (op == "OR"):  # (AND false: never; OR true: always)
            s, n = 0, _W * (op == "OR")
        elif op == "XOR" and held[at[g]]:  # the complement
            s, n = (s + n) % _W, _W - n
        key = ("arc", vid, bool(neg), int(s), int(n))
        got = forms.vec.intern(Arc(base, bool(neg), int(s), int(n)), key)
        if got < 0:
            return None
        out.append(got)
    return {(p.kind, p.index): out}


def _by_base(vec: Any, vids: Any) -> tuple[dict[tuple[int, bool], list[Arc]], list[int]]:
    """The :class:`.distinct.Arc` vectors of ``vids`` by the vector they read, and the rest."""
    by: dict[tuple[int, bool], list[Arc]] = {}
    rest: list[int] = []
    for v in (int(x) for x in vids):
        got = vec.values[v] if v >= 0 else None
        if isinstance(got, Arc):
            by.setdefault((id(got.base), got.negated), []).append(got)
        else:
            rest.append(v)
    return by, rest


def met(vec: Any, vids: Any, rep: int) -> tuple[Any, list[int]]:
    """The blocks in which every :class:`.distinct.Arc` vector of ``vids`` holds its value in
    block ``rep`` (None: there is none), and the other vectors: each holds it where ``D`` is
    on the arc that holds ``D(rep)``, so the blocks outside the union of those arcs'
    complements (each an interval of ``D - D(rep)`` that does not wrap), merged: the same
    blocks as comparing each vector with its value, without a table of them."""
    by, rest = _by_base(vec, vids)
    out = None
    for held in by.values():
        d = held[0].d()
        d0 = int(d[rep])
        start = np.array([a.start for a in held], dtype=np.int64)
        length = np.array([a.length for a in held], dtype=np.int64)
        inside = (d0 - start) % _W < length
        start = np.where(inside, start, (start + length) % _W)
        length = np.where(inside, length, _W - length)
        lo = (start + length - d0) % _W  # each complement, from D(rep)
        hi = lo + _W - length
        keep = length < _W
        order = np.argsort(lo[keep], kind="stable")
        lo, hi = lo[keep][order], np.maximum.accumulate(hi[keep][order])
        e = (d - d0) % _W
        k = np.searchsorted(lo, e, side="right") - 1
        gap = (k >= 0) & (e < hi[np.maximum(k, 0)]) if len(lo) else np.zeros(len(d), bool)
        out = ~gap if out is None else out & ~gap
    return out, rest


def counted(vec: Any, vids: Any, times: Any, negated: bool) -> tuple[Any, list[int]]:
    """Per block, how many threads run an instruction under a guard whose vectors are
    ``vids`` (``times`` threads each; ``negated``: ``@!P``), from those that are
    :class:`.distinct.Arc` (None: none is), and the rest: a sum of each arc's thread count
    over the intervals of ``D`` it holds on, by its ends (not a table of blocks x arcs).

    ``vids`` must be distinct (each vector once, with all its threads in ``times``: the
    caller, :func:`.guarded.ran`, passes ``np.unique``'s): the arcs are summed from the list
    while ``times`` is read by vector, so a repeat would count its threads twice."""
    times_of = {int(v): int(t) for v, t in zip(vids, times, strict=True)}
    if len(times_of) != len(times):
        raise ValueError("agree.counted: a vector given twice (its threads would count twice)")
    by, rest = _by_base(vec, vids)
    ids = {id(a): v for v in times_of if isinstance(a := vec.values[v], Arc)} if by else {}
    out = None
    for held in by.values():
        d = held[0].d()
        start = np.array([a.start for a in held], dtype=np.int64)
        length = np.array([a.length for a in held], dtype=np.int64)
        if negated:
            start, length = (start + length) % _W, _W - length
        t = np.array([times_of[ids[id(a)]] for a in held], dtype=np.int64)
        end = start + length  # past 2^32: wraps to [0, end - 2^32) as well
        at = np.concatenate([start, np.minimum(end, _W), np.zeros_like(start), end - _W])
        add = np.concatenate([t, -t, np.where(end > _W, t, 0), np.where(end > _W, -t, 0)])
        order = np.argsort(at, kind="stable")
        at, total = at[order], np.cumsum(add[order])
        k = np.searchsorted(at, d, side="right") - 1
        got = np.where(k >= 0, total[np.maximum(k, 0)], 0)
        out = got if out is None else out + got
    return out, rest
