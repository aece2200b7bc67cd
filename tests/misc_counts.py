"""The small op_misc labs whose launches are a kernel, a grid, a block and one int argument
(tests/data/trace/tidreads, fencemerge, attnorder, attnmid; their table is
tests/test_trace_misc_labs.py; lab_common/misc_twice_parse.py writes ``runs``, op_misc per
launch in launch order, for two Nsight Compute runs): the trace's figure of one launch, and
the check their test makes against both runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from shmem_cli.cli import main


def traced_misc(cubin: Path, kernel: str, grid: int, block: int, arg: int | None) -> int:
    """op_misc wavefronts of ``kernel`` traced over ``grid`` blocks of ``block`` threads, its
    parameter 1 set to ``arg`` (none: the kernel takes only its output)."""
    args = ["trace", str(cubin), "-k", kernel, "-g", str(grid), "-b", str(block), "-f", "json"]
    res = CliRunner().invoke(main, args + (["-a", f"1={arg}"] if arg is not None else []))
    assert res.exit_code == 0, res.output
    report: Any = json.loads(res.output)
    return int(report["files"][0]["kernels"][0]["totals"]["misc"]["wavefronts"])


def check_counted_twice(
    measured: Path, launches: int, i: int, got: int, misc_open: dict[int, tuple[int, int, int]]
) -> None:
    """Launch ``i``'s traced ``got`` against both runs of ``measured``: equal to each, or
    (the rule's, run1's, run2's) as ``misc_open`` lists a launch the rule misses."""
    runs = json.loads(measured.read_text())["runs"]
    assert len(runs) == 2 and all(len(r) == launches for r in runs)
    assert (got, runs[0][i], runs[1][i]) == misc_open.get(i, (got, got, got))
