"""A grid traced one block per class of identical behaviour.

The grid's first block runs watched (:class:`..grid.Watch` with :class:`.forms.Forms`): every
decision that depends on the block index is evaluated over the candidate blocks, and the
blocks that take every one of the first block's decisions (its *class*) make its requests:
they are counted as it. Of the blocks left, the lowest-numbered run next, together in one
batch (:mod:`.together`: as many as the classes found say are left, at most :data:`GROWTH`
times the last round's blocks in no other's class), each watched for its own class taken
among them; a block of the batch in the class of one beside it is one of that class, run.
They go on while a block watched costs less than the rest of its class run plainly (as
:meth:`.spend.Spend.pays` expects: its decisions are evaluated over the grid's blocks), or
the blocks left would be sampled, within :func:`.spend.allowed`. A decision the forms cannot
evaluate ends the rounds, and so do :data:`LONERS` blocks in a row that stand for themselves
alone, or classes of fewer than :data:`AVERAGE` blocks on average past that many classes
(the blocks left cost less run together), or a round past its share of the time left
(:data:`ROUND_SHARE`: the classes found before it stand, and the blocks in no class are not
traced); a round watches no more blocks than the rounds' work may cost against running every
block plainly (:mod:`.spend`: none, and the rounds end, where classes turn out small). The
blocks in no class then run in batches (sampled where they pass the budget, :mod:`.rest`),
as every block did before.

:class:`ClassCounts` keeps what each class's block counted besides its requests (a
:class:`Counts`, the difference of the run's) to count again for the rest of its class; the
recorder counts its requests again (:meth:`...recorder.Recorder.close_class`), those kept and
those folded away as the records reached their bound alike.
"""

from __future__ import annotations

import math
import time
from dataclasses import field, replace
from typing import Any

import numpy as np

from ....plumbing.frozen import frozen
from .. import grid as grids
from ..budget import Budget, Late
from .forms import Forms
from .rest import run_rest
from .shadow import COLUMNS, Shadow
from .spend import Spend, allowed, cut_short, first_round
from .together import Watches, counts_of_ctas, how_many, is_last
from .vectors import Vectors
from .watch import Chooser, Watch

#: rounds in a row whose block stands for itself alone that end them
LONERS = 8
#: blocks run together in a round, at most this many times those of the round before that
#: were in no class of another's (a batch guessed too large runs blocks of one class)
GROWTH = 4
#: a round after the first may take 1/ROUND_SHARE of the time left before --time-limit: past
#: it, it is cut short (:class:`..budget.Late`), its blocks count nothing, and the classes
#: found before it stand; the blocks in no class are then not traced (the report says so)
ROUND_SHARE = 2
#: a round expected to be the last (:func:`.together.is_last`: no block left to run in
#: batches after it) may take this share of the time left instead: a causal attention's 43
#: classes' blocks took 110 s of the 165 s left, cut short at half of it (sampled)
LAST_SHARE = 7 / 8
#: past LONERS rounds, the blocks a round's block stands for on average (itself included)
#: below which the rounds end: running the rest together in batches costs less
AVERAGE = 8


#: the per-instruction tallies of a run (execute._Run's dicts of the same names)
TALLIES = ("unmodelled", "sectors", "atoms", "generic_atoms", "cas_failed", "misc", "misc_done")


@frozen
class Counts:
    """A run's counts besides its requests: thread-instructions, and per instruction index
    the executions not modelled, the DSMEM sectors and remote atomics' op_atom wavefronts,
    the op_atom wavefronts of generic atomics that shared memory did not serve,
    the failed compare-and-swaps and the warp executions of op_misc instructions and the
    CTA barriers they completed."""

    executed: int = 0
    unmodelled: dict[int, int] = field(default_factory=dict)
    sectors: dict[int, int] = field(default_factory=dict)
    atoms: dict[int, int] = field(default_factory=dict)
    generic_atoms: dict[int, int] = field(default_factory=dict)
    cas_failed: dict[int, int] = field(default_factory=dict)
    misc: dict[int, int] = field(default_factory=dict)
    misc_done: dict[int, int] = field(default_factory=dict)

    def minus(self, then: Counts) -> Counts:
        """What was counted since ``then``."""
        return Counts(
            self.executed - then.executed,
            **{name: _minus(getattr(self, name), getattr(then, name)) for name in TALLIES},
        )

    def plus(self, more: Counts, times: int) -> Counts:
        """These counts with ``more`` added ``times`` times."""
        return Counts(
            self.executed + times * more.executed,
            **{name: _plus(getattr(self, name), getattr(more, name), times) for name in TALLIES},
        )


