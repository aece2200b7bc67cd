"""A causal softmax's backward pass in place (tests/data/trace/causalbwd: the project's own
kernel, the shape of llm.c's attention backward without cuDNN): each block takes 4 rows of a
head's T x T matrix counting down from the last, so a guard on the row index against the
column (``j <= t``) differs block by block along x, while the heads (y) only move pointers.

Its blocks fall into one class per x, each of the grid's heads; the totals are worked by hand
and checked against every block run.
"""

from __future__ import annotations

import pytest

from shmem_cli.trace.emulator.access_kind import shared_op_of
from shmem_cli.trace.emulator.alike.watch import Chooser
from shmem_cli.trace.emulator.decode import decode_function
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.tracer import find_function

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import classes_of, every_block, traced
from .test_trace_measured import cubin

CUBIN = TRACE_DATA / "causalbwd" / "causal_bwd.sm_90.cubin"
#: the selects that compute values (an address's sum and carry, a product)
_VALUES = ("IADD3", "FMUL")


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


@needs_nvdisasm
def test_a_launch_scale_grid_has_every_row_block_proven() -> None:
    # T = 256 over 64 x 12 blocks: every block's 4 rows are at or above 0, 32 stores and 32
    # loads a block, 24,576 of each over the 768; a class per x (the row guard j <= t) of the
    # 12 heads, all 64 found. Before, the first block's compares of each thread's column
    # against the block's row (256 groups of threads) cost a table of groups x blocks each,
    # and the rounds ended after 19 blocks, 559 of the 768 run.
    args = ("2=256", "3=0.125")
    kernel = traced(CUBIN, "causal_bwd", 256, (64, 12, 1), args)
    totals = kernel.totals
    assert (totals["store"].requests, totals["store"].wavefronts) == (24576, 24576)
    assert (totals["load"].requests, totals["load"].wavefronts) == (24576, 24576)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.blocks == 768 and cov.run == 64
    assert classes_of(cov) == 64
    assert every_block(CUBIN, "causal_bwd", 256, (64, 12, 1), args).totals == kernel.totals


@pytest.mark.slow
@needs_nvdisasm
def test_a_long_loop_over_a_large_grid_runs_plainly_where_watching_costs_more() -> None:
    # T = 1,024 over 256 x 12 blocks: 4 rows of 1,024 columns a block, 32 stores and 32 loads,
    # 98,304 of each over the 3,072. A block watched evaluates each of its decisions (its rows'
    # loops) over the 3,072 blocks, and its class saves only the 11 other heads' blocks: the
    # rounds end where watching another would cost more than the blocks it saves (before, they
    # watched 64 blocks, their cap then, and ran the 2,304 left)
    args = ("2=1024", "3=0.125")
    grid = (256, 12, 1)
    kernel = traced(CUBIN, "causal_bwd", 256, grid, args, buffer_size=64 << 20)
    totals = kernel.totals
    assert (totals["store"].requests, totals["store"].wavefronts) == (98304, 98304)
    assert (totals["load"].requests, totals["load"].wavefronts) == (98304, 98304)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.sampled is None
    assert "would cost more than running the" in (cov.proof or "")
    assert classes_of(cov) < 64 and cov.run > 3072 - 12 * 64


@needs_nvdisasm
def test_the_row_guards_selects_and_the_head_are_not_evaluated() -> None:
    # the causal part's selects under the row guard (`@P3 IADD3 R10, P4, ...` of a column's
    # address, `@!P0 FMUL` of its value) only place global loads and stores or make data, and
    # the head (blockIdx.y) only moves the global pointers: no decision reads what they write,
    # so the proof makes no vector of them (it made one per thread of the block for each)
    info, disassembly = cubin(CUBIN)
    function = find_function(disassembly, find_kernel(info, "causal_bwd"), info.path)
    program = decode_function(function)
    chooser = Chooser(program, function, [shared_op_of(ins) for ins in function.instructions])
    need, ins = chooser.needed, function.instructions
    selects = [m for m, s in enumerate(chooser.selects) if s and ins[m].opcode in _VALUES]
    assert len(selects) >= 6 and not any(need[m] for m in selects)
    head = [m for m, x in enumerate(ins) if "SR_CTAID.Y" in str(x.operands)]
    assert len(head) == 1 and not need[head[0]]
    row = [m for m, x in enumerate(ins) if "SR_CTAID.X" in str(x.operands)]
    assert len(row) == 1 and need[row[0]]  # (the row guard's)
