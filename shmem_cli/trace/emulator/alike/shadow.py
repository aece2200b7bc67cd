"""One instruction run for every candidate block at once, through the emulator's own step.

A *shadow* block is an emulator :class:`~..state.Block` whose threads stand for the candidate
blocks of a grid (:mod:`.forms`), :data:`COLUMNS` at a time. To evaluate an instruction for
the groups of the representative's threads, :meth:`Shadow.run` describes it as a
:class:`.distinct.Step` (per group, what each register it reads holds: one thread's ``k`` and
vector), which :class:`.vectors.Vectors` evaluates at once or keeps and evaluates a window of
blocks at a time, each time through :meth:`Shadow.step`: each register the instruction reads
is loaded with its value for every (group, block) pair and the instruction's step runs over
the shadow's threads: its destinations then hold each group's value in each block. Every
register not loaded carries a marker taint, so a step that reads one (a pair's second
register, an index register) leaves the marker on its result: no vector is taken from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ....cuda.sass_operands import Operand, Reg
from ..state import PT, TAINT_UNKNOWN, Block, Launch, TraceError
from .distinct import Guard, Load, Step
from .vectors import Vectors

if TYPE_CHECKING:
    from .distinct import Loaded

#: candidate blocks evaluated together (the shadow's threads)
COLUMNS = 1 << 16
#: the shadow's fewest threads (it grows to what its steps need, at most COLUMNS)
_NARROWEST = 1 << 10
#: steps whose results are kept for the next class's block at most
SEEN = 1 << 16
_MARK = np.uint8(TAINT_UNKNOWN)


class Shadow:
    """The shadow block of a launch, made on first use."""

    def __init__(
        self, launch: Launch, program: Any, registers: int, columns: int = COLUMNS
    ) -> None:
        self.launch, self.program, self.registers = launch, program, registers
        self.cols = columns
        self._blk: Block | None = None
        # what a step gave for the same sources before (vectors persist from one class's
        # block to the next, so the steps they share are evaluated once): vector ids
        self._seen: dict[Any, dict[tuple[str, int], list[int]]] = {}

    def _block(self, want: int) -> Block:
        """The shadow block, at least ``want`` threads wide (at most :attr:`cols`): made as
        wide as the steps so far need, a power of two, and again wider where one needs more
        (as wide as the grid's 64 threads a block at once took a causal attention's first
        round a tenth of a second, to make and to touch)."""
        blk = self._blk
        if blk is None or blk.threads < min(want, self.cols):
            lc = self.launch
            cols = min(self.cols, max(_NARROWEST, 1 << (want - 1).bit_length()))
            shadow = Launch(
                block=(cols, 1, 1),
                grid=lc.grid,
                params=lc.params,
                param_base=lc.param_base,
                shared_base=lc.shared_base,
                const_banks=lc.const_banks,
                const_unset=lc.const_unset,
                warp_size=lc.warp_size,
            )
            blk = Block(shadow, registers=self.registers)
            # constant bank 0 as the blocks read it (blockDim is the launch's, not the
            # shadow's count of threads)
            blk.cbank[0] = np.frombuffer(lc.bank0(), dtype=np.uint8)
            blk.tr[:], blk.tur[:], blk.tp[:], blk.tup[:] = _MARK, _MARK, _MARK, _MARK
            blk.tp[PT] = blk.tup[PT] = 0
            self._blk = blk
        return blk

    def run(
        self,
        m: int,
        sources: Sequence[Operand],
        forms: Sequence[Any],
        pairs: Sequence[Any],
        firsts: Sequence[int],
        vec: Vectors,
        guard: Guard | None = None,
    ) -> dict[tuple[str, int], list[int]]:
        """Per destination register, per group (its first thread ``firsts[g]``): the id of
        the vector of instruction ``m``'s value in each candidate block (-1: none, where the
        step read an unloaded register or refused the values). The vectors are evaluated
        now or kept as the step, by ``vec`` (:meth:`.vectors.Vectors.make`). With ``guard``
        the step is a select (:mod:`.guarded`): ``sources`` hold the guard and the registers
        it writes, whose loaded values stand where the guard is false."""
        at = np.asarray(firsts, dtype=np.intp)
        key = (m, guard, *(_key(f, at) for f in forms), *(_key(f, at) for f in pairs))
        seen = self._seen.get(key)
        if seen is not None:
            return seen
        loads = []
        for o, f, pf in zip(sources, forms, pairs, strict=True):
            if isinstance(o, Reg) and not o.is_zero and not o.is_true:
                loads.append(_load(o.kind, o.index, f, at))
                if pf is not None:
                    loads.append(_load(o.kind, o.index + 1, pf, at))
        rows = tuple((k, i + j) for k, i, c in self.program.destinations[m] for j in range(c))
        out = vec.make(Step(m, tuple(loads), rows, len(firsts), guard))
        if len(self._seen) < SEEN:
            self._seen[key] = out
        return out

    def forget(self, dead: Any) -> None:
        """Forget the steps that gave a vector of ``dead`` (a mask over the ids: let go of,
        :meth:`.vectors.Vectors.free`)."""
        n = len(dead)
        self._seen = {
            key: out
            for key, out in self._seen.items()
            if not any(dead[v] for ids in out.values() for v in ids if 0 <= v < n)
        }

    def step(
        self,
        m: int,
        loads: Sequence[Loaded],
        rows: Sequence[tuple[str, int]],
        total: int,
        guard: Guard | None = None,
    ) -> dict[tuple[str, int], Any]:
        """Instruction ``m`` run for ``total`` (group, block) pairs, each register of
        ``loads`` holding its values for them: per register of ``rows``, its values after
        the step, or None where the step read an unloaded register or refused the values.
        The pairs are the shadow's threads, :attr:`cols` at most at a time. With ``guard``, a
        row keeps its loaded value where the guard is false (a row not loaded: None)."""
        held = {(kind, index): values for kind, index, values in loads}
        blk = self._block(total)
        parts: dict[tuple[str, int], list[Any]] = {r: [] for r in rows}
        bad: set[tuple[str, int]] = set()
        for start in range(0, total, blk.threads):
            stop = min(total, start + blk.threads)
            w = stop - start
            for kind, index, values in loads:
                value, taint = _row(blk, kind, index)
                value[:w] = values[start:stop]
                taint[:w] = 0
            try:
                self.program[m](blk, np.arange(w))
                if guard is not None:
                    _select(blk, rows, held, guard, start, stop, bad)
            except (TraceError, ValueError, IndexError, TypeError, OverflowError):
                bad.update(rows)  # the step refuses these values: no vector from it
            finally:
                for kind, index in rows:
                    value, taint = _row(blk, kind, index)
                    if taint[:w].any():
                        bad.add((kind, index))
                    elif (kind, index) not in bad:
                        parts[(kind, index)].append(value[:w].copy())
                    taint[:] = _mark(kind, index)
                for kind, index, _ in loads:
                    _row(blk, kind, index)[1][:] = _mark(kind, index)
                blk.byte_clean.clear()  # the marks are whole registers' taints
        return {r: None if r in bad or not parts[r] else np.concatenate(parts[r]) for r in rows}


def _select(
    blk: Block,
    rows: Sequence[tuple[str, int]],
    held: dict[tuple[str, int], Any],
    guard: Guard,
    start: int,
    stop: int,
    bad: set[tuple[str, int]],
) -> None:
    """Where ``guard`` (a loaded predicate) is false, each row takes back its loaded value:
    the step did not run there."""
    kind, index, negated = guard
    if (kind, index) not in held:
        bad.update(rows)
        return
    ran = np.asarray(held[(kind, index)][start:stop], dtype=bool) ^ negated
    w = stop - start
    for row in rows:
        old = held.get(row)
        if old is None:
            bad.add(row)
            continue
        value = _row(blk, *row)[0]
        value[:w] = np.where(ran, value[:w], np.asarray(old[start:stop]).astype(value.dtype))


def _key(form: Any, at: Any) -> Any:
    """What a source gives a step, for the groups' first threads ``at`` (None: nothing)."""
    if form is None:
        return None
    return (np.asarray(form.k)[at].tobytes(), np.asarray(form.vids)[at].tobytes())


def _mark(kind: str, index: int) -> Any:
    """The taint an unloaded register of the shadow carries (none for PT)."""
    return 0 if kind in ("P", "UP") and index == PT else _MARK


def _row(blk: Block, kind: str, index: int) -> tuple[Any, Any]:
    values, taints = blk.file(kind)
    return values[index], taints[index]


def _load(kind: str, index: int, form: Any, at: Any) -> Load:
    """What register ``kind``/``index`` holds for each group (its first thread ``at[g]``):
    ``k`` and a vector (``k + V[b]``; a predicate's value is ``V[b]``), or ``k`` alone."""
    pred = kind in ("P", "UP")
    ks = np.asarray(form.k)[at].astype(bool if pred else np.uint32)
    return Load(kind, index, ks, np.asarray(form.vids)[at].astype(np.int64))
