"""What the values evaluated window by window may cost (alike/spend.py's
:func:`evaluations`): a quarter of running every block plainly, besides what the classes
found save, plus a floor that pays for a small grid whatever it costs."""

from __future__ import annotations

from typing import Any

import pytest

from shmem_cli.trace.emulator.alike import spend, vectors
from shmem_cli.trace.emulator.alike.classes import ClassCounts, Counts

from .conftest import needs_nvdisasm
from .test_trace_ballots import BALLOTS
from .test_trace_classes import _same
from .test_trace_grid import classes_of


def test_the_classes_found_widen_what_the_evaluations_may_cost() -> None:
    # 12,000 thread-instructions for every block plainly: a quarter is 3,000, 1,000 values
    # at 3 each; a class of 4 blocks of 1,000 (6 more in the blocks a guard chose) saved
    # 3,006, 1,002 values more
    assert (spend.EVAL_SHARE, spend.EVAL_COST) == (1 / 4, 3)
    assert spend.evaluations(12_000, ()) == spend.EVAL_FLOOR + 1_000
    found = [ClassCounts(0, 3, Counts(1_000), 6), ClassCounts(5, 0, Counts(900))]
    assert spend.evaluations(12_000, found) == spend.EVAL_FLOOR + 2_002


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(("floor", "classes"), [(0, None), (spend.EVAL_FLOOR, 7)])
def test_a_small_grid_is_classed_on_the_floor_and_past_the_share_runs_plainly(
    monkeypatch: pytest.MonkeyPatch, floor: int, classes: int | None
) -> None:
    # bl_tiles (k = 7, 8 tiles) over 7 blocks, one class each, every vector kept as a step
    # (as on a large grid) and read over windows of a few blocks: the first round's decisions
    # need some 0.8 million values, past a quarter of the grid's 1.4 million thread-
    # instructions; without the floor the evaluations stop there and every block runs
    # (exact), with it the 7 classes are found
    monkeypatch.setattr(vectors, "EAGER", 0)
    monkeypatch.setattr(vectors, "ELEMENTS", 4096)
    monkeypatch.setattr(spend, "EVAL_FLOOR", floor)
    made: list[Any] = []
    init = vectors.Vectors.__init__

    def kept(self: Any, *args: Any) -> None:
        init(self, *args)
        made.append(self)

    monkeypatch.setattr(vectors.Vectors, "__init__", kept)
    got = _same("bl_tiles", (7, 1, 1), ("1=7", "2=8"), cubin=BALLOTS)
    cov = got.launch.coverage
    assert cov is not None
    if classes is None:
        assert cov.mode == "whole" and cov.run == 7
        # (a quarter of the heaviest block's cost 7 times: within 1 % of the grid's)
        assert made[0].most <= 1.01 * got.instructions_executed / 4 / spend.EVAL_COST
    else:
        assert cov.mode == "alike" and classes_of(cov) == classes
