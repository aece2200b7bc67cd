"""A warp vote's results in every candidate block (:class:`.forms.Forms`).

``VOTE.ANY P1, P0`` and ``VOTE.ALL`` (``VOTEU`` into a uniform predicate) combine a predicate
over the threads of a warp that run it: in candidate block ``b`` a warp's result is the OR
(the AND) of its threads' values of the predicate there. The ballot into a register
(``VOTE.ANY R5, PT, P0`` of ``__ballot_sync``, ``VOTEU.ANY UR4, UPT, P0``; any mode: the
register takes the ballot) is, in block ``b``, the warp's mask of the lanes whose predicate
holds there, among the threads that run it. Where each thread's predicate has a form (its
value per block, or one value in every block), so have the results: one vector per warp.
The shadow cannot evaluate a vote (its lanes are blocks, not a warp's threads), so it is
evaluated here. CUTLASS 3.x's cooperative GEMMs in clusters vote on a flag made from the
CTA's place in the grid (``VOTEU.ANY UP0, P0``) and guard values on the result; a stream
compaction counts its ballot (``POPC``, under the lane's ``SR_LTMASK``), ``__ffs`` finds its
lowest lane (``BREV``, ``FLO``): those are evaluated as any integer instruction.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Reg
from .vectors import Unknown, Vectors

MODES = ("ANY", "ALL")


class Vote(NamedTuple):
    """What a vote reads and writes."""

    mode: str  # ANY, ALL or EQ
    ballot: Reg | None  # the register that takes the ballot (None: a vote into a predicate)
    pred: Reg | None  # the predicate written (None: PT, or EQ's, which has no form here)
    src: Reg  # the predicate read


def operands(ins: Instruction) -> Vote | None:
    """The operands of ``VOTE.ANY P1, P0`` (two: a predicate written) or ``VOTE.ANY R5, P1,
    P0`` (three: a register and a predicate written); None for any other form, or one that
    writes nothing a form is made for (a vote into PT, a ballot into RZ)."""
    ops = ins.operands
    mode = next((m for m in ins.mods if m in (*MODES, "EQ")), None)
    if mode is None or len(ops) not in (2, 3) or not all(isinstance(o, Reg) for o in ops):
        return None
    src, dest = ops[-1], ops[-2]
    assert isinstance(src, Reg) and isinstance(dest, Reg)
    reg = ops[0] if len(ops) == 3 else None
    ballot = reg if isinstance(reg, Reg) and reg.kind in ("R", "UR") and not reg.is_zero else None
    pred = None if dest.is_true or mode not in MODES else dest
    if ballot is None and pred is None:
        return None
    return Vote(mode, ballot, pred, src)


def results(vec: Vectors, ins: Instruction, source: Any, blk: Any, ids: Any) -> Any:
    """(per register a vote writes, per warp of the threads ``ids`` of block ``blk`` that run
    it, the id of its vector; each thread's warp among them), or None where the predicate it
    reads has no form (``source(operand, blk, ids)``: :meth:`.forms.Forms.source`) or no
    vector can be evaluated or kept."""
    ops = operands(ins)
    form = None if ops is None else source(ops.src, blk, ids)
    if ops is None or form is None or not form.blocky:
        return None
    made: dict[tuple[str, int], list[int]] = {}
    group = None
    warps, negated = blk.warp[ids], ops.src.not_
    if ops.pred is not None:
        got = vote(vec, ops.mode, negated, form.k, form.vids, warps)
        if got is not None:
            made[(ops.pred.kind, ops.pred.index)], group = got
    if ops.ballot is not None:
        lanes = ids % blk.warp_size
        got = ballot(vec, negated, form.k, form.vids, warps, lanes)
        if got is not None:
            made[(ops.ballot.kind, ops.ballot.index)], group = got
    return None if group is None else (made, group)


def vote(vec: Vectors, mode: str, negated: bool, k: Any, vids: Any, warps: Any) -> Any:
    """(per warp of the threads, the id of its result's vector; each thread's warp among
    them), or None where a vector cannot be evaluated or kept. ``k``: each thread's value
    where ``vids`` is -1 (the predicate free of the block index), ``vids`` each thread's
    value vector; ``warps`` each thread's warp."""
    every = mode == "ALL"
    order, group = np.unique(warps, return_inverse=True)
    n = vec.n
    values = [np.full(n, every, dtype=bool) for _ in order]
    for g in range(len(order)):
        mine = group == g
        fixed = np.asarray(k)[mine & (np.asarray(vids) < 0)].astype(bool) ^ negated
        if len(fixed) and (not fixed.all() if every else fixed.any()):
            values[g][:] = not every  # a thread decides the warp in every block
    wanted = sorted({int(v) for v in np.unique(vids) if v >= 0})
    try:
        for lo, hi, got in vec.windows(wanted):
            for g in range(len(order)):
                for v in np.unique(np.asarray(vids)[group == g]):
                    if v < 0:
                        continue
                    part = np.asarray(got[int(v)], dtype=bool) ^ negated
                    if every:
                        values[g][lo:hi] &= part
                    else:
                        values[g][lo:hi] |= part
    except Unknown:
        return None
    return _interned(vec, values, group)


def ballot(vec: Vectors, negated: bool, k: Any, vids: Any, warps: Any, lanes: Any) -> Any:
    """(per warp of the threads, the id of its ballot's vector: in each candidate block the
    mask of its lanes whose predicate holds there; each thread's warp among them), or None
    where a vector cannot be evaluated or kept. ``k``, ``vids``, ``warps`` as :func:`vote`'s;
    ``lanes`` each thread's lane (its bit of the mask). A lane not among the threads is 0."""
    order, group = np.unique(warps, return_inverse=True)
    vids, k = np.asarray(vids), np.asarray(k)
    bit = np.left_shift(np.uint32(1), np.asarray(lanes, dtype=np.uint32))
    values = []
    for g in range(len(order)):
        fixed = (group == g) & (vids < 0) & (k.astype(bool) ^ negated)
        values.append(np.full(vec.n, np.bitwise_or.reduce(bit[fixed], initial=0), np.uint32))
    # the lanes of a warp that read one vector set their bits together
    pairs = np.unique(np.stack([group, vids])[:, vids >= 0], axis=1)
    try:
        for lo, hi, got in vec.windows(sorted({int(v) for v in pairs[1]})):
            for g, v in pairs.T.tolist():
                mine = np.bitwise_or.reduce(bit[(group == g) & (vids == v)], initial=0)
                held = np.asarray(got[v], dtype=bool) ^ negated
                values[g][lo:hi] |= np.where(held, np.uint32(mine), np.uint32(0))
    except Unknown:
        return None
    return _interned(vec, values, group)


def _interned(vec: Vectors, values: list[Any], group: Any) -> Any:
    made = [vec.intern(v) for v in values]
    if min(made) < 0:
        return None
    return made, group.reshape(-1)
