"""A causal softmax's backward pass in place (tests/data/trace/causalbwd: the project's own
kernel, the shape of llm.c's attention backward without cuDNN): each block takes 4 rows of a
head's T x T matrix counting down from the last, so a guard on the row index against the
column (``j <= t``) differs block by block along x, while the heads (y) only move pointers.

Its blocks fall into one class per x, each of the grid's heads; the totals are worked by hand
and checked against every block run.
"""

from __future__ import annotations

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import classes_of, every_block, traced

CUBIN = TRACE_DATA / "causalbwd" / "causal_bwd.sm_90.cubin"


@needs_nvdisasm
def test_a_causal_backward_falls_into_a_class_per_row_block() -> None:
    # T = 64 over 16 x 3 blocks: each block's 4 rows (all at or above 0), per row 8 shared
    # stores (lane 0 of each warp, 1 wavefront) and 8 loads (each warp reads the 8 sums:
    # 8 words in 8 banks, 1 wavefront): 32 of each a block, 1,536 over the 48
    args = ("2=64", "3=0.125")  # T, scale
    kernel = traced(CUBIN, "causal_bwd", 256, (16, 3, 1), args)
    totals = kernel.totals
    assert (totals["store"].requests, totals["store"].wavefronts) == (1536, 1536)
    assert (totals["load"].requests, totals["load"].wavefronts) == (1536, 1536)
    cov = kernel.launch.coverage
    # a class per x (the row block decides the guard j <= t), of 3 blocks each (the heads)
    assert cov is not None and cov.mode == "alike" and cov.run == 16 and cov.blocks == 48
    assert classes_of(cov) == 16
    assert every_block(CUBIN, "causal_bwd", 256, (16, 3, 1), args).totals == kernel.totals


@needs_nvdisasm
def test_the_rows_below_zero_return() -> None:
    # T = 62 over 16 x 2 blocks: block x's rows are 61 - 4x - r; block 15's rows 1, 0 only
    # (then -1 returns): 15 x 4 + 2 = 62 rows a head, 8 stores and 8 loads each, 992 of each
    args = ("2=62", "3=0.5")
    kernel = traced(CUBIN, "causal_bwd", 256, (16, 2, 1), args)
    assert (kernel.totals["store"].requests, kernel.totals["load"].requests) == (992, 992)
    assert every_block(CUBIN, "causal_bwd", 256, (16, 2, 1), args).totals == kernel.totals
