"""The block vectors that no register holds any more, let go of.

A class's block run watched makes a block vector per group of threads for each instruction
on the block index (:mod:`.forms`; a compaction's loop over 4,096 blocks, each thread its
own group: 4 MiB an instruction), and most of them lie in registers written again since.
The vectors are kept by content and the steps that made them remembered (the next class's
block makes the same ones, and finds them: :class:`.shadow.Shadow`), so nothing let them
go: the loop's first block left 112 MiB of them, past which the next blocks' vectors were
kept as steps and evaluated a window at a time (:mod:`.vectors`), until the evaluations'
budget ran out before the classes were found.

Where the vectors held whole come within reach of half the vectors' budget (:data:`TIDY`:
the next instruction's could pass it), between two steps of the watched blocks (no step's
vectors in flight), those that no register or predicate of the forms holds, no step kept
reads and no agreement held is made from are let go of, with what the shadow remembered of
them (:func:`tidy`); the next time is where the bytes left double, or pass TIDY. Below the
mark they stay, for the next class's block. :func:`tidy` also counts the thread-instructions
the watched blocks ran (:attr:`.vectors.Vectors.ran`: the first round's budget grows with
them, :func:`.spend.first_round`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .distinct import Spread
from .vectors import EAGER, VECTOR_BYTES, Same, Vectors

if TYPE_CHECKING:
    from .forms import Forms

#: the vectors held whole may take this many bytes before those no form holds are let go:
#: where the next instruction's (at most EAGER values) would pass half the budget and be kept
#: as its step (before it, they are kept for the next class's block, which reads them again)
TIDY = VECTOR_BYTES // 2 - 4 * EAGER


def tidy(forms: Sequence[Forms], ran: int) -> None:
    """Let go of the vectors none of ``forms`` (the watched blocks', between two steps that
    ran ``ran`` thread-instructions) holds, where those held whole pass their mark."""
    vec = forms[0].vec
    vec.ran += ran
    if vec.bytes <= max(TIDY, vec.tidy_at):
        return
    held: list[Any] = [f.axes for f in forms]
    for f in {id(f.regs): f for f in forms}.values():  # (CTAs run together share a store)
        held += [got[1] for got in f.regs.values()]
        held += [a for got in f.preds.values() for a in got]
    dead = unheld(vec, held)
    vec.forget(dead)
    forms[0].shadow.forget(dead)
    vec.tidy_at = 2 * vec.bytes


def unheld(vec: Vectors, held: Sequence[Any]) -> Any:
    """The vectors held whole (a mask over the ids) that neither ``held`` (arrays of ids,
    below 0 none) nor a step kept reads, nor an agreement held is made from."""
    live = np.zeros(len(vec.values), dtype=bool)
    for ids in [*held, *(ld.vids for step in vec.steps for ld in step.loads)]:
        ids = np.asarray(ids).reshape(-1)
        live[ids[ids >= 0]] = True
    for v, same in enumerate(vec.values):  # an agreement held: the vector it is of
        if isinstance(same, Same) and live[v]:
            live[same.vid] = True
    whole = np.array([isinstance(v, (np.ndarray, Spread)) for v in vec.values], dtype=bool)
    return whole & ~live