def counts_of(run: Any) -> Counts:
    """The counts of ``run`` (execute._Run) so far."""
    return Counts(run.executed, **{name: dict(getattr(run, name)) for name in TALLIES})


def _minus(now: dict[int, int], then: dict[int, int]) -> dict[int, int]:
    return {k: v - then.get(k, 0) for k, v in now.items() if v - then.get(k, 0)}


def _plus(base: dict[int, int], more: dict[int, int], times: int) -> dict[int, int]:
    out = dict(base)
    for key, n in more.items():
        out[key] = out.get(key, 0) + times * n
    return out


@frozen
class ClassCounts:
    """What one class's block counted besides its requests (those the recorder counts again:
    :meth:`...recorder.Recorder.close_class`), and how many more blocks it stands for."""

    block: int  # its number in launch order
    extra: int  # the blocks of its class besides it
    counts: Counts
    # thread-instructions those blocks ran besides its own's times extra: where a guard on
    # the block index chose values (.guarded), each block runs the instruction for its own
    # threads
    more: int = 0


@frozen
class Classes:
    """The classes found: each one's counts."""

    found: tuple[ClassCounts, ...]

    @property
    def stood_for(self) -> int:
        """Blocks counted without running (each class's besides its own block)."""
        return sum(c.extra for c in self.found)

    def plus(self, counts: Counts) -> Counts:
        """``counts`` with each class's counts added for each block it stands for besides
        its own."""
        for c in self.found:
            counts = counts.plus(c.counts, c.extra)
            counts = replace(counts, executed=counts.executed + c.more)
        return counts


def members(left: Any, alike: Any, rep: int) -> tuple[Any, Any]:
    """(the blocks of the representative's class, the blocks left after it): ``left`` and
    ``alike`` are masks over the grid's blocks (``alike`` None: the block alone)."""
    mask = np.zeros(len(left), dtype=bool) if alike is None else alike & left
    mask[rep] = True
    return np.flatnonzero(mask), left & ~mask


def trace_grid(run: Any, plan: grids.Plan, budget: Budget) -> Any:
    """Trace every block of ``plan`` class by class (every cluster, where the launch has
    thread-block clusters: a cluster's CTAs run together, and clusters alike to a cluster
    are counted as it), those in no class in batches; ``run`` is the launch's
    execute._Run. Returns its Trace."""
    rounds = _Rounds(run, plan, budget)
    while rounds.more():
        if not rounds.play():
            break
    return _traced(rounds, budget)


@frozen(eq=False)
class _Round:
    """The blocks of one round, run together, each watched for its class."""

    reps: tuple[int, ...]  # their numbers (of clusters, where the launch has them)
    watches: tuple[Watch, ...]  # in the same order
    many: Watches | None  # several run together (None: one alone)
    before: Counts  # the run's counts before they ran
    work: tuple[int, int]  # the values evaluated and made before (.vectors.Vectors's counts)
    waited: bool  # one waited on others (they ran meanwhile): each stands for itself alone
    split: list[dict[str, Any]] | None  # each block's counts, where run together and apart
    warps: int  # of a block


