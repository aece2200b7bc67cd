"""Reads of threadIdx.x again and op_misc (tests/data/trace/tidreads: the project's kernels,
counted twice on a GPU): the trace's op_misc, by the rows docs/hardware-model.md 9e gives
``S2R SR_TID.X``, against both runs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm

LAB = TRACE_DATA / "tidreads"
MEASURED = LAB / "measured.json"
#: lab/main.cu's launches, in order: (kernel, grid, block, n)
LAUNCHES = [("t_once", 2, 128, None), ("t_bar", 2, 128, None)]
LAUNCHES += [("t_loop", 2, 128, n) for n in (1, 3, 4, 5, 8, 9)]
LAUNCHES += [("t_loop", 2, 64, 5), ("t_bar", 1, 32, None)]


def traced_misc(kernel: str, grid: int, block: int, n: int | None) -> int:
    args = ["trace", str(LAB / "tidreads.sm_90.cubin"), "-k", kernel, "-g", str(grid)]
    args += ["-b", str(block), "-f", "json"] + (["-a", f"1={n}"] if n is not None else [])
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    report: Any = json.loads(res.output)
    return int(report["files"][0]["kernels"][0]["totals"]["misc"]["wavefronts"])


@needs_nvdisasm
@pytest.mark.skipif(not MEASURED.exists(), reason="the lab is not measured yet")
@pytest.mark.parametrize("i", range(len(LAUNCHES)), ids=[f"{k}_{b}_{n}" for k, _, b, n in LAUNCHES])
def test_op_misc_as_the_gpu_counted_twice(i: int) -> None:
    runs = json.loads(MEASURED.read_text())["runs"]
    assert all(len(r) == len(LAUNCHES) for r in runs)
    got = traced_misc(*LAUNCHES[i])
    assert (got, got) == (runs[0][i], runs[1][i])
