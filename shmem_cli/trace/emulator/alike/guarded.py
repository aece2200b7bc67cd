"""A guard on the block index that only chooses values, evaluated as a select in every block.

nvcc's division by a runtime value corrects its quotient and remainder under guards
(``@!P2 IMAD.IADD R3, R3, 0x1, -R6``, ``@P1 VIADD R2, R2, 0x1``): a persistent loop's ``t /
tiles`` and ``t % tiles`` of its tile index ``t = blockIdx.x + k * gridDim.x`` take them in
some blocks and not in others. Narrowing a class to the blocks whose guard agrees split blocks
whose shared accesses are the same (132 blocks of two trip counts fell into 17 classes).

Where the instruction only computes values in its thread's registers
(:func:`..decode.values_only`), the shadow evaluates it (:data:`.evaluated.EVALUATED`), and
its sources, the guard and every register it writes have forms (the block index's taint
alone), :func:`select` evaluates it for every candidate block as a select: the step's values
where the guard holds there, each register's value before it elsewhere
(:meth:`.shadow.Shadow.run` with the guard). Its result is a :class:`.forms.Pending` for every
thread at the instruction, run or not in the representative: after the step those registers
take the block index's taint (their value may differ between blocks whichever way the guard
went here) and forms that give each block's value, so a later decision that reads them is
evaluated as any other. Anything else leaves the guard a decision that narrows the class.

Where no decision reads what the instruction writes (:func:`.evaluated.needed`: llm.c's
attention backward selects each column's global address under its row guard, ``@!P2 IADD3
R18, P3, R4, R9``, for a load and a store alone), :func:`unread` chooses it without
evaluating it: only the guard's form is needed, for each block's count of threads that run
it; its registers take the block index's taint and no form, as a select's would in a block
whose guard went the other way, so a decision that did read them would not be proven.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass_operands import Reg
from ..ops.warp.collective import waterfall
from ..state import Block
from . import agree, evaluated
from .evaluated import EVALUATED, base_opcode
from .forms import Forms, Pending, Source
from .vectors import Unknown, Vectors

#: at most this many groups of threads with different sources (the block's tile index, the
#: same in every thread, makes one): a select for each thread of a value each thread makes
#: (``(blockIdx.x * 256 + t) % n``) would cost the watch more than the narrowing it saves,
#: and past the evaluation's budget where the vectors are kept as steps
SELECT_GROUPS = 8


def select(forms: Forms, m: int, blk: Block, ids: Any, guard: Reg) -> tuple[Pending, Any] | None:
    """Instruction ``m`` under ``guard`` for the threads ``ids`` (all at it) as a select in
    every candidate block, and per block how many of them run it (:func:`ran`); None where
    it cannot be evaluated so."""
    ins = forms.instructions[m]
    op = base_opcode(ins)
    if op not in EVALUATED or op == "S2R" or forms.vec.full or waterfall(ins):
        return None
    dests = forms.destinations[m]
    rows = [Reg(kind, index + j) for kind, index, count in dests for j in range(count)]
    reads = evaluated.sources(ins)
    sources = [*reads, Reg(guard.kind, guard.index), *rows]
    known = [forms.source(o, blk, ids) for o in sources]
    if any(f is None for f in known):
        return None
    key_rows = []
    for f in known:
        assert f is not None
        key_rows += [f.vids.astype(np.int64), f.k.astype(np.int64)]
    keys, index, inverse = agree.unique_columns(np.stack(key_rows))
    if keys.shape[1] > SELECT_GROUPS:
        return None
    pairs = [forms.pair(o, blk, ids) for o in reads] + [None] * (1 + len(rows))
    cut = (guard.kind, guard.index, bool(guard.not_))
    results = forms.shadow.run(m, sources, known, pairs, index.tolist(), forms.vec, cut)
    if len(results) != len(rows) or any(v < 0 for per in results.values() for v in per):
        return None
    held = known[len(reads)]  # the guard's form
    assert held is not None
    counts = ran(forms.vec, held, bool(guard.not_))
    if counts is None:
        return None
    return Pending(ids, results, group=inverse.reshape(-1), chose=True), counts


def unread(forms: Forms, m: int, blk: Block, ids: Any, guard: Reg) -> tuple[Pending, Any] | None:
    """Instruction ``m`` under ``guard`` for the threads ``ids`` (all at it), whose values no
    decision reads, chosen without evaluating it: a :class:`.forms.Pending` that leaves
    its registers formless and of the block index's taint, and per block how many of the
    threads run it (:func:`ran`); None where the guard has no form."""
    if forms.vec.full:
        return None
    held = forms.source(Reg(guard.kind, guard.index), blk, ids)
    counts = None if held is None else ran(forms.vec, held, bool(guard.not_))
    if counts is None:
        return None
    return Pending(ids, chose=True), counts


def ran(vec: Vectors, guard: Source, negated: bool) -> Any:
    """Per candidate block, how many threads the guard (its form ``guard``) lets run the
    instruction (int64); None where a vector cannot be evaluated."""
    clean = guard.vids < 0
    out = np.full(vec.n, np.count_nonzero((guard.k[clean] != 0) ^ negated), np.int64)
    used, times = np.unique(guard.vids[~clean], return_counts=True)
    arcs, rest = agree.counted(vec, used, times, negated)  # (thresholds: by their ends)
    out = out if arcs is None else out + arcs
    used, times = np.array(rest, dtype=np.int64), times[np.isin(used, rest)]
    try:
        for lo, hi, got in vec.windows([int(v) for v in used]) if len(used) else ():
            for v, t in zip(used, times, strict=True):
                out[lo:hi] += t * (np.asarray(got[int(v)], dtype=bool) ^ negated)
    except Unknown:
        return None
    return out