class _Rounds:
    """The rounds of a grid traced by class: the classes found so far, the blocks left, and
    how many run together next (the module's rule)."""

    def __init__(self, run: Any, plan: grids.Plan, budget: Budget) -> None:
        launch = run.launch
        self.run, self.plan = run, plan
        self.whole = budget.launch_instructions // grids.WHOLE_SHARE  # the rest unsampled
        self.size, n = launch.cluster_ctas, plan.clusters
        self.n, self.unit = n, "clusters" if self.size > 1 else "blocks"
        self.shared = [k is not None for k in run.kinds]
        self.left = np.ones(n, dtype=bool)  # the blocks (clusters) in no class yet
        self.outside = np.zeros(n, dtype=bool)  # those that ran watched, in no class
        self.found: list[ClassCounts] = []
        self.decisions = self.proven = self.loners = 0
        self.chooses, self.choosing = Chooser(run.program, run.function, run.kinds), set[int]()
        self.differs: grids.Differs | None = None
        self.shadow = Shadow(launch, run.program, run.registers, min(COLUMNS, 64 * n))
        self.vectors = Vectors(n, self.shadow)
        # a block's thread-instructions, at least: its threads each running every instruction once
        self.floor = launch.threads * self.size * len(run.function.instructions)
        self.spend = Spend(n)  # the rounds' work, against running the blocks plainly
        first_round(self.vectors, self.floor, n)  # (.spend's rule)
        # the first block alone: where all are alike, one runs
        self.together, self.split_ok = 1, self.size == 1
        self.watched, self.stop = 0, False  # blocks run watched; a decision not evaluated
        self.late: str | None = None  # a round cut short at its share of the time left: why
        self.share = 1 / ROUND_SHARE  # of the time left, the next round's (after the first)
        self.ended: str = ""  # why the rounds ended before the classes did (the report's)

    def more(self) -> bool:
        """Whether another round runs: blocks in no class and rounds left, fewer than
        :data:`LONERS` loners in a row, and every decision so far evaluated."""
        more = self.left.any() and self.loners < LONERS
        return bool(more) and not self.stop

    def play(self) -> bool:
        """Run the next round and take its blocks' classes; False where the rounds end (cut
        short, or classes so small that the rest costs less run together)."""
        ran = self._run(self._pick())
        if ran is None:
            return False
        proven = self.proven
        times = self._take_classes(ran)
        self.left[list(ran.reps)] = False
        self._close(ran, times)
        vec, executed = self.vectors, self.run.executed - ran.before.executed
        work, made = vec.work - ran.work[0], vec.made - ran.work[1]
        self.spend = self.spend.ran(len(ran.reps), executed, work, made, self.proven - proven)
        return self._size_next(fresh=len(times))

    def _pick(self) -> list[int]:
        """The blocks the next round runs: the lowest-numbered in no class, as many as run
        together next."""
        reps = [int(b) for b in np.flatnonzero(self.left)[: self.together]]
        self.watched += len(reps)
        return reps

    def _watch(self, rep: int) -> Watch:
        """The watch over block (cluster) ``rep``: its decisions, over the blocks in no class."""
        run, ins = self.run, self.run.function.instructions
        forms = Forms(run.launch, ins, run.program.destinations, rep, self.shadow, self.vectors)
        return Watch(ins, forms, self.shared, self.left, self.chooses)

    def _until(self) -> tuple[float, float]:
        """(now, when the next round's time is up): after the first round, a round may take
        1/:data:`ROUND_SHARE` of the time left (:data:`LAST_SHARE` the last); the first, all."""
        if not self.found:
            return 0.0, math.inf
        now = time.monotonic()
        return now, now + (self.run.deadline - now) * self.share

    def _run(self, reps: list[int]) -> _Round | None:
        """Run the blocks ``reps`` together, each watched; None where the round passed its
        time (:attr:`late` says so: its records dropped, it counts nothing)."""
        run, recorder = self.run, self.run.recorder
        watches = tuple(self._watch(rep) for rep in reps)
        before, work = counts_of(run), (self.vectors.work, self.vectors.made)
        recorder.tainted = {}
        requests, mark = recorder.requests, recorder.mark()
        many = Watches(watches, reps) if len(reps) > 1 else None
        recorder.open_class(0 if many is None else -(-run.launch.threads // run.launch.warp_size))
        waits = run.waits  # blocks that wait on others (sync/waiting_blocks.py), or None
        helped = 0 if waits is None else waits.helpers
        now, until = self._until()
        run.last = None
        try:
            run.batch(self.plan.only(reps), watches[0] if many is None else many, until=until)
        except Late:
            self.late = cut_short(recorder, mark, len(reps), until - now, self.unit, self.share)
            return None
        if many is None:
            watches[0].requests(recorder.tainted, recorder.requests - requests)
        else:
            many.requests(recorder.tainted_by, recorder.requests - requests)
        self.decisions += watches[0].decisions if many is None else many.all_decisions
        # a block that waited on others (they ran meanwhile) stands for itself alone
        waited = waits is not None and waits.helpers != helped
        last = run.last
        warps = 0 if last is None else last.n_warps
        split = None
        if many is not None:
            ok = last is not None and last.ctas == len(reps)
            split = counts_of_ctas(last, run.executed - before.executed) if ok else None
            self.split_ok = self.split_ok and split is not None
        return _Round(tuple(reps), watches, many, before, work, waited, split, warps)

    def _take_classes(self, ran: _Round) -> dict[int, int]:
        """Each block of ``ran`` that no block beside it stands for, with its class: per
        block, the blocks its class counts besides it."""
        taken = np.zeros(self.n, dtype=bool)  # blocks of the classes of the round's so far
        times: dict[int, int] = {}
        for k, (rep, watch) in enumerate(zip(ran.reps, ran.watches, strict=True)):
            self.proven += watch.proven
            self.choosing |= watch.chosen
            if not taken[rep]:  # (else in the class of a block run beside it: one of it, run)
                times[rep] = self._take_class(ran, k, taken)
        return times

    def _take_class(self, ran: _Round, k: int, taken: Any) -> int:
        """The class of the round's ``k``-th block, found and kept (``taken``: its blocks
        marked where it has others); returns how many blocks it counts besides its own."""
        rep, watch = ran.reps[k], ran.watches[k]
        # a decision not proven, or counts not told apart: it ran, in no class
        unproven = watch.differs is not None and not watch.alone
        if unproven or (ran.many is not None and ran.split is None) or self.loners >= LONERS:
            self.outside[rep] = True
        alone = watch.differs is not None or ran.waited or self.outside[rep]
        others = np.zeros(self.n, dtype=bool)  # the blocks run beside it
        others[list(ran.reps)] = True
        others[rep] = False
        if not alone:
            taken |= watch.alike  # of the blocks in no class as the round began
        cls, self.left = members(self.left, None if alone else watch.alike & ~others, rep)
        if self.run.waits is not None:
            self.left = self.run.waits.classed(cls, rep, self.left)
        split = ran.split
        counts = counts_of(self.run).minus(ran.before) if split is None else _counts(split[k])
        more = 0 if watch.extra is None else int(watch.extra[cls].sum())
        self.found.append(ClassCounts(rep, len(cls) - 1, counts, more))
        self.loners = self.loners + 1 if len(cls) == 1 else 0
        if len(cls) == 1 and self.differs is None:
            self.differs = watch.differs
        self.stop = self.stop or unproven  # the rest run
        return len(cls) - 1

    def _close(self, ran: _Round, times: dict[int, int]) -> None:
        """The recorder counts what each block of ``ran`` recorded ``times`` more."""
        recorder = self.run.recorder
        if ran.many is None:  # one class for the whole grid: the report weighs its block's records
            whole = len(self.found) == 1 and not self.left.any() and not self.found[0].more
            recorder.close_class(0 if whole else times[ran.reps[0]])
            return
        split = ran.split
        off = {
            (ran.reps[c], i): v for c, one in enumerate(split or []) for i, v in one["off"].items()
        }
        recorder.close_classes(times if split is not None else {}, ran.warps, off)

    def _size_next(self, fresh: int) -> bool:
        """How many blocks the next round runs together (``fresh``: this round's blocks in
        no class of another's); False where the classes are so small that the rest costs less
        run together."""
        most = allowed(max(self.floor, _per_block(self.found)) * self.n, self.found)
        self.vectors.most = self.spend.evaluations(most, self.vectors.work)
        self.vectors.per_ran = 0.0
        classed = self.n - int(self.left.sum())
        if len(self.found) >= LONERS and classed < AVERAGE * len(self.found):
            return False
        # at most GROWTH times the blocks of the last batch that were in no class of another's
        cap = min(self.plan.per_batch, GROWTH * fresh) if self.split_ok else 1
        left = int(self.left.sum())
        together = how_many(left, classed, len(self.found), cap)
        per_block = _per_block(self.found, mean=True)
        self.together = self.spend.fit(together, per_block, most) if left else together
        sampled = left * per_block > self.whole  # the blocks left would be sampled: prove more
        if left and not sampled and not self.spend.pays(per_block, classed / len(self.found)):
            self.together = 0  # a block's class is expected to save less than watching it costs
        if not self.together:  # watching more costs more than running the rest plainly
            self.ended = self.spend.said(self.watched, left, self.unit)
            return False
        last = is_last(left, classed, len(self.found), self.together)
        self.share = LAST_SHARE if last else 1 / ROUND_SHARE
        return True

    def proof(self, counted: int, classes: int, untraced: int = 0) -> grids.Proof:
        """What the rounds checked: ``counted`` blocks in ``classes`` classes."""
        return grids.Proof(
            counted,
            self.decisions,
            self.unit,
            self.proven,
            classes,
            self.n - counted,
            self.n,
            len(self.choosing),
            untraced,
            self.ended,
        )


def _traced(rounds: _Rounds, budget: Budget) -> Any:
    """The launch's Trace, by the classes the rounds found; the blocks in no class run
    first, in batches."""
    run, plan, found = rounds.run, rounds.plan, rounds.found
    classes = Classes(tuple(found))
    stood_for = classes.stood_for * rounds.size  # blocks
    helped = run.waits is not None and run.waits.helpers  # blocks ran for one that waited
    if not rounds.left.any() and not rounds.outside.any() and not helped:  # all in a class
        every = rounds.proof(rounds.n, len(found))
        if len(found) == 1 and not found[0].more:
            return run.trace(grids.Coverage("alike", plan.blocks, run.blocks, proof=every))
        coverage = grids.Coverage(
            "alike", plan.blocks, run.blocks, proof=every, stood_for=stood_for
        )
        return run.trace(coverage, classes)
    chosen, why, untraced = _run_left(rounds, budget)
    useful = [c for c in found if c.extra]
    mode = "whole" if chosen is None else "sample"
    proof: grids.Proof | None = None
    differs = rounds.differs
    if useful:
        proof = rounds.proof(sum(c.extra + 1 for c in useful), len(useful), untraced)
        mode = "alike" if chosen is None else mode
        if differs is not None:
            differs = replace(differs, unit=rounds.unit)
    coverage = grids.Coverage(
        mode,
        plan.blocks,
        run.blocks,
        proof=proof,
        differs=differs,
        why_sampled=why,
        stood_for=stood_for,
    )
    return run.trace(coverage, classes if useful else None)


def _run_left(rounds: _Rounds, budget: Budget) -> tuple[tuple[int, ...] | None, str | None, int]:
    """Run the blocks in no class (:func:`.rest.run_rest`), or none where a round was cut
    short (no time for them): (the positions run, None for all; why sampled; how many
    were not traced)."""
    rest = [int(b) for b in np.flatnonzero(rounds.left)]
    if not rest:
        return None, None, 0
    unit = rounds.unit
    if rounds.late is not None:
        return (), f"{rounds.late}: {len(rest):,} {unit} in no class not traced", len(rest)
    chosen, why = run_rest(rounds.run, rounds.plan, rest, budget, f"{unit} in no class")
    return chosen, why, 0


def _counts(apart: dict[str, Any]) -> Counts:
    """A block's counts, kept apart from those run beside it (:func:`.together.counts_of_ctas`)."""
    kept = ("misc", "misc_done", "generic_atoms")
    return Counts(apart["executed"], **{name: apart[name] for name in kept})


def _per_block(found: list[ClassCounts], mean: bool = False) -> int:
    """Thread-instructions of a block, about: the most a class's block ran (``mean``: on
    average)."""
    if mean and found:
        return sum(c.counts.executed for c in found) // len(found)
    return max((c.counts.executed for c in found), default=1)
