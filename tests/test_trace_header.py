"""The trace header's words for the blocks a grid counted and ran.

The figures are the JSON's (``blocks_traced``, ``grid_coverage.blocks`` and
``.blocks_run``): the header says them in words, never a second count of its own.
"""

from __future__ import annotations

import dataclasses

from shmem_cli.render.trace.view import blocks_counted
from shmem_cli.trace.result import GridCoverage, LaunchInfo

ONE = LaunchInfo(
    block=(256, 1, 1),
    grid=(1, 1, 1),
    blocks_traced=1,
    dynamic_smem=0,
    static_smem=0,
    arguments=(),
    zero_filled=(),
    defaulted=(),
)


def launch(counted: int, coverage: GridCoverage) -> LaunchInfo:
    return dataclasses.replace(ONE, blocks_traced=counted, coverage=coverage)


def test_one_block() -> None:
    assert blocks_counted(ONE) == "1 block run"


def test_a_grid_whose_every_block_ran() -> None:
    whole = launch(4, GridCoverage("whole", 4, 4, differs="blocks may differ"))
    assert blocks_counted(whole) == "4 blocks run"


def test_blocks_proven_alike_say_how_many_ran() -> None:
    # 128x128 blocks: the first ran and counts for all
    alike = launch(16384, GridCoverage("alike", 16384, 1, proof="every block behaves alike"))
    said = blocks_counted(alike)
    assert said == "16,384 blocks counted, 1 run: the others behave alike (the note says why)"
    assert "traced" not in said


def test_blocks_alike_by_class() -> None:
    classes = launch(64, GridCoverage("alike", 64, 2, proof="the 64 blocks fall into 2 classes"))
    assert blocks_counted(classes).startswith("64 blocks counted, 2 run: ")


def test_a_sampled_grid_says_only_the_sample_is_counted() -> None:
    sample = launch(9, GridCoverage("sample", 64, 9, sampled="8 of its 63 blocks"))
    assert blocks_counted(sample) == (
        "9 of the 64 blocks run and counted: a sample (the note says why)"
    )


def test_a_sample_with_classes_counts_the_classes_and_the_sample() -> None:
    # 3 ran, standing for 10 more of their classes; the grid's other 51 blocks not sampled
    sample = launch(13, GridCoverage("sample", 64, 3, proof="classes", sampled="a sample"))
    assert blocks_counted(sample) == (
        "13 of the 64 blocks counted, 3 run: the others counted behave alike, the rest were"
        " not sampled (the notes say why)"
    )
