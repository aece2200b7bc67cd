"""Classes' blocks run together: several blocks in no class yet, side by side in one batch,
each watched for its own class.

A block run alone costs about as many steps as run in a batch of many (the emulator's time
goes by steps, one instruction for the threads at it): a causal attention whose 1,536 blocks
fall into 16 classes ran its 16 class blocks one after the other in 136 s, where a batch of
49 of its blocks takes 38 s. After the grid's first block (alone: where every block is
alike, one runs), :mod:`.classes` runs the next blocks in no class together, as many as the
classes found so far say are left (:func:`how_many`).

:class:`Watches` gives each CTA of the batch its own :class:`.watch.Watch` and
:class:`.forms.Forms` (the forms' stores shared: each CTA writes only its threads' rows),
and hands each one the threads of its CTA, only where a decision carries taint: a decision
free of it is free of it in every CTA. Their counts are kept apart (:func:`counts_of_ctas`:
the thread-instructions of each CTA, its op_misc warps, barriers and warps predicated off,
:attr:`..state.Block.by_cta`), and so are their requests
(:meth:`...recorder.Recorder.close_classes`). Where they cannot be (the batch's records
were folded, it ran instructions whose tallies are not kept per CTA, or blocks waited on
others and others ran meanwhile), its blocks stand for themselves alone: exact, without
their classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....plumbing.frozen import frozen
from ..state import Block, Idx
from . import agree
from .evaluated import base_opcode, looked_at
from .forms import SPLIT, Pending
from .held import tidy
from .watch import Watch

#: instructions whose forms are made for each CTA apart (their agreements are a block's)
_OWN = frozenset({"S2R", "ISETP", "PLOP3"})
#: tallies of a batch that are not kept per CTA: a batch that has any cannot be split
_WHOLE_ONLY = ("unmodelled", "dsmem_sectors", "dsmem_atoms", "cas_failed")


def how_many(left: int, classed: int, classes: int, most: int) -> int:
    """Blocks to run together next: as many classes as ``left`` blocks make at least if
    classes are as large as the ``classes`` found so far (over ``classed`` blocks), at most
    ``most`` (a block of the batch that falls in the class of one beside it ran for
    nothing: the guess is low)."""
    size = max(1, classed // max(1, classes))
    return max(1, min(most, left // size))


def is_last(left: int, classed: int, classes: int, together: int) -> bool:
    """Whether a round of ``together`` blocks is expected to be the last: as many as the
    classes the ``left`` blocks make if classes are as large as the ``classes`` found so far
    (over ``classed`` blocks; :func:`how_many` not held back by its ``most``)."""
    size = max(1, classed // max(1, classes))
    return together >= -(-left // size)


class Watches:
    """The watches over the CTAs of a batch, one :class:`.watch.Watch` each (in CTA order)."""

    def __init__(self, watches: Sequence[Watch], blocks: Sequence[int]) -> None:
        self.watches, self.blocks = list(watches), list(blocks)  # blocks: their numbers
        first = watches[0]
        forms = self.forms = first.forms
        for w in self.watches[1:]:  # one store: each CTA's threads have their own rows
            if w.forms is not None and forms is not None:
                w.forms.regs, w.forms.preds = forms.regs, forms.preds
                w.forms.stored = forms.stored
        self.instructions: list[Instruction] = first.instructions
        n = len(self.instructions)
        self.watched = [
            [*first.branches[m], *first.registers[m], *first.addresses[m]] for m in range(n)
        ]
        self.groups = [
            len(first.branches[m]) + bool(first.registers[m]) + bool(first.addresses[m])
            for m in range(n)
        ]
        self.formed = [looked_at(ins) for ins in self.instructions]
        # what an instruction writes is the same vectors whichever CTA's forms evaluate it,
        # each CTA's constants taken after (:meth:`.forms.Forms.after`), but for a compare's
        # or a predicate combination's agreements, made against a CTA's own block
        self.union = [_union(ins) for ins in self.instructions]
        self.selects = None if first.chooses is None else first.chooses.selects
        self.n = 0 if forms is None else forms.vec.n  # the candidate blocks
        self.decisions = 0  # those free of taint, checked here for every CTA at once

    @property
    def all_decisions(self) -> int:
        """Decisions checked, over every CTA."""
        return self.decisions + sum(w.decisions for w in self.watches)

    def _split(self, blk: Block, at: Idx) -> list[tuple[Watch, Any]]:
        """Each CTA's watch with its threads of ``at``."""
        return [(w, ids) for w, ids, _ in self._parts(blk, at)]

    def _parts(self, blk: Block, at: Idx) -> list[tuple[Watch, Any, Any]]:
        """Each CTA's watch with its threads of ``at``, and which of ``at``'s they are."""
        ids = blk.ids(at)
        cta = blk.cta[ids]
        if not len(ids):
            return []
        steps = np.diff(cta)
        if not np.count_nonzero(steps):
            return [(self.watches[int(cta[0])], ids, slice(None))]
        if (steps >= 0).all():  # (threads in order: each CTA's a run of them, a slice)
            cuts = [0, *(np.flatnonzero(steps) + 1).tolist(), len(ids)]
            return [
                (self.watches[int(cta[lo])], ids[lo:hi], slice(lo, hi))
                for lo, hi in zip(cuts, cuts[1:], strict=False)
            ]
        return [(self.watches[int(c)], ids[cta == c], cta == c) for c in np.unique(cta)]

    def _ctas(self, blk: Block, at: Idx) -> int:
        """How many CTAs the threads ``at`` span."""
        cta = blk.cta[blk.ids(at)]
        return 0 if not len(cta) else 1 + int(np.count_nonzero(np.diff(cta)))

    def guard(self, m: int, blk: Block, kind: str, index: int, at: Idx) -> None:
        if not np.count_nonzero(blk.file(kind)[1][index][at]):  # (cheaper than np.any)
            self.decisions += self._ctas(blk, at)
            return
        for w, ids in self._split(blk, at):
            w.guard(m, blk, kind, index, ids)

    def operands(self, m: int, blk: Any, at: Any) -> None:
        regs = self.watched[m]
        if not regs:
            return
        if not any(_tainted(blk, kind, index, at) for kind, index in regs):
            self.decisions += self.groups[m] * self._ctas(blk, at)
            return
        for w, ids in self._split(blk, at):
            w.operands(m, blk, ids)

    def before(self, m: int, blk: Block, ix: Idx) -> Any:
        if self.selects is not None and self.selects[m]:  # a CTA's guard chose (.guarded)
            parts = self._parts(blk, ix)
            if any(w.chose is not None for w, _, _ in parts):
                return [(w, ids, w.before(m, blk, ids)) for w, ids, _ in parts]
        formed = self.formed[m]
        if formed is None or (formed and not any(_tainted(blk, k, i, ix) for k, i in formed)):
            return None  # no form to make: no source depends on the block index
        parts = self._parts(blk, ix)
        if self.union[m] and self.forms is not None:
            formless = self.forms.formless(m, blk, blk.ids(ix))
            if np.count_nonzero(formless):  # no form for all at once, nor for a CTA with one
                return [
                    (w, ids, None if formless[sel].any() else w.before(m, blk, ids))
                    for w, ids, sel in parts
                ]
        # the CTAs' groups evaluated at once, where their vectors are made whole (SPLIT
        # else: a vector kept as its step is evaluated for all its groups whichever block
        # reads it); a compare's agreements are each CTA's own, proven where needed
        if len(parts) > 1 and self.union[m]:
            every = parts[0][0].before(m, blk, ix, whole=True)
            if every is not SPLIT and every is not None:
                # (a CTA's sources kept as steps only where the CTAs' are)
                lazy, forms = every.lazy, self.forms
                apart = lazy is not None and forms is not None and forms.stepped(lazy[1])
                return [(w, ids, _part(every, w, ids, sel, apart)) for w, ids, sel in parts]
        return [(w, ids, w.before(m, blk, ids)) for w, ids, _ in parts]

    def after(self, pending: Any, m: int, blk: Block, ix: Idx) -> None:
        if pending is None:  # every CTA's destinations lose their forms (one store)
            self.watches[0].after(None, m, blk, ix, alone=False)
        else:
            _read_reps(pending)
            for w, ids, p in pending:
                w.after(p, m, blk, ids, alone=False)
        forms = [w.forms for w in self.watches if w.forms is not None]
        if forms:
            tidy(forms, blk.threads if isinstance(ix, slice) else len(ix))

    def requests(self, tainted: dict[int, dict[int, int]], recorded: int) -> None:
        """The batch recorded ``recorded`` shared-memory requests; ``tainted``: per block (of
        the batch, in order) those instructions whose requests' addresses carry taint, with
        that taint (:meth:`.watch.Watch.requests`)."""
        self.decisions += recorded
        for w, block in zip(self.watches, self.blocks, strict=True):
            w.requests(tainted.get(block, {}), 0)


