"""The op_misc events of a step beside a CTA barrier's completion (:mod:`.barriers`), by the
rules of :mod:`shmem_cli.hardware.misc`: a warpgroup arrive that completes where a CTA was
stirred (:attr:`Block.stirred`), a CTA-scope memory barrier that every warp of a CTA runs
together from a barrier (:data:`~shmem_cli.hardware.misc.TOGETHER`), and what makes a CTA's
threads apart (:attr:`Block.apart`: a step that sends them to different instructions). Each
is tallied in :attr:`Block.misc_done` at its instruction, costed by its rule's
``per_completion``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..state import Block


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
