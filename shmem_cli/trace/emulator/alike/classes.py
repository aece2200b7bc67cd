"""A grid traced one block per class of identical behaviour.

The grid's first block runs watched (:class:`..grid.Watch` with :class:`.forms.Forms`): every
decision that depends on the block index is evaluated over the candidate blocks, and the
blocks that take every one of the first block's decisions (its *class*) make its requests:
they are counted as it. Of the blocks left, the lowest-numbered run next, together in one
batch (:mod:`.together`: as many as the classes found say are left, at most :data:`GROWTH`
times the last round's blocks in no other's class), each watched for its own class taken
among them; a block of the batch in the class of one beside it is one of that class, run.
At most :data:`ROUNDS` blocks run watched. A decision the forms cannot evaluate ends the
rounds, and so do :data:`LONERS` blocks in a row that stand for themselves alone, or classes
of fewer than :data:`AVERAGE` blocks on average past that many classes (the blocks left cost
less run together), or a round past its share of the time left (:data:`ROUND_SHARE`: the
classes found before it stand, and the blocks in no class are not traced). The blocks in no
class then run in batches (sampled where they pass the budget), as every block did before.

:class:`ClassCounts` keeps what each class's block counted besides its requests (a
:class:`Counts`, the difference of the run's) to count again for the rest of its class; the
recorder counts its requests again (:meth:`...recorder.Recorder.close_class`), those kept and
those folded away as the records reached their bound alike.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import field, replace
from typing import Any

import numpy as np

from ....plumbing.frozen import frozen
from .. import grid as grids
from ..arena.pages import PAGE
from ..budget import Budget, Late
from ..trace_error import TraceError
from .forms import Forms
from .shadow import COLUMNS, Shadow
from .together import Watches, counts_of_ctas, how_many
from .vectors import Vectors
from .watch import Watch, chooser

#: blocks run watched at most (each a class's, or one of a class run beside its block)
ROUNDS = 64
#: rounds in a row whose block stands for itself alone that end them
LONERS = 8
#: blocks run together in a round, at most this many times those of the round before that
#: were in no class of another's (a batch guessed too large runs blocks of one class)
GROWTH = 4
#: a round after the first may take 1/ROUND_SHARE of the time left before --time-limit: past
#: it, it is cut short (:class:`..budget.Late`), its blocks count nothing, and the classes
#: found before it stand; the blocks in no class are then not traced (the report says so)
ROUND_SHARE = 2
#: past LONERS rounds, the blocks a round's block stands for on average (itself included)
#: below which the rounds end: running the rest together in batches costs less
AVERAGE = 8


#: the per-instruction tallies of a run (execute._Run's dicts of the same names)
TALLIES = ("unmodelled", "sectors", "atoms", "cas_failed", "misc", "misc_done")


@frozen
class Counts:
    """A run's counts besides its requests: thread-instructions, and per instruction index
    the executions not modelled, the DSMEM sectors and remote atomics' op_atom wavefronts,
    the failed compare-and-swaps and the warp executions of op_misc instructions and the
    CTA barriers they completed."""

    executed: int = 0
    unmodelled: dict[int, int] = field(default_factory=dict)
    sectors: dict[int, int] = field(default_factory=dict)
    atoms: dict[int, int] = field(default_factory=dict)
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
    launch, recorder = run.launch, run.recorder
    instructions = run.function.instructions
    shared = [k is not None for k in run.kinds]
    size, n = launch.cluster_ctas, plan.clusters
    unit = "clusters" if size > 1 else "blocks"
    left = np.ones(n, dtype=bool)  # the blocks (clusters) in no class yet
    outside = np.zeros(n, dtype=bool)  # those that ran watched, in no class
    found: list[ClassCounts] = []
    decisions = proven = loners = 0
    chooses, choosing = chooser(run.program, run.function, run.kinds), set[int]()
    differs: grids.Differs | None = None
    shadow = Shadow(launch, run.program, run.registers, min(COLUMNS, 64 * n))
    vectors = Vectors(n, shadow)
    # evaluating the grid's vectors may cost at most half what running every block would:
    # a cluster's threads each running every instruction once, until a class's block says
    floor = launch.threads * size * len(instructions) * n // 2
    vectors.most = floor
    together, split_ok = 1, size == 1  # the first block alone: where all are alike, one runs
    watched, stop = 0, False  # blocks run watched; a decision the forms could not evaluate
    late: str | None = None  # a round cut short at its share of the time left: why
    while watched < ROUNDS and left.any() and loners < LONERS and not stop:
        reps = [int(b) for b in np.flatnonzero(left)[: min(together, ROUNDS - watched)]]
        watched += len(reps)
        watches = [
            Watch(
                instructions,
                Forms(launch, instructions, run.program.destinations, rep, shadow, vectors),
                shared,
                left,
                chooses,
            )
            for rep in reps
        ]
        before = counts_of(run)
        recorder.tainted = {}
        requests, mark = recorder.requests, recorder.mark()
        many = Watches(watches, reps) if len(reps) > 1 else None
        recorder.open_class(0 if many is None else -(-launch.threads // launch.warp_size))
        waits = run.waits  # blocks that wait on others (sync/waiting_blocks.py), or None
        helped = 0 if waits is None else waits.helpers
        now, until = 0.0, math.inf
        if found:  # after the first, a round may take a share of the time left
            now = time.monotonic()
            until = now + (run.deadline - now) / ROUND_SHARE
        run.last = None
        try:
            run.batch(plan.only(reps), watches[0] if many is None else many, until=until)
        except Late:
            late = _cut_short(recorder, mark, len(reps), until - now, unit)
            break
        if many is None:
            watches[0].requests(recorder.tainted, recorder.requests - requests)
        else:
            many.requests(recorder.tainted_by, recorder.requests - requests)
        decisions += watches[0].decisions if many is None else many.all_decisions
        # a block that waited on others (they ran meanwhile) stands for itself alone
        waited = waits is not None and waits.helpers != helped
        split: list[dict[str, Any]] | None = None  # each block's counts, where run together
        warps = 0 if run.last is None else run.last.n_warps  # of a block
        if many is not None:
            last = run.last
            ok = last is not None and last.ctas == len(reps)
            split = counts_of_ctas(last, run.executed - before.executed) if ok else None
            split_ok = split_ok and split is not None
        ran = np.zeros(n, dtype=bool)
        ran[reps] = True
        taken = np.zeros(n, dtype=bool)  # blocks of the classes of this batch's blocks so far
        times: dict[int, int] = {}
        fresh = 0  # blocks of the batch in no class of another's
        for k, (rep, watch) in enumerate(zip(reps, watches, strict=True)):
            proven += watch.proven
            choosing |= watch.chosen
            if taken[rep]:  # in the class of a block run beside it: one of it, run
                continue
            fresh += 1
            # a decision not proven, or counts not told apart: it ran, in no class
            unproven = watch.differs is not None and not watch.alone
            if unproven or (many is not None and split is None) or loners >= LONERS:
                outside[rep] = True
            alone = watch.differs is not None or waited or outside[rep]
            others = ran.copy()
            others[rep] = False
            if not alone:
                taken |= watch.alike  # of the blocks in no class as the batch began
            cls, left = members(left, None if alone else watch.alike & ~others, rep)
            if waits is not None:
                left = waits.classed(cls, rep, left)
            times[rep] = len(cls) - 1
            counts = counts_of(run).minus(before) if split is None else _counts(split[k])
            found.append(ClassCounts(rep, len(cls) - 1, counts))
            loners = loners + 1 if len(cls) == 1 else 0
            if len(cls) == 1 and differs is None:
                differs = watch.differs
            stop = stop or unproven  # the rest run
        left &= ~ran
        if many is None:  # one class for the whole grid: the report weighs its block's records
            whole = len(found) == 1 and not left.any()
            recorder.close_class(0 if whole else times[reps[0]])
        else:
            off = {
                (reps[c], i): v for c, one in enumerate(split or []) for i, v in one["off"].items()
            }
            recorder.close_classes(times if split is not None else {}, warps, off)
        vectors.most = max(floor, _per_block(found) * n // 2)
        classed = n - int(left.sum())
        if len(found) >= LONERS and classed < AVERAGE * len(found):
            break  # small classes: the rest run together
        # at most GROWTH times the blocks of the last batch that were in no class of another's
        most = min(plan.per_batch, ROUNDS - watched, GROWTH * fresh) if split_ok else 1
        together = how_many(int(left.sum()), classed, len(found), most)
    classes = Classes(tuple(found))
    stood_for = classes.stood_for * size  # blocks
    helped = run.waits is not None and run.waits.helpers  # blocks ran for one that waited
    if not left.any() and not outside.any() and not helped:  # every block (cluster) in a class
        every = grids.Proof(n, decisions, unit, proven, len(found), 0, n, len(choosing))
        if len(found) == 1:
            return run.trace(grids.Coverage("alike", plan.blocks, run.blocks, proof=every))
        coverage = grids.Coverage(
            "alike", plan.blocks, run.blocks, proof=every, stood_for=stood_for
        )
        return run.trace(coverage, classes)
    rest = [int(b) for b in np.flatnonzero(left)]
    chosen: tuple[int, ...] | None = None
    why: str | None = None
    untraced = len(rest) if late is not None else 0
    if rest and late is not None:  # no time for them
        chosen, why = (), f"{late}: {len(rest):,} {unit} in no class not traced"
    elif rest:
        chosen, why = run_rest(run, plan, rest, _per_block(found), budget, f"{unit} in no class")
    useful = [c for c in found if c.extra]
    mode = "whole" if chosen is None else "sample"
    proof: grids.Proof | None = None
    if useful:
        counted = sum(c.extra + 1 for c in useful)
        apart = n - counted
        proof = grids.Proof(
            counted, decisions, unit, proven, len(useful), apart, n, len(choosing), untraced
        )
        mode = "alike" if chosen is None else mode
        if differs is not None:
            differs = replace(differs, unit=unit)
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


def run_rest(
    run: Any, plan: grids.Plan, rest: Sequence[int], most: int, budget: Budget, what: str
) -> tuple[tuple[int, ...] | None, str | None]:
    """Run the blocks (clusters) ``rest``: first a few spread over them (:func:`..grid.probe`),
    then the others, or an even sample of them where what the few took, times the blocks,
    would pass the budget (``most``: the thread-instructions of the heaviest block run so
    far). Returns :func:`..grid.sampled`'s answer."""
    recorder, memory = run.recorder, run.launch.memory
    first = grids.probe(len(rest))
    executed, requests, wrote = run.executed, recorder.requests, memory.written_bytes
    memory.span = [1 << 62, 0]  # the pages the blocks spread over the grid make real
    started = time.monotonic()
    for batch in plan.rest([rest[k] for k in first]):
        run.batch(batch, None)
    lo, hi = memory.span
    memory.span = None
    now = time.monotonic()  # the time a block takes, against the time left (--time-limit)
    seconds = ((now - started) / max(1, len(first)), run.deadline - now)
    runs = max(1, len(first))
    per_block = max(most, -(-(run.executed - executed) // runs))
    # records that reach their bound are folded: then the requests bound nothing
    per_requests = 0 if recorder.can_fold else -(-(recorder.requests - requests) // runs)
    # the global memory a block makes real (its output), against the room the arena has left;
    # blocks that share pages (a GEMM's column tiles, rows a page apart) make no more real
    # than the pages from the first block's to the last's
    reach = max(0, hi - lo) * PAGE
    written = (-(-(memory.written_bytes - wrote) // runs), memory.max_written - wrote, reach)
    chosen, why = grids.sampled(
        len(rest), per_block, per_requests, budget, what, first, written, seconds
    )
    done = set(first)
    todo = [k for k in (range(len(rest)) if chosen is None else chosen) if k not in done]
    ran, late = run_in_time(run, plan, rest, todo)
    waits = run.waits
    if waits is not None and waits.done[np.asarray(rest, dtype=np.int64)].all():
        return None, None  # blocks that waited had the others run: every one ran
    if late is None:
        return chosen, why
    kept = tuple(sorted(done | set(ran)))
    said = (
        f"{late}: {len(kept):,} of its {len(rest):,} {what} traced, those run before and an "
        "even sample of the rest"
    )
    return kept, said if why is None else f"{why}; then {said}"


def run_in_time(
    run: Any, plan: grids.Plan, rest: Sequence[int], todo: Sequence[int]
) -> tuple[list[int], str | None]:
    """Run the blocks (clusters) ``rest[k]`` for ``k`` in ``todo``, batch by batch. Where, at
    the pace of the batches run so far, those left would pass the time left before
    --time-limit (the first few's pace misjudged it: a busy machine), an even sample of
    them that takes about half of it runs instead, so that the launch ends sampled, not
    stopped at the limit. Returns the positions run and why it sampled (None: all ran)."""
    started, done = time.monotonic(), 0
    while done < len(todo):
        part = todo[done : done + plan.per_batch]
        for batch in plan.rest([rest[k] for k in part]):
            run.batch(batch, None)
        done += len(part)
        now = time.monotonic()
        pace, left_s, left = (now - started) / done, run.deadline - now, len(todo) - done
        if left and pace * left > left_s:
            fit = grids.fit_in_half_the_time(left_s, pace)
            picked = [todo[done + j] for j in grids.sample(left, fit)] if fit else []
            for batch in plan.rest([rest[k] for k in picked]):
                run.batch(batch, None)
            late = (
                f"the {left:,} left after {done:,} more ran would take about "
                f"{pace * left:,.0f} s at the pace of those (past the {max(0.0, left_s):,.0f} s "
                "left before --time-limit)"
            )
            return [*todo[:done], *picked], late
    return list(todo), None


def _cut_short(recorder: Any, mark: Any, blocks: int, seconds: float, unit: str) -> str:
    """A round of ``blocks`` run together passed its ``seconds``: what it recorded is
    dropped (:meth:`...recorder.Recorder.undo`, else the launch's time-limit error), and why,
    for the report."""
    if not recorder.undo(mark):
        raise TraceError(
            f"the trace ran past its time limit while {blocks:,} {unit} ran watched, and "
            "their records were folded meanwhile; raise --time-limit"
        )
    return (
        f"a round of {blocks:,} {unit} run together to find their classes passed its "
        f"{seconds:,.1f} s (1/{ROUND_SHARE} of the time left before --time-limit) and was "
        "cut short, so the classes found before it stand"
    )


def _counts(apart: dict[str, Any]) -> Counts:
    """A block's counts, kept apart from those run beside it (:func:`.together.counts_of_ctas`)."""
    return Counts(apart["executed"], misc=apart["misc"], misc_done=apart["misc_done"])


def _per_block(found: list[ClassCounts]) -> int:
    """Thread-instructions of a block, about: the most a class's block ran."""
    return max((c.counts.executed for c in found), default=1)
