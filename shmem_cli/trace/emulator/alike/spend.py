"""What the rounds of watched blocks may spend (:mod:`.classes`): their work, watching and
evaluating together, against running the blocks plainly, and their share of the time left
before --time-limit.

A watched block costs more than a block run in a plain batch: per thread-instruction about
:data:`WATCH_COST` times, and a round as much again as :data:`WATCH_FIXED` blocks more (the
watch's per-step work, paid once for the round's blocks together). Besides, the rounds
evaluate the block vectors of :mod:`.vectors` (one value per group of threads and block):
each value about :data:`EVAL_COST` thread-instructions, one made at once for a whole
instruction (:attr:`.vectors.Vectors.work` counts it :data:`.vectors.MADE_WEIGHT` times)
as well as one evaluated window by window. :class:`Spend` keeps what the rounds cost so
far, both in thread-instructions of plain batches, and one budget holds them
(:func:`allowed`): :data:`SHARE` times what running every block of the grid plainly costs,
plus what the classes found so far save (their blocks counted without running), plus
:data:`FLOOR`. The next round watches only as many blocks as fit what is left, each at the
watch's cost, the values a block is expected to make whole (:meth:`Spend.fit`: a quarter of
the first block's, :data:`REUSED`, until a later round measures its own) and its decisions
over the grid's blocks, as many as the last round's block's (:data:`DECIDE_COST` each), and
its evaluations stop where they would pass it (:meth:`Spend.evaluations`: a vector is then
unknown, and the decision reading it is not proven). The first round, before any class is
known, may evaluate :data:`FIRST` of running every block plainly as its block's
thread-instructions so far say (:func:`first_round`). Where the classes turn out small, or a
watched block costs more than the blocks its class saves (:meth:`Spend.pays`: the blocks
besides it of a class as large as those so far on average), the blocks left run in plain
batches, so a grid costs at most about ``1 + SHARE`` times running every block plainly, and
its first block's round (at most ``FIRST`` of it), and a fraction of a second. The counts
are thread-instructions and values, not seconds: the same launch takes the same decision
on any machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....plumbing.frozen import frozen
from ..trace_error import TraceError

#: a block watched costs about this many blocks run in a plain batch, per thread-instruction
#: (a causal attention's rounds of 11, 16 and 43 blocks, 2026-12-06: 4.6, 5.5 and 4.0 times;
#: at 32 x 16, of 11 and 16 since its steps run once per distinct block: 4.0 and 4.3).
#: Re-measured since the watch compares spread vectors at their distinct blocks (CPU of each
#: round, bench/rounds.py's hooks, against the model's thread-instructions at 9.9 ns each, a
#: plain batch's of the same launch; load 4): bl_tiles k = 7 x 8 tiles, the budget open,
#: rounds of 1, 4 and 2 blocks 0.80, 1.30 and 0.73 times the model, values evaluated
#: included (before: 0.95, 1.84, 0.92); the causal attention's rounds of 1 and 4 blocks 28
#: and 9 times a plain batch per thread-instruction against the model's 36 and 12: kept
WATCH_COST = 4
#: a round costs as much again as this many blocks more (its rounds of 4 blocks: 13 times,
#: of one block: 57 times; since the distinct blocks 9 and 33 times, the one block's own
#: cost run plainly 4.3 times: bench/watch.py's small rounds)
WATCH_FIXED = 8
#: an evaluated value (a step's, for one group of threads in one block) costs about this many
#: thread-instructions of plain batches (2026-12-06, CPU at load 3 on 2 cores: bl_tiles of
#: tests/data/trace/ballots, k = 7, 8 tiles over 4,096 blocks, 13.7 ns a value more as the
#: values allowed grew from 33 to 205 million, 22.9 ns on average up to 411 million, against
#: 7.3 ns a thread-instruction of its blocks run plainly: 1.9 to 3.1 times; differ.cu over
#: 16,384 blocks, 15.8 ns against some 10 ns: 1.6 times)
EVAL_COST = 3
#: the rounds, watching and evaluating, may cost at most this share of running every block
#: plainly, besides what the classes found save...
SHARE = 1 / 4
#: ... and this many thread-instructions more (half a second or so: a small grid's classes
#: are found whatever they cost; cl_persist's 16 blocks, every vector kept as a step, take
#: 290,145 values)
FLOOR = 1 << 26
#: an evaluated decision (a guard, branch or address on the block index that the watch
#: evaluated for the grid's blocks: its agreement over them, an arc's ends searched for each)
#: costs about this many thread-instructions of plain batches per block of the grid
#: (2026-12-07, CPU of each round at load 2.5 on 2 cores, against the plain batches of the
#: same run: tests/data/trace/causalbwd at T = 1,024 over 256 x 12 blocks, a round of 171
#: blocks 11.0 s for 39,000 decisions over 3,072 blocks, some 6 each; llm.c's attention
#: backward at T = 1,024 over 256 x 48, rounds of 64 and 171 blocks 20.8 and 56.5 s, some 14
#: each): a watched block's decisions grow with its loop and with the grid, what its class
#: saves only with the loop
DECIDE_COST = 8
#: the first round (the first block, before any class is known) may evaluate this share of
#: running every block plainly, as its block's thread-instructions so far say (bl_tiles's
#: first block, k = 3 or 7 over 8 tiles, makes some 0.35 and 0.4 times it: the one's class
#: saves a third of the grid, the other's a seventh)
FIRST = 1 / 2
#: a round after the first is expected to make this share of the values the first made per
#: block (most are the same vectors, made once: bl_tiles k = 3's second and third blocks
#: made 9 % of the first's), until a round after the first measures its own
REUSED = 1 / 4


def allowed(plain: float, found: Sequence[Any]) -> float:
    """What the rounds may cost in all, in thread-instructions of plain batches: ``plain``
    the thread-instructions of every block run plainly, ``found`` the classes so far
    (:class:`.classes.ClassCounts`: what each class's blocks besides its own did not run)."""
    saved: int = sum(c.extra * c.counts.executed + c.more for c in found)
    return SHARE * plain + saved + FLOOR


def first_round(vec: Any, floor: int, n: int) -> None:
    """Hold the first round's evaluations (``vec``: :class:`.vectors.Vectors`) to
    :data:`FIRST` of running every block of ``n`` plainly, as the first block's
    thread-instructions so far say (at least ``floor``), and :data:`FLOOR` more."""
    per = FIRST * n / EVAL_COST  # values a thread-instruction of the first block stands for
    vec.most = int(FLOOR / EVAL_COST + per * floor)
    vec.per_ran, vec.ran = per, -floor


@frozen(eq=False)
class Spend:
    """What the rounds of a grid of ``n`` blocks (clusters) cost so far, in thread-instructions
    of plain batches (:attr:`spent`: watching and evaluating), and the values a block of
    the next round is expected to make whole (:attr:`made`)."""

    n: int
    spent: float = 0.0
    made: float = 0.0
    rounds: int = 0
    decided: float = 0.0  # decisions evaluated a block of the last round, times the grid's blocks

    def ran(self, blocks: int, executed: int, work: int, made: int, decided: int = 0) -> Spend:
        """A round of ``blocks`` watched blocks ran ``executed`` thread-instructions and
        evaluated ``work`` values, ``made`` of them made whole (:attr:`.vectors.Vectors.work`
        and ``made``'s counts), and ``decided`` decisions over the grid's blocks."""
        cost = WATCH_COST * executed * (blocks + WATCH_FIXED) / max(1, blocks)
        cost += DECIDE_COST * decided * self.n
        each = made / max(1, blocks) * (REUSED if not self.rounds else 1)
        per = decided * self.n / max(1, blocks)
        return Spend(self.n, self.spent + cost + EVAL_COST * work, each, self.rounds + 1, per)

    def watched(self, per_block: float) -> float:
        """What watching one more block of about ``per_block`` thread-instructions is
        expected to cost: the watch, the values it makes whole, and its decisions as many as
        the last round's block's, over the grid's blocks."""
        return WATCH_COST * per_block + EVAL_COST * self.made + DECIDE_COST * self.decided

    def pays(self, per_block: float, size: float) -> bool:
        """Whether watching a block pays: the ``size - 1`` blocks of its class (of about
        ``per_block`` thread-instructions each, ``size`` as large as the classes so far on
        average) would cost more run plainly than watching it (:meth:`watched`), or the
        rounds cost no more than :data:`FLOOR` with it (a small grid's classes are found)."""
        cost = self.watched(per_block)
        return (size - 1) * per_block > cost or self.spent + cost <= FLOOR

    def evaluations(self, most: float, work: int) -> int:
        """The count :attr:`.vectors.Vectors.work` may reach in the next round (``work`` so
        far): what is left of ``most`` (:func:`allowed`) in values."""
        return work + int(max(0.0, most - self.spent) / EVAL_COST)

    def fit(self, want: int, per_block: float, most: float) -> int:
        """How many of ``want`` blocks the next round may watch, each of about ``per_block``
        thread-instructions and the values :attr:`made`, within what is left of ``most``
        (:func:`allowed`; 0: none, the blocks left run in plain batches). Its evaluations are
        held to what is left by :meth:`evaluations` (those of values evaluated window by
        window are not expected again: the vectors are kept whole once evaluated)."""
        each = WATCH_COST * per_block
        room = most - self.spent - WATCH_FIXED * each
        fits = int(room // max(1.0, self.watched(per_block)))
        return max(0, min(want, fits))

    def said(self, watched: int, left: int, unit: str) -> str:
        """The decision in words, for the report."""
        one = unit if watched != 1 else unit[:-1]
        return (
            f"The rounds ended after {watched:,} {one} run watched, where watching more to find "
            f"their classes would cost more than running the {left:,} {unit} left in plain "
            f"batches (a block watched costs about {WATCH_COST} run plainly, the values "
            "evaluated for it and its decisions over every block, and the rounds at most "
            f"{_share(SHARE)} of what running every block plainly costs, besides what the "
            "classes found save)."
        )


def cut_short(
    recorder: Any, mark: Any, blocks: int, seconds: float, unit: str, share: float
) -> str:
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
        f"{seconds:,.1f} s ({_share(share)} of the time left before --time-limit) and was "
        "cut short, so the classes found before it stand"
    )


def _share(share: float) -> str:
    """A share of the time left, in words: 1/2, 7/8."""
    return f"1/{round(1 / share)}" if share <= 1 / 2 else f"{round(share * 8)}/8"
