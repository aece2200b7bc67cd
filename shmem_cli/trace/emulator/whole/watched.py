"""A straight run (:func:`..scheduler._straight_runs`) under the watch of a grid's block
(:mod:`..alike.watch`): its steps one after the other, the watch told of each as the
scheduler's step tells it (:meth:`~..alike.watch.Watcher.operands`, then ``before``, the
step, ``after``: with the same state, so it records the same registers on the block index,
the same taint, the same decisions), and each step run by its whole step where it has one
(:mod:`.`: the values, taint and records of the instruction's own step). A chain
(:mod:`.chains`) runs whole only where none of its steps is one the watch evaluates over the
blocks (FMUL: :data:`..alike.evaluated.EVALUATED`), whose look before it reads the registers
the chain's earlier steps write: there the watch looks before every step and is told after
every step, in order (nothing it keeps is read in between: its looks at FADD and FFMA read
nothing). The watch's look before a step is skipped where it finds nothing to write, by
the rule :class:`..alike.together.Watches` skips it by (:func:`..alike.evaluated.looked_at`):
an instruction it does not evaluate, or one whose source registers are free of taint in
every thread (no source depends on the block index). An internal error
of a step names its instruction (a chain's: its first), as :func:`..scheduler._run_straight`
does; one of the watch's is its own, as in a step."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..alike.evaluated import EVALUATED, base_opcode, looked_at
from ..state import Block, TraceError
from ..trace_error import INTERNAL_ERRORS
from .rows import EVERY, Rows

if TYPE_CHECKING:
    from ..alike.watch import Watcher
    from ..decode import Program


def run_watched(
    watch: Watcher,
    program: Program,
    instructions: list[Any],
    stirs: tuple[bool, ...],
    blk: Block,
    m: int,
    end: int,
    hits: list[int],
    rows: Rows | None,
) -> None:
    """Instructions ``m`` to ``end`` (a straight run) by every thread of ``blk``, under
    ``watch``, each one's execution counted in ``hits``: as
    :func:`..scheduler._run_straight`, the watch told of every step."""
    whole, chains = program.whole, program.chains
    if program.looked is None:
        program.looked = [looked_at(ins) for ins in instructions]
    looked: list[Any] = program.looked
    k = m
    while k < end:
        if stirs[k]:
            blk.stirred[:] = True
        w = whole[k] if rows is not None else None
        c = chains[k] if w is not None else None
        if c is not None and k + c[0] <= end and not _evaluated(instructions, k, k + c[0]):
            pending = [_before(watch, j, blk, looked[j]) for j in range(k, k + c[0])]
            _guarded(c[1], blk, rows, instructions[k])
            for j in range(k, k + c[0]):
                watch.after(pending[j - k], j, blk, EVERY)
                hits[j] += 1
            k += c[0]
            continue
        pending_k = _before(watch, k, blk, looked[k])
        if w is None:
            _guarded(program[k], blk, EVERY, instructions[k])
        else:
            _guarded(w, blk, rows, instructions[k])
        watch.after(pending_k, k, blk, EVERY)
        hits[k] += 1
        k += 1


def _before(watch: Watcher, k: int, blk: Block, looked: list[tuple[str, int]] | None) -> Any:
    """The watch's looks before step ``k`` (its operands, then what it will write, where
    ``looked``, :func:`..alike.evaluated.looked_at`'s, says it may write something)."""
    watch.operands(k, blk, EVERY)
    if looked is None or (looked and not any(_tainted(blk, kind, i) for kind, i in looked)):
        return None
    return watch.before(k, blk, EVERY)


def _tainted(blk: Block, kind: str, index: int) -> bool:
    """Whether register ``kind``/``index`` carries taint in a thread of ``blk``."""
    table = blk.file(kind)[1]
    return index < len(table) and bool(np.count_nonzero(table[index]))


def _evaluated(instructions: list[Any], start: int, stop: int) -> bool:
    """Whether one of the instructions ``start`` to ``stop`` is evaluated over the blocks."""
    return any(base_opcode(instructions[j]) in EVALUATED for j in range(start, stop))


def _guarded(step: Any, blk: Block, arg: Any, ins: Any) -> None:
    """``step(blk, arg)``; an internal error names ``ins``."""
    try:
        step(blk, arg)
    except INTERNAL_ERRORS as exc:
        raise TraceError(f"internal emulator error: {exc}", ins) from exc
