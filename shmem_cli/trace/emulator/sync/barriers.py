"""The CTA barriers (``BAR.SYNC``, ``BAR.RED``, ``BAR.ARV``) and the cluster barriers of a
block: :func:`release` lets go the threads of every barrier that all its threads (or its
count) reached, sets what a ``BAR.RED`` reduced, counts each completion for op_misc (where a
warp of its CTA reached a ``STIRS`` instruction since its last: hardware/misc.py), and
names a deadlock (a barrier the other live threads never reach, or mbarriers no thread can
complete) as a located error.

The op_misc events of a step beside a barrier's completion, by the rules of
:mod:`shmem_cli.hardware.misc`: a warpgroup arrive that completes where a CTA was stirred
(:attr:`Block.stirred`: :func:`arrive`), a CTA-scope memory barrier that every warp of a CTA
runs together from a barrier (:data:`~shmem_cli.hardware.misc.TOGETHER`: :func:`together`),
and what makes a CTA's threads apart (:attr:`Block.apart`, a step that sends them to
different instructions: :func:`part`). Each is tallied in :attr:`Block.misc_done` at its
instruction, costed by its rule's ``per_completion``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Function
from ..state import Block
from ..trace_error import TraceError
from .convergence import force, settle, wake


def _per_cluster(blk: Block, per_cta: Any) -> Any:
    """Per CTA, the sum of ``per_cta`` over the CTAs of its cluster."""
    sums = np.bincount(blk.cta_cluster, weights=per_cta, minlength=len(blk.cluster_table))
    return sums[blk.cta_cluster]


def _barrier_place(blk: Block, at: int) -> str:
    """``shared offset 0x408`` (``... of block (1,0,0)`` in a batch) of an mbarrier."""
    c, off = blk.window(at)
    return f"shared offset 0x{off:x}" + (f" of {blk.cta_name(c)}" if blk.ctas > 1 else "")


def release(blk: Block, function: Function) -> None:
    """Release, in each CTA, every barrier all its live threads (or its count) have reached,
    or fail."""
    live = np.bincount(blk.cta[~blk.exited], minlength=blk.ctas)
    released = False
    for bar in blk.barriers.values():
        waiting = blk.waiting == bar["id"]
        if not waiting.any():
            continue
        waits = np.bincount(blk.cta[waiting], minlength=blk.ctas)
        expected = bar["count"] if bar["count"] else live
        arrived = bar["arrived"]
        if bar.get("cluster"):  # a cluster barrier: counted over the cluster's CTAs
            waits, arrived, expected = (_per_cluster(blk, v) for v in (waits, arrived, live))
        ready = (waits > 0) & (arrived >= expected)
        if not ready.any():
            continue
        ids = np.flatnonzero(waiting & ready[blk.cta])
        if not bar.get("cluster"):  # one completion per CTA, at its first waiter's BAR,
            _, first = np.unique(blk.cta[ids], return_index=True)  # where the CTA was stirred
            ctas, at = blk.cta[ids[first]], blk.resume[ids[first]] - 1
            costs = blk.stirred[ctas]
            blk.stirred[ctas] = False
            blk.apart[ctas] = False
            for index in at[costs].tolist():
                blk.misc_done[index] = blk.misc_done.get(index, 0) + 1
            if blk.by_cta is not None:
                for c, index in zip(ctas[costs], at[costs], strict=True):
                    blk.tally_by_cta("misc_done", int(index), np.array([c]))
        blk.sched[ids] = blk.resume[ids]
        blk.waiting[ids] = -1
        true, false = bar["true"], bar["false"]
        reduced = ready & (true + false > 0)  # CTAs whose threads arrived with BAR.RED
        if reduced.any():
            kind = bar["red"]
            value = true if kind == "POPC" else (false == 0 if kind == "AND" else true > 0)
            value = np.asarray(value, dtype=np.int64)
            mine = ids[reduced[blk.cta[ids]]]
            blk.bar_value[mine] = value[blk.cta[mine]]
            blk.bar_pred[mine] = value[blk.cta[mine]] != 0
        bar["arrived"][ready] = 0
        true[ready] = 0
        false[ready] = 0
        released = True
    # no barrier: a convergence wait now clear, else sleeping threads wake, else the
    # convergence waits go (:mod:`.convergence`)
    if not released and (settle(blk) or wake(blk) or force(blk)):
        return
    if not released and blk.mbarriers.blocked():
        message, where = blk.mbarriers.describe_deadlock(
            lambda t: int(blk.warp_ids[t // blk.warp_size]),
            lambda at: _barrier_place(blk, at),
        )
        raise TraceError(message, where)
    if not released:
        pcs = sorted({int(x) for x in blk.resume[blk.waiting >= 0]})
        where = function.instructions[pcs[0] - 1] if pcs else None
        stuck = int(np.argmax(np.bincount(blk.cta[blk.waiting >= 0], minlength=blk.ctas)))
        mine = blk.cta == stuck
        waiting = int(((blk.waiting >= 0) & mine).sum())
        who = f" in {blk.cta_name(stuck)}" if blk.ctas > 1 else ""
        raise TraceError(
            f"deadlock{who}: {waiting} threads wait at a barrier that the other "
            f"{int(live[stuck]) - waiting} live threads never reach",
            where,
        )


# --- the op_misc events beside a completion ----------------------------------------------------


def _ctas(blk: Block, ix: Any) -> Any:
    """The CTAs of threads ``ix`` (an index or every thread)."""
    if blk.ctas == 1:
        return np.zeros(1, dtype=np.int64)
    return np.unique(blk.cta[blk.ids(ix)])


def _tally(blk: Block, m: int, ctas: Any, each: int = 1) -> None:
    if len(ctas) and each:
        blk.misc_done[m] = blk.misc_done.get(m, 0) + each * len(ctas)
        if blk.by_cta is not None:
            blk.tally_by_cta("misc_done", m, np.repeat(ctas, each))


def arrive(blk: Block, m: int, ix: Any) -> None:
    """Threads ``ix`` ran instruction ``m``, a warpgroup arrive: it completes for each of
    their CTAs stirred since its last completion, which it then is not."""
    ctas = _ctas(blk, ix)
    stirred = ctas[blk.stirred[ctas]]
    blk.stirred[ctas] = False
    _tally(blk, m, stirred)


def together(blk: Block, m: int, at: Any) -> None:
    """Threads ``at`` reach instruction ``m``, a CTA-scope memory barrier (before it stirs
    their CTAs): where they are every thread of the batch, each CTA not apart and not stirred
    since its last barrier completion has its warps run it in pairs."""
    if not isinstance(at, slice):
        return
    ctas = np.flatnonzero(~blk.apart & ~blk.stirred)
    _tally(blk, m, ctas, blk.n_warps // 2)


def part(blk: Block, at: Any) -> None:
    """After a step of threads ``at`` that may move threads: where they went to different
    instructions, their CTAs are apart until their next barrier completion."""
    if blk.apart.all():
        return
    went = blk.sched[at]
    if (went != went[0]).any():
        blk.apart[_ctas(blk, at)] = True
