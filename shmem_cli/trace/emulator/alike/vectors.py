"""Block vectors over a grid's candidate blocks, kept whole where they are small and as the
step that makes them where they are not, evaluated a window of blocks at a time.

A *block vector* holds one value per candidate block (:mod:`.forms`). The vectors of an
instruction evaluated over the blocks (:mod:`.shadow`: one per group of threads with other
sources, per register it writes) take ``groups x blocks`` values: 256 groups over 65,536
blocks are 64 MiB for one instruction. Where that passes :data:`EAGER` values, or a source is
itself kept as a step, :class:`Vectors` keeps the *step* instead (:class:`.distinct.Step`: the
instruction and, per group, what each source register holds: a constant and a source
vector), and evaluates it on demand over a window of blocks, every step it depends on
evaluated for the same window first, through the emulator's own step on the shadow block
(:meth:`.shadow.Shadow.step`; once per distinct block of its sources where they are whole:
:mod:`.distinct`). A window holds at most :data:`ELEMENTS` values of the steps it evaluates,
so memory stays bounded for any grid; the values are the same ones a whole evaluation would
give (each block's value depends on that block's sources only). Vectors a decision read are
then kept whole where they fit half of :data:`VECTOR_BYTES` (the next class's block often
reads them again), and the evaluations of one trace stop at :data:`WORK` pairs (a step's
groups at the distinct blocks it ran for), or fewer (:attr:`Vectors.most`): past that a
vector is :class:`Unknown`.

Agreements (boolean vectors: the blocks in which a predicate keeps the representative's
value) are kept whole (one byte per block, once by content), made from a vector on first
use (:meth:`Vectors.same_as`, :meth:`Vectors.masks`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ....plumbing.frozen import frozen
from .distinct import (
    Distinct,
    Maps,
    Plan,
    Spread,
    Step,
    Stepper,
    agreeing,
    interned,
    loaded,
    planned,
    rows,
    spread,
)

#: values one window's evaluation holds at most (over every step it evaluates)
ELEMENTS = 1 << 21
#: an instruction's vectors are evaluated whole at once where they take at most this many
#: values (groups x blocks) and their sources are whole
EAGER = 1 << 21
#: (group, block) pairs the steps kept may be evaluated for in one trace, at most (about
#: half a minute; :attr:`Vectors.most` may ask for less): past it a vector they make is
#: :class:`Unknown` (the decision reading it is not proven, and the blocks left run as
#: they would without classes)
WORK = 1 << 31
#: a value made for a whole instruction at once counts this many pairs (read over every block
#: by the watch: bl_tiles's first block's 52 million, 2.5 s); past :attr:`Vectors.most` the
#: instruction's vectors are kept as its step, whose evaluation then stops
MADE_WEIGHT = 2
#: the vectors kept whole take at most this much memory (past it no new vector is made)
VECTOR_BYTES = 256 << 20
#: of it, the share vectors kept whole may take before an instruction's are kept as a step
_WHOLE_SHARE = 2
#: blocks whose values of the steps kept are held at once (:meth:`Vectors.at`: the class
#: blocks run together read theirs in turn)
POINTS = 64
#: the values of the steps kept at a round's blocks (:meth:`Vectors.at_many`) held at most
SPAN_VALUES = 1 << 24
#: what a step kept, and each vector made by one, count against the bytes (besides its loads)
_ENTRY_BYTES = 64


class Unknown(Exception):
    """A vector kept as a step could not be evaluated for some blocks (the step refused
    their values, or read a register it was not given)."""


@frozen
class _Made:
    """A vector a step makes: its group's value in register ``rows[row]``."""

    step: int
    row: int
    group: int


@frozen
class Same:
    """The agreement of vector ``vid`` with its value in block ``rep`` (made on first use)."""

    vid: int
    rep: int


