"""The wall-time limits (trace/emulator/budget.py): a launch may run ``SECONDS`` (180) and a
block (a cluster) run alone ``ALONE_SECONDS`` (40), so that an endless loop in a one-block
launch, or in the block a grid runs first, ends within a minute, while a grid whose batches
of many blocks run on (a histogram of 1,024 contended blocks took 60-130 s) is not cut at
40 s; ``--time-limit`` sets both."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest

from shmem_cli.trace.emulator import budget as budgets
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.budget import Budget, Ledger, Limits
from shmem_cli.trace.emulator.state import GlobalMemory
from shmem_cli.trace.emulator.trace_error import TraceError
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.tracer import find_function, trace_kernel

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_measured import cubin

DIFFER = TRACE_DATA / "cluster" / "differ.sm_90.cubin"  # block b loops b % 32 + 1 times


def test_the_defaults_and_one_option_for_both() -> None:
    assert (budgets.SECONDS, budgets.ALONE_SECONDS) == (180.0, 40.0)
    assert Budget().alone_seconds == 40.0 and Budget().seconds == 180.0
    given = Budget.of(time_limit=7.0)
    assert (given.seconds, given.alone_seconds) == (7.0, 7.0)


def test_time_a_block_spends_set_aside_is_not_its_own() -> None:
    limits = Limits(Budget(), 32, 0, math.inf, "", alone_until=time.monotonic() + 100.0)
    before = limits.alone_until
    limits.set_aside(5)  # while other blocks run
    time.sleep(0.05)
    limits.resume(5)
    assert limits.alone_until - before >= 0.05
    # a block set aside before it executed anything waits on others' time just as well
    before = limits.alone_until
    limits.set_aside(0)
    time.sleep(0.05)
    limits.resume(0)
    assert limits.alone_until - before >= 0.05


def test_a_block_set_aside_is_counted_by_the_launch_until_it_resumes() -> None:
    ledger = Ledger()
    limits = Limits(Budget(launch_instructions=100), 32, 10, math.inf, "", ledger=ledger)
    assert (limits.spent, limits.launch) == (10, 90)
    limits.set_aside(30)  # the blocks that run meanwhile may execute 60 more
    assert (ledger.held, limits.spent, limits.launch) == (30, 40, 60)
    limits.resume(30)  # its own count again
    assert (ledger.held, limits.spent, limits.launch) == (0, 10, 90)


def _trace(grid: int, budget: Budget) -> None:
    info, disassembly = cubin(DIFFER)
    k = find_kernel(info, "differ")
    plan = plan_launch(
        k, kernel_params(k, None), block=(256, 1, 1), grid=(grid, 1, 1), args=("2=1048576",)
    )
    function = find_function(disassembly, k, info.path)
    trace_kernel(function, k, info.arch, plan, memory=GlobalMemory(), budget=budget)


@needs_nvdisasm
def test_a_block_alone_past_its_time_is_stopped_at_its_loop() -> None:
    with pytest.raises(TraceError, match="time limit of 0 s for one block, in block"):
        _trace(1, Budget(alone_seconds=0.0))
    with pytest.raises(TraceError, match="time limit of 0 s in block"):  # the launch's
        _trace(1, Budget(seconds=0.0))


@needs_nvdisasm
def test_only_a_batch_of_one_block_has_the_limit_of_a_block_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[int, float]] = []
    real = execute.run_block

    def spy(function: Any, program: Any, blk: Any, **kw: Any) -> Any:
        seen.append((blk.ctas, kw["limits"].alone_until))
        return real(function, program, blk, **kw)

    monkeypatch.setattr(execute, "run_block", spy)
    _trace(64, Budget())  # the blocks differ: block 0 alone (the proof), then a batch
    alone = [until for ctas, until in seen if ctas == 1]
    many = [until for ctas, until in seen if ctas > 1]
    assert alone and many, seen
    assert all(math.isfinite(u) for u in alone)
    assert all(u == math.inf for u in many)
