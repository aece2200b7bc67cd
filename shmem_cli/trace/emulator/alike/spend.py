"""What the rounds of watched blocks may spend (:mod:`.classes`): their work against running
the blocks plainly, and their share of the time left before --time-limit.

A watched block costs more than a block run in a plain batch: per thread-instruction about
:data:`WATCH_COST` times, and a round as much again as :data:`WATCH_FIXED` blocks more (the
watch's per-step work, paid once for the round's blocks together). :class:`Spend` keeps what
the rounds cost so far, in thread-instructions of plain batches, and lets the next round
watch only as many blocks as fit :data:`WATCH_SHARE` times what running every block of the
grid plainly costs (at least :data:`WATCH_FLOOR`): where the classes turn out small, the
blocks left run in plain batches, so a grid costs at most about ``1 + WATCH_SHARE`` times
running every block plainly. The counts are thread-instructions, not seconds: the same launch
takes the same decision on any machine.

The values the steps kept by :mod:`.vectors` are evaluated for (deferred, window by window)
are charged apart (:func:`evaluations`): each about :data:`EVAL_COST` thread-instructions, in
all at most :data:`EVAL_SHARE` times running every block plainly, plus what the classes found
so far save (their blocks counted without running), plus :data:`EVAL_FLOOR` values. Where the
evaluations would pass it a vector is unknown and the blocks left run plainly, so evaluating
costs at most ``EVAL_SHARE`` times running every block plainly more than the classes it found
saved, and a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....plumbing.frozen import frozen
from ..trace_error import TraceError

#: a block watched costs about this many blocks run in a plain batch, per thread-instruction
#: (a causal attention's rounds of 11, 16 and 43 blocks, 2026-12-06: 4.6, 5.5 and 4.0 times;
#: at 32 x 16, of 11 and 16 since its steps run once per distinct block: 4.0 and 4.3)
WATCH_COST = 4
#: a round costs as much again as this many blocks more (its rounds of 4 blocks: 13 times,
#: of one block: 57 times; since the distinct blocks 9 and 33 times, the one block's own
#: cost run plainly 4.3 times: bench/watch.py's small rounds)
WATCH_FIXED = 8
#: the rounds may cost at most this many times running every block of the grid plainly...
WATCH_SHARE = 1
#: ... or this many thread-instructions of plain batches, where that is more (a second or
#: two: a small grid's classes are found whatever they cost)
WATCH_FLOOR = 1 << 26


#: an evaluated value (a step's, for one group of threads in one block) costs about this many
#: thread-instructions of plain batches (2026-12-06, CPU at load 3 on 2 cores: bl_tiles of
#: tests/data/trace/ballots, k = 7, 8 tiles over 4,096 blocks, 13.7 ns a value more as the
#: values allowed grew from 33 to 205 million, 22.9 ns on average up to 411 million, against
#: 7.3 ns a thread-instruction of its blocks run plainly: 1.9 to 3.1 times; differ.cu over
#: 16,384 blocks, 15.8 ns against some 10 ns: 1.6 times)
EVAL_COST = 3
#: the evaluations may cost at most this share of running every block plainly...
EVAL_SHARE = 1 / 4
#: ... besides what the classes found save, and this many values more (0.2 s or so: a small
#: grid's vectors are evaluated whatever they cost; cl_persist's 16 blocks, every vector kept
#: as a step, take 290,145)
EVAL_FLOOR = 1 << 23


def evaluations(plain: int, found: Sequence[Any]) -> int:
    """How many values the steps kept may be evaluated for in the whole trace: ``plain`` the
    thread-instructions of every block run plainly, ``found`` the classes so far
    (:class:`.classes.ClassCounts`: what each class's blocks besides its own did not run)."""
    saved = sum(c.extra * c.counts.executed + c.more for c in found)
    return EVAL_FLOOR + int((EVAL_SHARE * plain + saved) / EVAL_COST)


@frozen(eq=False)
class Spend:
    """What the rounds of a grid of ``n`` blocks (clusters) cost so far, in thread-instructions
    of plain batches (:attr:`spent`)."""

    n: int
    spent: float = 0.0

    def ran(self, blocks: int, executed: int) -> Spend:
        """A round of ``blocks`` watched blocks ran ``executed`` thread-instructions."""
        cost = WATCH_COST * executed * (blocks + WATCH_FIXED) / max(1, blocks)
        return Spend(self.n, self.spent + cost)

    def fit(self, want: int, per_block: float) -> int:
        """How many of ``want`` blocks the next round may watch, each of about ``per_block``
        thread-instructions (0: none; the blocks left run in plain batches)."""
        room = max(WATCH_SHARE * self.n * per_block, WATCH_FLOOR) - self.spent
        most = int(room // max(1.0, WATCH_COST * per_block)) - WATCH_FIXED
        return max(0, min(want, most))

    def said(self, watched: int, left: int, unit: str) -> str:
        """The decision in words, for the report."""
        one = unit if watched != 1 else unit[:-1]
        return (
            f"The rounds ended after {watched:,} {one} run watched, where watching more to find "
            f"their classes would cost more than running the {left:,} {unit} left in plain "
            f"batches (a block watched costs about {WATCH_COST} run plainly, and the rounds "
            f"at most {WATCH_SHARE} time(s) what running every block plainly costs)."
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
