"""One instruction run for every candidate block at once, through the emulator's own step.

A *shadow* block is an emulator :class:`~..state.Block` whose threads stand for the candidate
blocks of a grid (:mod:`.forms`), :data:`COLUMNS` at a time. To evaluate an instruction for
a group of the representative's threads, each register it reads is loaded with one thread's
value in every block (``k + V[b]``) and the instruction's step runs over the shadow's
threads: its destinations then hold the group's value in each block. Every register not
loaded carries a marker taint, so a step that reads one (a pair's second register, an index
register) leaves the marker on its result: no vector is taken from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Operand, Reg
from ..state import PT, TAINT_UNKNOWN, Block, Launch, TraceError

#: candidate blocks evaluated together (the shadow's threads)
COLUMNS = 1 << 16
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

    def _block(self) -> Block:
        if self._blk is None:
            lc = self.launch
            shadow = Launch(
                block=(self.cols, 1, 1),
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
        return self._blk

    def run(
        self,
        m: int,
        ins: Instruction,
        sources: Sequence[Operand],
        forms: Sequence[Any],
        pairs: Sequence[Any],
        firsts: Sequence[int],
        vec: Any,
    ) -> dict[tuple[str, int], list[Any]]:
        """Per destination register, per group (its first thread ``firsts[g]``): the value of
        instruction ``m`` in each candidate block, or None where it read an unloaded
        register. The (group, block) pairs are the shadow's threads, :data:`COLUMNS` at a
        time."""
        at = np.asarray(firsts, dtype=np.intp)
        key = (m, *(_key(f, at) for f in forms), *(_key(f, at) for f in pairs))
        seen = self._seen.get(key)
        if seen is not None:
            return {r: [vec[i] if i >= 0 else None for i in ids] for r, ids in seen.items()}
        out = self._run(m, sources, forms, pairs, firsts, vec)
        if len(self._seen) < SEEN:
            self._seen[key] = {
                r: [vec.intern(v) if v is not None else -1 for v in got] for r, got in out.items()
            }
        return out

    def _run(
        self,
        m: int,
        sources: Sequence[Operand],
        forms: Sequence[Any],
        pairs: Sequence[Any],
        firsts: Sequence[int],
        vec: Any,
    ) -> dict[tuple[str, int], list[Any]]:
        blk = self._block()
        rows = [(k, i + j) for k, i, c in self.program.destinations[m] for j in range(c)]
        loads = []
        for o, f, pf in zip(sources, forms, pairs, strict=True):
            if isinstance(o, Reg) and not o.is_zero and not o.is_true:
                loads.append((o.kind, o.index, _values(o.kind, f, firsts, vec, vec.n)))
                if pf is not None:
                    loads.append((o.kind, o.index + 1, _values(o.kind, pf, firsts, vec, vec.n)))
        total = len(firsts) * vec.n
        parts: dict[tuple[str, int], list[Any]] = {r: [] for r in rows}
        bad: set[tuple[str, int]] = set()
        for start in range(0, total, self.cols):
            stop = min(total, start + self.cols)
            w = stop - start
            for kind, index, values in loads:
                if values is not None:
                    value, taint = _row(blk, kind, index)
                    value[:w] = values[start:stop]
                    taint[:w] = 0
            try:
                self.program[m](blk, np.arange(w))
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
        out: dict[tuple[str, int], list[Any]] = {}
        for r in rows:
            if r in bad or not parts[r]:
                out[r] = [None] * len(firsts)
                continue
            whole = np.concatenate(parts[r])
            out[r] = [whole[g * vec.n : (g + 1) * vec.n] for g in range(len(firsts))]
        return out


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


def _values(kind: str, form: Any, firsts: Sequence[int], vec: Any, n: int) -> Any:
    """A register's value for each (group, candidate block), flattened group by group:
    each group's first thread's ``k + V[b]`` (``k`` where it has no vector)."""
    at = np.asarray(firsts, dtype=np.intp)
    vids = np.asarray(form.vids)[at]
    has = vids >= 0
    pred = kind in ("P", "UP")
    ks = np.asarray(form.k)[at].astype(bool if pred else np.uint32)
    out = np.repeat(ks[:, None], n, axis=1)
    if has.any():
        used, which = np.unique(vids[has], return_inverse=True)
        table = np.stack([vec[int(u)] for u in used])[which]
        out[has] = table if pred else table + ks[has][:, None]
    return out.reshape(-1)