def _union(ins: Instruction) -> bool:
    """Whether the CTAs' forms of what ``ins`` writes are made at once (:data:`_OWN` apart,
    but a compare whose predicate input is not one it writes: its agreements are proven for
    each CTA after it runs)."""
    op = base_opcode(ins)
    return op not in _OWN or op == "ISETP" and not agree.reads_own(ins)


def _part(every: Pending, w: Watch, ids: Any, sel: Any, apart: bool = True) -> Pending:
    """CTA ``w``'s threads ``ids`` (``sel`` of the batch's) of the step ``every`` evaluated
    for the CTAs at once: a compare's sources its own (None where one is kept as a step:
    the shadow's values decide; ``apart``: one of the CTAs' is, so each CTA's are looked at)."""
    lazy = every.lazy
    if lazy is not None and w.forms is not None:
        ins, forms, _, blk = lazy
        cut = [None if f is None else f._replace(k=f.k[sel], vids=f.vids[sel]) for f in forms]
        lazy = None if apart and w.forms.stepped(cut) else (ins, cut, ids, blk)
    return replace(every, ids=ids, group=every.group[sel], lazy=lazy)


def _read_reps(pending: list[tuple[Watch, Any, Pending | None]]) -> None:
    """The vectors a step evaluated for the CTAs at once, read at every CTA's own block in
    one go (:meth:`.vectors.Vectors.at_many`; each CTA's apart took a fifth of a causal
    attention's watch), for :meth:`.forms.Forms.after`."""
    shared: dict[int, list[int]] = {}
    for k, (w, _, p) in enumerate(pending):
        if p is not None and p.results and w.forms is not None:
            shared.setdefault(id(p.results), []).append(k)
    for ks in shared.values():
        first, p = pending[ks[0]][0].forms, pending[ks[0]][2]
        if len(ks) < 2 or first is None or p is None:
            continue
        reps = [w.forms.rep for w, _, _ in (pending[k] for k in ks) if w.forms is not None]
        got = {
            row: first.vec.at_many(per_group, reps)
            for row, per_group in p.results.items()
            if not (row[0] in ("P", "UP") and p.additive)
        }
        for j, k in enumerate(ks):
            one = pending[k][2]
            if one is not None:
                one.reads = {row: (vals[:, j], ids[:, j]) for row, (vals, ids) in got.items()}