class Vectors:
    """Block vectors over the ``n`` candidate blocks, each with an id: whole arrays (kept
    once by content), vectors a :class:`.distinct.Step` makes, and agreements."""

    def __init__(self, n: int, stepper: Stepper) -> None:
        self.n = n
        self.stepper = stepper
        self.values: list[Any] = []
        self.steps: list[Step] = []
        self._deps: list[tuple[int, ...]] = []  # per step: the steps its loads' vectors need
        self._plans: list[list[Plan]] = []  # per step, per load: where its groups' values are
        self._ids: dict[tuple[Any, ...], int] = {}
        self._maps = Maps()  # each block's distinct block, of the vectors held spread
        self._agreed: dict[tuple[int, int], int] = {}  # whole vectors' agreements, made once
        self.bytes = 0  # of vectors kept whole
        self.tidy_at = 0  # past it (and .held.TIDY), the vectors no form holds are let go
        self.kept = 0  # of steps kept
        self.full = False
        # blocks' values, by step (a class's block's, or those of the blocks run together)
        self._points: dict[int, dict[int, Any]] = {}
        self._spans: dict[tuple[int, int], dict[int, Any]] = {}  # the same, over a span
        self._widest = 1  # the most values a step kept makes for one block
        self._made = np.zeros(1024, dtype=bool)  # by id: kept as a step (not yet whole)
        self.work = 0  # (group, block) pairs evaluated (made whole: MADE_WEIGHT each)
        self.made = 0  # of them, those made whole (weighted)
        self.most = WORK  # at most (:mod:`.classes` asks for less where blocks cost less)...
        self.per_ran = 0.0  # ... and this many more per thread-instruction the watch ran
        self.ran = 0  # (counted by :func:`.held.tidy`; :mod:`.classes` may start it below 0)
        self._distinct = Distinct()  # the distinct blocks of whole vectors a step reads

    # --- making vectors ---------------------------------------------------------------

    def intern(self, v: Any, key: tuple[Any, ...] | None = None) -> int:
        """The id of whole vector ``v`` (uint32 or bool over the candidates; or one read in
        place, an :class:`.distinct.Arc`, kept once by ``key``); -1 past the budget."""
        v = np.ascontiguousarray(v) if key is None else v
        key = (v.dtype.str, v.tobytes()) if key is None else key
        got = self._ids.get(key)
        if got is not None:
            return got
        if self.bytes + self.kept + v.nbytes > VECTOR_BYTES:
            self.full = True
            return -1
        self.values.append(v)
        self.bytes += v.nbytes
        self._ids[key] = len(self.values) - 1
        return len(self.values) - 1

    def _spread(self, rows: Any, at: Any) -> list[int]:
        """The ids of whole vectors ``rows[g][at]`` (groups x distinct blocks), each held as a
        :class:`.distinct.Spread` (``at``: :meth:`.distinct.Maps.held`'s; the rows' keys cut
        from one buffer: 7x the speed of a row at a time); -1 past the budget."""
        rows = np.ascontiguousarray(rows)
        raw, size, kind = rows.tobytes(), rows.shape[1] * rows.itemsize, rows.dtype.str
        out: list[int] = []
        for g in range(len(rows)):
            key = ("spread", kind, raw[g * size : (g + 1) * size], id(at))
            if key not in self._ids:
                if self.bytes + self.kept + size > VECTOR_BYTES:
                    self.full = True
                    out.append(-1)
                    continue
                self.values.append(Spread(rows[g], at))
                self.bytes += size
                self._ids[key] = len(self.values) - 1
            out.append(self._ids[key])
        return out

    def make(self, step: Step) -> dict[tuple[str, int], list[int]]:
        """The vectors ``step`` makes, per register it writes, per group (-1: none): whole
        where they are small and their sources whole, else kept as the step."""
        size = step.groups * self.n
        lazy = (
            size > EAGER
            or self.bytes + 4 * size > VECTOR_BYTES // _WHOLE_SHARE
            or self.work >= self.allowed()
            or any(self.any_step(ld.vids) for ld in step.loads)
        )
        plans = [planned(ld.vids, self.values, _Made) for ld in step.loads]
        if not lazy:
            got, at = self._values(step, plans, 0, self.n, {}, False)
            made = MADE_WEIGHT * step.groups * (self.n if at is None else int(at.max()) + 1)
            self.work, self.made = self.work + made, self.made + made
            out: dict[tuple[str, int], list[int]] = {}
            for row in step.rows:
                a = got[row]
                if a is None:
                    out[row] = [-1] * step.groups
                elif at is None or a.dtype == bool:
                    out[row] = interned(a, at, self.intern)
                else:  # the distinct blocks' values kept, each block's read through the map
                    where, new = self._maps.held(at)
                    self.bytes += new
                    out[row] = self._spread(a, where)
            return out
        cost = _ENTRY_BYTES * (1 + len(step.rows) * step.groups)
        cost += sum(ld.ks.nbytes + ld.vids.nbytes for ld in step.loads)
        if self.bytes + self.kept + cost > VECTOR_BYTES:
            self.full = True
            return {row: [-1] * step.groups for row in step.rows}
        self.kept += cost
        self.steps.append(step)
        self._widest = max(self._widest, step.groups * len(step.rows))
        first, end = len(self.values), len(self.values) + len(step.rows) * step.groups
        if end > len(self._made):
            self._made = np.resize(self._made, max(end, 2 * len(self._made)))
        self._made[first:end] = True
        self._plans.append(plans)
        self._deps.append(tuple(sorted({k[0] for p in plans for k in p.made})))
        s = len(self.steps) - 1
        out = {}
        for r, row in enumerate(step.rows):
            out[row] = []
            for g in range(step.groups):
                self.values.append(_Made(s, r, g))
                out[row].append(len(self.values) - 1)
        return out

    def forget(self, dead: Any) -> None:
        """Let go of the vectors ``dead`` (a mask over the ids, held whole: :mod:`.held`)."""
        for v in np.flatnonzero(dead).tolist():
            self.values[v] = None
        self._ids = {k: v for k, v in self._ids.items() if not dead[v]}
        self._agreed = {k: v for k, v in self._agreed.items() if not dead[[k[0], v]].any()}
        held = {id(v): v.nbytes for v in self.values if isinstance(v, (np.ndarray, Spread))}
        self.bytes = self._maps.bytes + sum(held.values())

    def allowed(self) -> int:
        """The pairs the evaluations may reach now (:attr:`most`, and :attr:`per_ran` for
        each thread-instruction the watched blocks ran: the first round's)."""
        return min(WORK, self.most + int(self.per_ran * max(0, self.ran)))

    def same_as(self, vid: int, rep: int) -> int:
        """The id of the agreement of vector ``vid`` with its value in block ``rep``."""
        v = self.values[vid]
        if isinstance(v, (np.ndarray, Spread)):
            got = self._agreed.get((vid, rep))
            if got is None:
                got = self.intern(
                    agreeing([(v, v[rep])], self.n) if isinstance(v, Spread) else v == v[rep]
                )
                if got >= 0:  # (-1: past the budget, asked again next time)
                    self._agreed[(vid, rep)] = got
            return got
        got = self._agreed.get((vid, rep))  # (one per vector and block: a causal
        if got is None:  # attention's 64 x 32 grid asked 7 million times)
            self.values.append(Same(vid, rep))
            got = self._agreed[(vid, rep)] = len(self.values) - 1
        return got

    # --- reading them -----------------------------------------------------------------

    def any_step(self, vids: Any) -> bool:
        """Whether one of the vectors ``vids`` (ids; below 0: none) is kept as a step."""
        if not self.steps:
            return False
        v = np.asarray(vids)
        v = v[(v >= 0) & (v < len(self._made))]
        return bool(self._made[v].any())

    def masks(self, vids: Sequence[int]) -> list[Any]:
        """Agreements ``vids`` over the candidates (bool), those not yet made evaluated
        together, a window at a time; raises :class:`Unknown` where a vector one is made
        from cannot be evaluated."""
        todo = {v: self.values[v] for v in vids if isinstance(self.values[v], Same)}
        if todo:
            at = {v: self.at(same.vid, same.rep) for v, same in todo.items()}
            out = {v: np.empty(self.n, dtype=bool) for v in todo}
            sources = sorted({same.vid for same in todo.values()})
            for lo, hi, got in self.windows(sources):
                for v, same in todo.items():
                    out[v][lo:hi] = got[same.vid] == at[v]
            for v, mask in out.items():  # kept once by content
                kept = self.intern(mask)
                self.values[v] = self.values[kept] if kept >= 0 else mask
        return [self.values[v] for v in vids]

    def at_each(self, vids: Sequence[int], block: int) -> tuple[Any, Any]:
        """(Each vector's value in candidate block ``block``, 0 for an id below 0; the ids,
        -1 where one cannot be evaluated: :class:`Unknown`), whole vectors read in place (a
        loop's every step reads them: a causal attention's watch made 4 million calls)."""
        out, ids = self.at_many(vids, [block])
        return out[:, 0], ids[:, 0]

    def at_many(self, vids: Sequence[int], blocks: Sequence[int]) -> tuple[Any, Any]:
        """:meth:`at_each` for several blocks: (values, ids), each groups x blocks; each
        distinct vector read once (groups share them), those kept as steps together, block
        by block (one at a time, they took half of a 64 x 32 causal grid's watch)."""
        ids = np.array(vids, dtype=np.int64)
        used, which = np.unique(ids, return_inverse=True)
        at = np.asarray(blocks, dtype=np.intp)
        out = np.zeros((len(used), len(at)), dtype=np.uint64)
        known = np.ones((len(used), len(at)), dtype=bool)
        made: list[int] = []  # rows of vectors kept as steps
        for g, v in enumerate(used.tolist()):
            held = self.values[v] if v >= 0 else None
            if isinstance(held, _Made):
                made.append(g)
            elif held is not None:
                out[g] = held[at]
        steps = [int(used[g]) for g in made]
        if steps and not self._spanned(steps, at, out, made):
            for j, block in enumerate(at.tolist()):
                try:
                    got = self._window(steps, block, block + 1, self._memo(block))
                    out[made, j] = [int(got[v][0]) for v in steps]
                except Unknown:  # one of them cannot be evaluated: each apart
                    for g, v in zip(made, steps, strict=True):
                        try:
                            out[g, j] = self.at(v, block)
                        except Unknown:
                            known[g, j] = False
        which = which.reshape(-1)
        return out[which], np.where(known[which], ids[:, None], -1)

    def _spanned(self, steps: list[int], at: Any, out: Any, made: list[int]) -> bool:
        """Vectors ``steps`` (kept as steps) read at the blocks ``at`` into ``out``'s rows
        ``made`` from one window over the blocks' span, where they are close together (a
        round's blocks, all read at each step: its span's steps' values kept for the round);
        False where they are not, or one cannot be evaluated."""
        lo, hi = int(at.min()), int(at.max()) + 1
        if len(at) < 2 or hi - lo > 2 * len(at):
            return False
        memo = self._spans.get((lo, hi))
        if memo is None or len(memo) * (hi - lo) * self._widest > SPAN_VALUES:
            self._spans = {(lo, hi): {}}  # (one span at a time: a round's)
            memo = self._spans[(lo, hi)]
        try:
            got = self._window(steps, lo, hi, memo)
        except Unknown:
            return False
        out[made] = np.stack([np.asarray(got[v]) for v in steps])[:, at - lo]
        return True

    def _memo(self, block: int) -> dict[int, Any]:
        """The values of the steps evaluated at block ``block`` so far (:data:`POINTS`
        blocks' kept)."""
        memo = self._points.get(block)
        if memo is None:
            if len(self._points) >= POINTS:
                self._points.clear()
            memo = self._points[block] = {}
        return memo

    def at(self, vid: int, block: int) -> int:
        """Vector ``vid``'s value in candidate block ``block``."""
        v = self.values[vid]
        if not isinstance(v, _Made):
            return int(v[block])
        return int(self._window([vid], block, block + 1, self._memo(block))[vid][0])

    def windows(self, vids: Sequence[int]) -> Iterator[tuple[int, int, dict[int, Any]]]:
        """(first block, end, each vector's values there) over the candidates, a window of
        blocks at a time (the whole at once where every vector is whole). Vectors kept as
        steps are kept whole once evaluated, where that fits half the budget (a vector read
        once is often read again: the next class's block compares with it)."""
        need = self._needed(vids)
        if not need:
            yield 0, self.n, {v: np.asarray(self.values[v]) for v in vids}
            return
        per_block = sum(
            self.steps[s].groups * (len(self.steps[s].loads) + len(self.steps[s].rows))
            for s in need
        )
        width = max(1, min(self.n, ELEMENTS // max(1, per_block)))
        made = sorted({v for v in vids if isinstance(self.values[v], _Made)})
        size = self.n * sum(self._width(v) for v in made)
        keep = self.bytes + self.kept + size <= VECTOR_BYTES // _WHOLE_SHARE
        whole: dict[int, Any] = {}
        for v in made if keep else ():
            whole[v] = np.empty(self.n, bool if self._width(v) == 1 else np.uint32)
        for lo in range(0, self.n, width):
            hi = min(self.n, lo + width)
            got = self._window(vids, lo, hi, {})
            for v, out in whole.items():
                out[lo:hi] = got[v]
            yield lo, hi, got
        for v, out in whole.items():
            self.values[v] = out
            self._made[v] = False
            self.bytes += out.nbytes

    def _width(self, vid: int) -> int:
        """Bytes a block's value of vector ``vid`` (a step's) takes: 1 for a predicate."""
        v = self.values[vid]
        return 1 if self.steps[v.step].rows[v.row][0] in ("P", "UP") else 4

    # --- evaluating steps -------------------------------------------------------------

    def _needed(self, vids: Sequence[int], have: Any = ()) -> list[int]:
        """The steps the vectors ``vids`` need evaluated, in the order they were made (but
        those of ``have``, evaluated already)."""
        need: set[int] = set()
        todo = list({self.values[v].step for v in vids if isinstance(self.values[v], _Made)})
        while todo:
            s = todo.pop()
            if s in need or s in have:
                continue
            need.add(s)
            todo.extend(self._deps[s])
        return sorted(need)

    def _window(self, vids: Sequence[int], lo: int, hi: int, memo: dict[int, Any]) -> Any:
        for s in self._needed(vids, memo):
            memo[s] = spread(*self._values(self.steps[s], self._plans[s], lo, hi, memo, True))
        return {v: self._slice(v, lo, hi, memo) for v in vids}

    def _slice(self, vid: int, lo: int, hi: int, memo: dict[int, Any]) -> Any:
        v = self.values[vid]
        if not isinstance(v, _Made):
            return v[lo:hi]
        return self._evaluated(memo, v.step, v.row)[v.group]

    def _evaluated(self, memo: dict[int, Any], step: int, row: int) -> Any:
        """What step ``step`` wrote to its register ``row`` (groups x blocks), from
        ``memo``; raises :class:`Unknown` where the step could not evaluate it."""
        got = memo[step][self.steps[step].rows[row]]
        if got is None:
            raise Unknown(f"step {self.steps[step].m} could not be evaluated")
        return got

    def _values(
        self, step: Step, plans: list[Plan], lo: int, hi: int, memo: dict[int, Any], count: bool
    ) -> tuple[dict[tuple[str, int], Any], Any]:
        """(Per register ``step`` writes: its values, groups x the distinct blocks of lo..hi, or
        None; each block's distinct block, None: the step ran for every block). ``count``: the
        pairs it runs count toward :attr:`work` (:class:`Unknown` past :meth:`allowed`)."""
        few = self._distinct.of(plans, self.values, lo, hi)
        w = hi - lo if few is None else len(few[0])
        if count:
            self.work += step.groups * w
            if self.work > self.allowed():
                raise Unknown(f"the steps kept were evaluated for {self.work:,} pairs")
        loads = []
        for ld, plan in zip(step.loads, plans, strict=True):
            pred = ld.kind in ("P", "UP")
            src = None
            if plan.whole:  # the whole vectors' values, a row each
                cut = slice(lo, hi) if few is None else lo + few[0]  # (only those run)
                src = rows([self.values[v] for v in plan.whole], cut)
            out = loaded(np.asarray(ld.ks), pred, plan, src, w)
            ks = np.asarray(ld.ks)
            for (made, row), (gs, groups) in plan.made.items():
                got = self._evaluated(memo, made, row)
                out[gs] = got[groups] if pred else got[groups] + ks[gs, None]
            loads.append((ld.kind, ld.index, out.reshape(-1)))
        total = step.groups * w
        if step.guard is None:
            got = self.stepper.step(step.m, loads, step.rows, total)
        else:
            got = self.stepper.step(step.m, loads, step.rows, total, step.guard)
        values = {r: None if a is None else a.reshape(step.groups, w) for r, a in got.items()}
        return values, None if few is None else few[1]
