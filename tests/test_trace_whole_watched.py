"""A grid's first block runs its straight runs under the watch (shmem_cli/trace/emulator/whole/
watched.py: whole steps, the watch told of every step): the report is the one of the same
launch with no straight run at all (every instruction stepped alone by the scheduler, the
watch told of each), classes, proof and counts, on the llm.c-shaped one-warp attention
(whose block index places its global loads, so its shared tiles carry the block index's
taint) and on grids whose blocks fall into classes (tests/data/trace/classes)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from shmem_cli.trace.emulator import scheduler
from shmem_cli.trace.emulator.whole import watched

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import classes_of, traced

LLMC = TRACE_DATA / "llmc" / "llmc.sm_90.cubin"
ATTN = ("N=64", "d=64", "Tc=2", "Tr=2", "Bc=32", "Br=32", "scale=0.125")


def _no_straight_runs(instructions: list[Any], *_: Any) -> list[int]:
    return list(range(len(instructions) + 1))  # every run ends where it starts


def _report(kernel: Any) -> Any:
    cov = kernel.launch.coverage
    totals = {op: dataclasses.astuple(t) for op, t in kernel.totals.items()}
    return (cov.mode, cov.run, cov.proof, classes_of(cov), totals)


def _both(
    path: Path, name: str, block: int, grid: tuple[int, int, int], args: Any, **kw: Any
) -> tuple[Any, Any, list[int]]:
    calls: list[int] = []

    def counted(*a: Any, **k: Any) -> None:
        calls.append(a[5])  # the run's first instruction
        watched.run_watched(*a, **k)

    with mock.patch.object(scheduler, "run_watched", counted):
        fast = traced(path, name, block, grid, args, **kw)
    with mock.patch.object(scheduler, "_straight_runs", _no_straight_runs):
        slow = traced(path, name, block, grid, args, **kw)
    return fast, slow, calls


@needs_nvdisasm
def test_the_attention_grid_runs_straight_under_the_watch_with_the_same_report() -> None:
    fast, slow, calls = _both(LLMC, "attn_fwd2", 32, (2, 3, 1), ATTN, dynamic_smem=28672)
    assert len(calls) > 100  # the first block's straight runs ran under the watch
    assert _report(fast) == _report(slow)
    cov = fast.launch.coverage
    assert cov.mode == "alike" and cov.run == 1  # its 6 blocks alike: one run
    # per block: K and V (64 x 2 tiles) and Q (64 x 4 tile pairs) stored, one warp a request
    assert fast.totals["store"].requests >= 6 * (2 * 64 * 2 + 64 * 4)


CLASSES = TRACE_DATA / "classes" / "classes.sm_90.cubin"


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "grid", "args"),
    [
        ("cl_udiv", (40, 1, 1), ()),  # a class per divisor (t + 64) / (b % 5 + 1)
        ("cl_mod", (12, 1, 1), ()),
        ("cl_float", (12, 1, 1), ()),
        ("cl_smem", (12, 1, 1), ()),
        ("cl_attn", (8, 4, 1), ("1=64",)),  # 8 classes of 4: (x + 1) steps of 8 reads a warp
    ],
)
def test_a_grid_of_classes_runs_straight_under_the_watch_with_the_same_report(
    kernel: str, grid: tuple[int, int, int], args: tuple[str, ...]
) -> None:
    fast, slow, calls = _both(CLASSES, kernel, 256, grid, args)
    assert _report(fast) == _report(slow)
    assert calls  # straight runs ran under the watch


@needs_nvdisasm
def test_a_spill_and_its_refill_in_a_straight_run_carry_the_form_as_when_stepped() -> None:
    # tests/data/trace/spills: hundreds of STL and LDL of the first block run in straight
    # runs under the watch, which looks at them by the rule a step uses
    # (alike.evaluated.looked_at): the same report, the five classes of blocks found
    spills = TRACE_DATA / "spills" / "spills.sm_90.cubin"
    fast, slow, calls = _both(spills, "sp_rows", 128, (16, 1, 1), ("2=8", "3=8"))
    assert _report(fast) == _report(slow)
    assert calls and classes_of(fast.launch.coverage) == 5
