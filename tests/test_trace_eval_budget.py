"""What the rounds of watched blocks may cost, watching and evaluating together
(alike/spend.py's :func:`allowed`): a quarter of running every block plainly, besides what
the classes found save, plus a floor that pays for a small grid whatever it costs."""

from __future__ import annotations

from typing import Any

import pytest

from shmem_cli.trace.emulator.alike import spend, vectors
from shmem_cli.trace.emulator.alike.classes import ClassCounts, Counts

from .conftest import needs_nvdisasm
from .test_trace_ballots import BALLOTS
from .test_trace_classes import _same
from .test_trace_grid import classes_of


def test_the_classes_found_widen_what_the_rounds_may_cost() -> None:
    # 12,000 thread-instructions for every block plainly: a quarter is 3,000; a class of 4
    # blocks of 1,000 (6 more in the blocks a guard chose) saved 3,006 more
    assert (spend.SHARE, spend.EVAL_COST, spend.WATCH_COST) == (1 / 4, 3, 4)
    assert spend.allowed(12_000, ()) == spend.FLOOR + 3_000
    found = [ClassCounts(0, 3, Counts(1_000), 6), ClassCounts(5, 0, Counts(900))]
    assert spend.allowed(12_000, found) == spend.FLOOR + 6_006


def test_watching_and_evaluating_draw_on_one_budget() -> None:
    # a first round of 1 block of 1,000 thread-instructions watched costs 4 x (1 + 8) x 1,000
    # = 36,000, and the 1,000 values it evaluated 3,000 more; 800 of them made whole, a
    # block of the next round is expected to make a quarter (200)
    ran = spend.Spend(4).ran(1, 1_000, 1_000, 800)
    assert (ran.spent, ran.made) == (39_000, 200)
    # of 100,000 allowed, 61,000 are left: 20,333 values more than the 1,000 evaluated...
    assert ran.evaluations(100_000, 1_000) == 1_000 + 20_333
    # ... and, the round's 8 blocks more apart (32,000), blocks of 1,000 watched at 4,000
    # and 600 for their values: 29,000 // 4,600 = 6
    assert ran.fit(16, 1_000, 100_000) == 6
    # a second round of 2 blocks measures its own: 400 made, 200 a block
    again = ran.ran(2, 2_000, 500, 400)
    assert (again.spent, again.made) == (39_000 + 40_000 + 1_500, 200)
    # where the values took it all, none
    assert spend.Spend(4).ran(1, 1_000, 40_000, 40_000).fit(16, 1_000, 100_000) == 0


def test_a_block_is_watched_only_where_its_class_saves_more() -> None:
    # a round of 2 blocks over a grid of 10,000 ran 2,000,000 thread-instructions and
    # evaluated 30,000 decisions, each over the 10,000 blocks: 4 x 2,000,000 x (2 + 8) / 2 =
    # 40 million for the watch, 8 x 30,000 x 10,000 = 2.4 billion for the decisions
    assert spend.DECIDE_COST == 8
    ran = spend.Spend(10_000).ran(2, 2_000_000, 0, 0, 30_000)
    assert ran.spent == 2_440_000_000
    # a block of 1,000,000 more: 4 million watched, its 15,000 decisions over 10,000 blocks
    # 1.2 billion: 1,204 million in all, what a class of 1,205 saves run plainly (1,204 blocks
    # besides it): not paid; a class of 1,206 saves a block more
    assert ran.watched(1_000_000) == 1_204_000_000
    assert not ran.pays(1_000_000, 1_205)
    assert ran.pays(1_000_000, 1_206)
    # a small grid's rounds within the floor watch on whatever a class saves
    small = spend.Spend(100).ran(1, 1_000, 0, 0, 10)
    assert small.spent + small.watched(1_000) <= spend.FLOOR and small.pays(1_000, 1)


def _most_allowed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The values the rounds' evaluations might reach, each time they were asked."""
    asked: list[int] = []
    allowed = vectors.Vectors.allowed

    def kept(self: Any) -> int:
        asked.append(allowed(self))
        return asked[-1]

    monkeypatch.setattr(vectors.Vectors, "allowed", kept)
    return asked


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(("floor", "classes"), [(0, None), (spend.FLOOR, 7)])
def test_a_small_grid_is_classed_on_the_floor_and_past_the_share_runs_plainly(
    monkeypatch: pytest.MonkeyPatch, floor: int, classes: int | None
) -> None:
    # bl_tiles (k = 7, 8 tiles) over 7 blocks, one class each, every vector kept as a step
    # (as on a large grid) and read over windows of a few blocks: the first round's decisions
    # need some 0.8 million values, past half of the grid's 1.4 million thread-instructions
    # (the first round's share) at 3 each; without the floor the evaluations stop there and
    # every block runs (exact), with it the 7 classes are found
    monkeypatch.setattr(vectors, "EAGER", 0)
    monkeypatch.setattr(vectors, "ELEMENTS", 4096)
    monkeypatch.setattr(spend, "FLOOR", floor)
    asked = _most_allowed(monkeypatch)
    got = _same("bl_tiles", (7, 1, 1), ("1=7", "2=8"), cubin=BALLOTS)
    cov = got.launch.coverage
    assert cov is not None
    if classes is None:
        assert cov.mode == "whole" and cov.run == 7
        # (half of every block's cost at the first block's, at most)
        assert max(asked) <= got.instructions_executed / 2 / spend.EVAL_COST
    else:
        assert cov.mode == "alike" and classes_of(cov) == classes


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(("weight", "run"), [(vectors.MADE_WEIGHT, 64), (0, 1 + 54)])
def test_values_made_whole_are_charged_and_stop_the_first_round(
    monkeypatch: pytest.MonkeyPatch, weight: int, run: int
) -> None:
    # bl_tiles (k = 7, 8 tiles) over 64 blocks, its vectors made whole (each instruction's at
    # once, 256 groups x 64 blocks): with no floor and the first round's share an eighth, it
    # may evaluate an eighth of its 64 blocks' 12.8 million thread-instructions at 3 a value
    # (0.53 million); the first block makes some 0.8 million, each counted twice, so its
    # decisions stop there unproven and every block runs (exact); not counted, its class of
    # 10 blocks (b % 7 = 0) is found (the watch's own cost then ends the rounds, and the 54
    # blocks left run)
    monkeypatch.setattr(spend, "FLOOR", 0)
    monkeypatch.setattr(spend, "FIRST", 1 / 8)
    monkeypatch.setattr(vectors, "MADE_WEIGHT", weight)
    asked = _most_allowed(monkeypatch)
    got = _same("bl_tiles", (64, 1, 1), ("1=7", "2=8"), cubin=BALLOTS)
    cov = got.launch.coverage
    assert cov is not None and cov.run == run
    assert cov.mode == ("whole" if weight else "alike")
    assert max(asked) <= got.instructions_executed / 8 / spend.EVAL_COST
