"""Reads of threadIdx.x again and op_misc (tests/data/trace/tidreads: the project's kernels,
counted twice on a GPU): the trace's op_misc, by the rows docs/hardware-model.md 9e gives
``S2R SR_TID.X``, against both runs."""

from __future__ import annotations

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .misc_counts import check_counted_twice, traced_misc

LAB = TRACE_DATA / "tidreads"
MEASURED = LAB / "measured.json"
#: lab/main.cu's launches, in order: (kernel, grid, block, n)
LAUNCHES = [("t_once", 2, 128, None), ("t_bar", 2, 128, None)]
LAUNCHES += [("t_loop", 2, 128, n) for n in (1, 3, 4, 5, 8, 9)]
LAUNCHES += [("t_loop", 2, 64, 5), ("t_bar", 1, 32, None)]


@needs_nvdisasm
@pytest.mark.skipif(not MEASURED.exists(), reason="the lab is not measured yet")
@pytest.mark.parametrize("i", range(len(LAUNCHES)), ids=[f"{k}_{b}_{n}" for k, _, b, n in LAUNCHES])
def test_op_misc_as_the_gpu_counted_twice(i: int) -> None:
    kernel, grid, block, n = LAUNCHES[i]
    got = traced_misc(LAB / "tidreads.sm_90.cubin", kernel, grid, block, n)
    check_counted_twice(MEASURED, len(LAUNCHES), i, got, {})