def _tainted(blk: Block, kind: str, index: int, at: Idx) -> bool:
    table = blk.file(kind)[1]
    return index < len(table) and bool(np.count_nonzero(table[index][at]))


@frozen
class Ran:
    """What :func:`counts_of_ctas` reads of the batch run last, kept instead of its
    :class:`..state.Block` (whose state, kept on the run, lived on beside the next batch's
    and past the run, held by the run's own reference cycles)."""

    ctas: int
    n_warps: int  # of a block
    by_cta: dict[tuple[str, int, int], int] | None
    work: Any  # the thread-instructions of each CTA (the block's clock), or None
    whole_only: bool  # it ran instructions whose tallies are not kept per CTA

    @classmethod
    def of(cls, blk: Block) -> Ran:
        work = blk.clock.work
        return cls(
            ctas=blk.ctas,
            n_warps=blk.n_warps,
            by_cta=blk.by_cta,
            work=None if work is None else np.array(work, copy=True),
            whole_only=any(bool(getattr(blk, name)) for name in _WHOLE_ONLY),
        )


def counts_of_ctas(ran: Ran, executed: int) -> list[dict[str, Any]] | None:
    """Per CTA of the batch ``ran`` (which ran ``executed`` thread-instructions): its
    thread-instructions (``executed``), op_misc warps (``misc``), barriers completed
    (``misc_done``), warps predicated off by instruction (``off``) and generic atomics'
    op_atom wavefronts no row carries (``generic_atoms``); None where they
    cannot be told apart (:data:`_WHOLE_ONLY` tallies, or counts that do not add up)."""
    by_cta, work = ran.by_cta, ran.work
    if by_cta is None or ran.whole_only:
        return None
    if work is None or int(np.sum(work)) != executed:
        return None
    tallies = ("misc", "misc_done", "off", "generic_atoms")
    out: list[dict[str, Any]] = [
        {"executed": int(work[c]), **{name: {} for name in tallies}} for c in range(ran.ctas)
    ]
    for (name, c, index), n in by_cta.items():
        out[c][name][index] = n
    return out
