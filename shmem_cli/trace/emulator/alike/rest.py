"""The blocks (clusters) no class stands for, run in batches: all of them, or an even sample
where what a few took, times the blocks, would pass the budget or the time left before
--time-limit (:func:`run_rest`). A grid traced by class runs its blocks in no class so
(:mod:`.classes`), and so does a grid that cannot be (:mod:`..execute`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import grid as grids
from ..arena.pages import PAGE
from ..budget import Budget


def run_rest(
    run: Any, plan: grids.Plan, rest: Sequence[int], budget: Budget, what: str
) -> tuple[tuple[int, ...] | None, str | None]:
    """Run the blocks (clusters) ``rest``: first a few spread over them (:func:`..grid.probe`),
    then the others, or an even sample of them where what the few took on average, times
    the blocks, would pass the budget. Returns :func:`..grid.sampled`'s answer. The blocks
    run before (the first, a class's) are none of the rest and do not count: a kernel that
    puts its heaviest work first (llm.c's ``wte_backward_kernel`` sorts its buckets largest
    first, its first block 57 times the average) would be judged by its heaviest block."""
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
    per_block = -(-(run.executed - executed) // runs)
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
    ran, late = run_in_time(run, plan, rest, todo, seconds[0])
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
    run: Any, plan: grids.Plan, rest: Sequence[int], todo: Sequence[int], pace: float = 0.0
) -> tuple[list[int], str | None]:
    """Run the blocks (clusters) ``rest[k]`` for ``k`` in ``todo``, batch by batch. Where, at
    the pace of the batches run so far, those left would pass the time left before
    --time-limit (the first few's pace misjudged it: a busy machine), an even sample of
    them that takes about half of it runs instead, so that the launch ends sampled, not
    stopped at the limit. A batch holds no more blocks than take half the time left at the
    pace known before it (``pace``: seconds a block of those run first took; then the
    batches'): one batch of a persistent GEMM's 131 heavy CTAs, all of them, outran the
    limit before any pace could be judged. Returns the positions run and why it sampled
    (None: all ran)."""
    started, done = time.monotonic(), 0
    left_s = run.deadline - started
    while done < len(todo):
        fit = grids.fit_in_half_the_time(left_s, pace) if pace > 0 else plan.per_batch
        part = todo[done : done + max(1, min(plan.per_batch, fit))]
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
