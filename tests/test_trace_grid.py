"""Whole grids (issue 30): blocks proven alike are traced once and counted for every block,
blocks that differ all run (in batches sized to a memory budget), a grid past the budget is
sampled and said so, and a launch that fills the GPU says why Nsight's per-op totals run
above the figures.

The reference for "counted for every block" is the same grid with every block run (a caller
that reads global memory afterwards gets that): the totals must be equal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shmem_cli.hardware.arch import SM90
from shmem_cli.trace.emulator import grid as grids
from shmem_cli.trace.emulator.budget import Budget
from shmem_cli.trace.emulator.state import GlobalMemory, Launch
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.result import KernelTrace
from shmem_cli.trace.tracer import find_function, trace_kernel

from .conftest import TRACE_DATA, needs_nvdisasm
from .hostile import CUBIN as HOSTILE_CUBIN
from .hostile import shmem
from .test_trace_measured import cubin

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "kernels" / "trace_bench.sm_90.cubin"
GRID = TRACE_DATA / "everyday" / "ev_grid.sm_90.cubin"
BRANCH = TRACE_DATA / "everyday" / "ev_branch.sm_90.cubin"
SGEMM = ("3=256", "4=256", "5=64")  # M, N, K


def _dims(block: int | tuple[int, int, int]) -> tuple[int, int, int]:
    return (block, 1, 1) if isinstance(block, int) else block


def traced(
    path: Path,
    kernel: str,
    block: int | tuple[int, int, int],
    grid: tuple[int, int, int],
    args: Any,
    **kw: Any,
) -> KernelTrace:
    request = TraceRequest(path, kernel=kernel, block=_dims(block), grid=grid, args=args, **kw)
    return trace_file(request).kernels[0]


def classes_of(cov: Any) -> int:
    """The classes of identical behaviour the report's proof says the grid fell into (blocks
    of one class may have run beside each other: :mod:`shmem_cli.trace.emulator.alike`)."""
    proof = cov.proof or ""
    if proof.startswith("every block behaves alike"):
        return 1
    found = re.search(r"fall into ([0-9,]+) class", proof)
    return int(found.group(1).replace(",", "")) if found else 0


def every_block(
    path: Path,
    kernel: str,
    block: int | tuple[int, int, int],
    grid: tuple[int, int, int],
    args: Any,
    **kw: Any,
) -> KernelTrace:
    """The same launch with every block run: the caller reads the memory they wrote."""
    info, disassembly = cubin(path)
    k = find_kernel(info, kernel)
    dims = _dims(block)
    plan = plan_launch(k, kernel_params(k, None), block=dims, grid=grid, args=args, **kw)
    function = find_function(disassembly, k, info.path)
    return trace_kernel(function, k, info.arch, plan, memory=GlobalMemory())


@needs_nvdisasm
def test_blocks_proven_alike_are_traced_once_and_counted_for_all() -> None:
    alike = traced(BENCH, "sgemm_tile", 256, (4, 4, 1), SGEMM)
    ran = every_block(BENCH, "sgemm_tile", 256, (4, 4, 1), SGEMM)
    cov = alike.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 1 and cov.blocks == 16
    assert "every block behaves alike" in (cov.proof or "")
    assert ran.launch.coverage is not None and ran.launch.coverage.mode == "whole"
    assert alike.launch.blocks_traced == ran.launch.blocks_traced == 16
    assert alike.totals == ran.totals
    assert alike.instructions_executed == ran.instructions_executed
    for a, b in zip(alike.accesses, ran.accesses, strict=True):
        assert (a.pc, a.cost.totals, a.cost.lane_accesses) == (
            b.pc,
            b.cost.totals,
            b.cost.lane_accesses,
        )


@needs_nvdisasm
def test_blocks_whose_guards_depend_on_the_block_run_once_per_class() -> None:
    # al_wrap (tests/data/trace/alike): a guard on a sum of the block index that wraps
    # negative from block 2 on: blocks 0-1 and blocks 2-3 are two classes
    path = TRACE_DATA / "alike" / "alike.sm_90.cubin"
    kernel = traced(path, "al_wrap", 256, (4, 1, 1), ())
    ran = every_block(path, "al_wrap", 256, (4, 1, 1), ())
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 2
    assert "the 4 blocks fall into 2 classes" in (cov.proof or "")
    assert kernel.launch.blocks_traced == 4
    assert kernel.totals == ran.totals
    assert kernel.instructions_executed == ran.instructions_executed


@needs_nvdisasm
def test_the_edge_blocks_are_a_class_of_their_own() -> None:
    # width 250: the last column of blocks is cut by the edge guard
    kernel = traced(GRID, "ev_transpose", (32, 8, 1), (8, 8, 1), ("width=250", "height=256"))
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 2 and cov.blocks == 64
    assert "the 64 blocks fall into 2 classes" in (cov.proof or "")
    assert kernel.launch.blocks_traced == 64


@needs_nvdisasm
def test_a_shared_address_that_depends_on_the_block_splits_the_blocks_by_it() -> None:
    # the column stride is 1 + blockIdx.x % 4: four classes, one block of each traced
    kernel = traced(GRID, "ev_blockdep", 1024, (64, 1, 1), ())
    ran = every_block(GRID, "ev_blockdep", 1024, (64, 1, 1), ())
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 4
    assert "the 64 blocks fall into 4 classes" in (cov.proof or "")
    assert kernel.totals == ran.totals


@needs_nvdisasm
def test_a_branch_on_global_data_is_not_alike() -> None:
    flags = TRACE_DATA / "everyday" / "inputs" / "branch_flags.bin"
    kernel = traced(BRANCH, "ev_filter", 256, (2, 1, 1), (f"1=@{flags}",))
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "whole" and cov.run == 2


@needs_nvdisasm
def test_a_grid_past_the_budget_is_sampled_and_said_so(tmp_path: Path) -> None:
    # al_loaded: each block's guard reads its own flag from global memory, so no block
    # stands for another; 64 blocks of 256 threads pass 2^20 / 8 thread-instructions
    flags = tmp_path / "flags.bin"
    flags.write_bytes(bytes(4 * 64))
    small = Budget(launch_instructions=1 << 20)
    alike = TRACE_DATA / "alike" / "alike.sm_90.cubin"
    kernel = traced(alike, "al_loaded", 256, (64, 1, 1), (f"1=@{flags}",), budget=small)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "sample"
    assert 1 < cov.run < 64 and kernel.launch.blocks_traced == cov.run
    # block 0 ran watched and stands for itself; of the 63 others, a sample
    assert f"{cov.run - 1} of its 63 blocks in no class traced, spread evenly" in (
        cov.sampled or ""
    )
    assert "1/8 of --max-launch-instructions" in (cov.sampled or "")
    assert kernel.totals["load"].requests == 8 * cov.run  # one read of tile[t] a warp
    # the note says why no block stood for the others: the guard on the block's own flag
    said = cov.text()
    assert said.startswith("sampled grid: ") and "; the totals count only those blocks (" in said
    assert "blocks may differ: alike.cu:" in said and "its guard predicate" in said
    assert said.endswith("so no block could stand for the others)")


def _one_block_each(alike: Path, tmp_path: Path) -> list[Any]:
    """al_loaded's one block with its flag 0, and with its flag 1, each traced alone."""
    cost = []
    for flag in (0, 1):
        one = tmp_path / f"flag{flag}.bin"
        one.write_bytes(bytes([flag, 0, 0, 0]))
        cost.append(traced(alike, "al_loaded", 256, (1, 1, 1), (f"1=@{one}",)))
    return cost


@needs_nvdisasm
def test_what_the_rest_will_cost_is_measured_on_blocks_spread_over_it(tmp_path: Path) -> None:
    # al_loaded with block 0's flag 0 and the others' 1: a block with its flag set runs one
    # more store a warp. The budget's share fits 63 blocks like block 0 exactly, not 63 like
    # the others: the blocks run first, spread over the 63 (grid.probe), tell, and the grid
    # is sampled (estimated from block 0 alone it would run whole, and a grid whose later
    # blocks loop longer, such as differ.cu's, would stop at the records' bound instead)
    alike = TRACE_DATA / "alike" / "alike.sm_90.cubin"
    cost = _one_block_each(alike, tmp_path)
    light, heavy = (k.instructions_executed for k in cost)
    assert cost[1].totals["store"].requests == cost[0].totals["store"].requests + 8
    flags = tmp_path / "flags.bin"
    flags.write_bytes(bytes(4) + bytes([1, 0, 0, 0]) * 63)
    share = 63 * light
    small = Budget(launch_instructions=grids.WHOLE_SHARE * share)
    assert grids.sampled(63, light, 16, small) == (None, None)  # block 0's estimate fits
    kernel = traced(alike, "al_loaded", 256, (64, 1, 1), (f"1=@{flags}",), budget=small)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "sample" and 1 + grids.PROBE <= cov.run < 64
    assert f"about {63 * heavy:,} thread-instructions (past {share:,}" in (cov.sampled or "")
    assert kernel.instructions_executed == light + (cov.run - 1) * heavy
    # the blocks run first are part of the sample: first and last of the 63 included
    assert set(grids.probe(63)) >= {0, 62} and len(grids.probe(63)) == grids.PROBE


@needs_nvdisasm
def test_the_block_run_before_does_not_judge_the_rest(tmp_path: Path) -> None:
    # al_loaded the other way round: block 0's flag 1 (one more store a warp) and the 63
    # others' 0, the way llm.c's wte_backward_kernel sorts its buckets largest first. The
    # budget's share fits the 63 light blocks exactly: the blocks run first, spread over
    # them, tell, and the whole grid runs (judged by block 0, the heaviest, it was sampled)
    alike = TRACE_DATA / "alike" / "alike.sm_90.cubin"
    cost = _one_block_each(alike, tmp_path)
    light, heavy = (k.instructions_executed for k in cost)
    assert heavy > light
    flags = tmp_path / "flags.bin"
    flags.write_bytes(bytes([1, 0, 0, 0]) + bytes(4 * 63))
    small = Budget(launch_instructions=grids.WHOLE_SHARE * 63 * light)
    kernel = traced(alike, "al_loaded", 256, (64, 1, 1), (f"1=@{flags}",), budget=small)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "whole" and cov.run == 64, cov
    assert kernel.instructions_executed == heavy + 63 * light
    # a store and a load of tile[threadIdx.x] a warp in each block (8 warps), and block 0's
    # 8 stores more
    assert kernel.totals["store"].requests == 64 * 8 + 8
    assert kernel.totals["load"].requests == 64 * 8


def test_a_sample_is_spread_over_the_grid() -> None:
    assert grids.sample(64, 26)[0] == 0 and grids.sample(64, 26)[-1] == 63
    assert len(grids.sample(64, 26)) == 26
    assert grids.sample(10, 20) == tuple(range(10))
    assert grids.sample(10, 1) == (0,)


def test_batches_fit_the_memory_budget() -> None:
    launch = Launch(block=(256, 1, 1), grid=(4096, 1, 1), static_smem=48 * 1024)
    plain = grids.plan(launch, grid=True)
    assert plain.per_batch == grids.BATCH_THREADS // 256  # bounded by threads, not bytes
    local = grids.plan(launch, grid=True, local=True)  # 32 KiB a thread of local memory
    assert grids.batch_bytes(launch, local.per_batch, local=True) <= grids.BATCH_BYTES
    assert grids.batch_bytes(launch, local.per_batch + 1, local=True) > grids.BATCH_BYTES
    rest = list(local.rest())
    assert sum(len(b.ctas) for b in rest) == 4095  # every block but the first
    assert rest[0].linear[0] == 1 and rest[-1].linear[-1] == 4095


def test_resident_blocks_follow_the_h200s_limits() -> None:
    # 256 threads: 8 by threads (2,048 an SM); 5 KiB of shared memory: 45; 32 registers: 8
    assert SM90.resident_blocks(256, 5 * 1024, 32) == 8
    assert SM90.resident_blocks(256, 100 * 1024, 32) == 2  # 228 KiB / 100 KiB
    assert SM90.resident_blocks(1024, 1024, 128) == 0  # 128 x 1,024 registers: none fit
    assert SM90.resident_blocks(32, 1024, 16) == 32  # at most 32 blocks an SM


@pytest.mark.slow
@needs_nvdisasm
def test_a_launch_that_fills_the_gpu_says_why_nsight_runs_above() -> None:
    full = traced(BENCH, "sgemm_tile", 256, (128, 128, 1), SGEMM)
    assert full.launch.coverage is not None and full.launch.coverage.mode == "alike"
    assert full.fills_gpu is not None
    assert "16,384 blocks" in full.fills_gpu and "132 SMs" in full.fills_gpu
    assert "arbitrate" in full.fills_gpu
    small = traced(BENCH, "sgemm_tile", 256, (4, 4, 1), SGEMM)
    assert small.fills_gpu is None
    assert small.to_json()["fills_gpu"] is None
    assert full.to_json()["grid_coverage"]["mode"] == "alike"
    # a kernel with no shared-memory instruction has no contention for the pipe to note
    scatter = traced(HOSTILE_CUBIN, "scatter_pages", 256, (10000, 1, 1), ("pages=1",))
    assert not scatter.accesses and scatter.fills_gpu is None


@pytest.mark.parametrize("grid", [(1, 1, 1), (2, 1, 1)])
@needs_nvdisasm
def test_one_block_has_no_grid_coverage(grid: tuple[int, int, int]) -> None:
    kernel = traced(BENCH, "sgemm_tile", 256, grid, SGEMM)
    assert (kernel.launch.coverage is None) == (grid == (1, 1, 1))


@pytest.mark.slow
@needs_nvdisasm
def test_the_4096_transpose_runs_whole_in_bounded_memory(tmp_path: Path) -> None:
    """16,384 blocks whose edge guards hold in every one (4096 = 128 x 32): proven alike by
    the guards' sums of the block index, block (0,0,0) traced, exact, under 1 GiB."""
    zeros = tmp_path / "z.bin"
    zeros.write_bytes(bytes(4096 * 4096 * 4))
    out = tmp_path / "t.json"
    ran = shmem(
        "trace", str(GRID), "-k", "ev_transpose", "-b", "32,8", "-g", "128,128",
        "-a", f"0=@{zeros}", "-a", f"1=@{zeros}", "-a", "width=4096", "-a", "height=4096",
        "-f", "json", "-o", str(out), timeout=180,
    )  # fmt: skip
    assert ran.code == 0, ran.text
    assert ran.peak_mib < 1024, ran.peak_mib
    kernel = json.loads(out.read_text())["files"][0]["kernels"][0]
    assert kernel["grid_coverage"]["mode"] == "alike"
    proof = kernel["grid_coverage"]["proof"]
    assert "every block behaves alike: block (0,0,0) traced" in proof
    assert "decisions on the block index were evaluated for every block of the grid" in proof
    assert kernel["totals"]["load"]["wavefronts"] == 16_777_216  # the per-instruction counts
    assert kernel["totals"]["store"]["wavefronts"] == 524_288
    assert "fills the GPU" in kernel["fills_gpu"]


def _step(text: str) -> tuple[Any, Any]:
    """An instruction of ``text`` (no pc prefix) and its decoded one-step program."""
    from shmem_cli.cuda.sass import Function, parse_instruction
    from shmem_cli.trace.emulator.decode import decode_function

    ins = parse_instruction(text, 0, "k.cu", 1)
    program = decode_function(Function("k", [ins], {}))
    return ins, program


@pytest.mark.parametrize(
    ("text", "wide"),
    [
        ("IADD3 R4, R2, 0x1, RZ", True),
        ("ISETP.GE.AND P0, PT, R2, 0x4, PT", True),  # one predicate written (PT is none)
        ("ISETP.GE.AND P0, P1, R2, 0x4, PT", False),  # two: the second reads after the first
        ("IADD3 R4, P0, R2, 0x1, RZ", False),  # a carry predicate beside the sum
        ("IMAD.WIDE R4, R2, 0x4, R6", False),  # a register pair
        ("LDS R4, [R2]", False),  # memory: records every request of its threads
        ("MOV R4, c[0x3][R2+0x10]", False),  # an indexed constant checks other threads too
    ],
)
def test_which_steps_run_wide(text: str, wide: bool) -> None:
    from shmem_cli.trace.emulator.op_table import widens

    ins, program = _step(text)
    assert widens(ins, program.destinations[0]) is wide


def test_a_wide_step_writes_only_its_threads() -> None:
    """A step run over every thread with a mask (execute.py, the 4,096 differing blocks'
    loops) leaves the value and taint of the other threads' destination as they were."""
    from shmem_cli.trace.emulator.state import Block

    _, program = _step("IADD3 R4, R2, 0x1, RZ")
    launch = Launch(block=(64, 1, 1), grid=(1, 1, 1), params=b"", memory=GlobalMemory())
    blk = Block(launch, registers=16)
    blk.r[2] = range(64)
    blk.r[4] = 1000
    blk.tr[2, ::2] = 1  # the even threads' sources came from global memory
    blk.tr[4] = 4
    mask = (np.arange(64) % 3) == 0
    blk.run_wide(program[0], mask)
    want = np.where(mask, np.arange(64) + 1, 1000)
    assert blk.r[4].tolist() == want.tolist()
    want_taint = np.where(mask, np.where(np.arange(64) % 2 == 0, 1, 0), 4)
    assert blk.tr[4].tolist() == want_taint.tolist()
    assert blk.mask is None


@pytest.mark.parametrize("period", [0, 3, 4])
def test_distinct_rows_repeating_every_period_are_numbered_as_one_by_one(period: int) -> None:
    """Rows that repeat every ``period`` rows (a batch's CTAs running the same warps) are
    looked up once per period; rows that do not (the last period differs in one lane) are
    looked up one by one: either way equal rows share a number and unequal ones do not."""
    from shmem_cli.trace.distinct_rows import DistinctRows

    base = np.arange(3 * 32, dtype=np.int64).reshape(3, 32) * 4
    repeated = np.tile(base, (4, 1))
    broken = repeated.copy()
    broken[-1, 5] += 4
    for rows in (repeated, broken):
        active = np.ones(rows.shape, dtype=bool)
        ids = DistinctRows(32).add(rows, active, period=period)
        for i in range(len(rows)):
            for j in range(len(rows)):
                assert (ids[i] == ids[j]) == bool((rows[i] == rows[j]).all()), (i, j)


@needs_nvdisasm
def test_a_grid_that_would_write_past_the_arena_is_sampled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # al_loaded: every block writes its 1 KiB row of out (four rows a 4 KiB page), and the
    # blocks whose flag is 1 differ from block 0, so each of them runs: 1 MiB of rows
    alike = TRACE_DATA / "alike" / "alike.sm_90.cubin"
    flags = tmp_path / "flags.bin"
    flags.write_bytes(bytes(4) + bytes([1, 0, 0, 0]) * 1023)
    launch = (alike, "al_loaded", 256, (1024, 1, 1), (f"1=@{flags}",))
    whole = traced(*launch)
    assert whole.launch.coverage is not None and whole.launch.coverage.mode == "whole"
    # global memory bounded at 256 KiB: the rows would pass it, so the grid is sampled, as
    # for the instruction budget, and says why
    monkeypatch.setattr(GlobalMemory.__init__, "__defaults__", (256 << 10,))
    kernel = traced(*launch)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "sample" and 1 + grids.PROBE <= cov.run < 1024
    said = cov.sampled or ""
    assert re.search(r"would write about \d{3} KiB of global memory \(past the 2\d\d KiB", said)
    # the blocks run are counted: 8 warps, one store each (block 0), two (flag 1)
    assert whole.totals["store"].requests == 8 + 1023 * 16
    assert kernel.totals["store"].requests == 8 + (cov.run - 1) * 16
    # bounded at 4 MiB: the blocks run first, spread over the grid, each make a page real (4
    # MiB for the 1,023), but four blocks share a page: their pages reach over 1 MiB only,
    # which fits, and the grid runs whole
    monkeypatch.setattr(GlobalMemory.__init__, "__defaults__", (4 << 20,))
    shared = traced(*launch).launch.coverage
    assert shared is not None and shared.mode == "whole"


def test_a_grid_that_would_run_far_past_the_time_limit_is_sampled() -> None:
    # 100 blocks of 1 s each with 20 s left (past four times it): a sample that takes half of
    # it, 10 blocks
    chosen, why = grids.sampled(100, 1, 0, Budget(), seconds=(1.0, 20.0))
    assert chosen is not None and len(chosen) == 10
    assert why is not None
    said = "would take about 100 s (more than 4 times the 20 s left before --time-limit): 10 of"
    assert said in why
    # 100 s with 50 s left may still end in time (the pace of the first blocks is
    # pessimistic): the grid runs whole, as it did before sampling by time
    assert grids.sampled(100, 1, 0, Budget(), seconds=(1.0, 50.0)) == (None, None)
    assert grids.sampled(100, 1, 0, Budget(), seconds=(0.4, 50.0)) == (None, None)


def test_half_the_time_left_is_one_rule_for_both_samplers() -> None:
    # the rule sampled (before the rest runs) and alike.rest.run_in_time (while it runs)
    # share: blocks of a pace that fit half the time left
    assert grids.fit_in_half_the_time(20.0, 1.0) == 10
    assert grids.fit_in_half_the_time(7.0, 0.5) == 7
    assert grids.fit_in_half_the_time(0.9, 1.0) == 0
    # no time left (the deadline passed), or no pace measured: none, never a division by 0
    assert grids.fit_in_half_the_time(-3.0, 1.0) == 0
    assert grids.fit_in_half_the_time(-3.0, 0.0) == 0
    assert grids.fit_in_half_the_time(5.0, 0.0) == 0


def _al_loaded_slowed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seconds: float, *, after: int
) -> Any:
    """al_loaded over 1,024 blocks (every block but 0 in no class, so each runs), its grid
    driver's clock (alike.classes.time and alike.rest.time, one clock) made to jump
    ``seconds`` ahead once it has been read ``after`` times: the pace of what ran from then
    on seems that slow. The launch may run 180 s (``--time-limit 180``; the default is 40)."""
    import time

    from shmem_cli.trace.emulator.alike import classes, rest

    calls: list[float] = []

    class Clock:
        @staticmethod
        def monotonic() -> float:
            calls.append(time.monotonic())
            return calls[-1] + (seconds if len(calls) > after else 0.0)

    for module in (classes, rest):
        monkeypatch.setattr(module, "time", Clock)
    alike = TRACE_DATA / "alike" / "alike.sm_90.cubin"
    flags = tmp_path / "flags.bin"
    flags.write_bytes(bytes(4) + bytes([1, 0, 0, 0]) * 1023)
    budget = Budget(seconds=180.0)
    return traced(alike, "al_loaded", 256, (1024, 1, 1), (f"1=@{flags}",), budget=budget)


@needs_nvdisasm
def test_a_grid_whose_first_blocks_ran_slowly_is_sampled_not_stopped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # the blocks run first, spread over al_loaded's 1,024, are made to seem to take 170 of
    # the 180 s the launch may run: the rest would take far past the limit, so the grid is
    # sampled down to those already run, and said so, rather than stopped at the limit
    kernel = _al_loaded_slowed(monkeypatch, tmp_path, 170.0, after=1)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "sample" and cov.run == 1 + grids.PROBE
    assert "s left before --time-limit): 8 of its 1,023 blocks" in (cov.sampled or "")


def test_a_grid_that_fits_the_room_left_runs_whole_and_one_past_it_is_sampled_to_half() -> None:
    # 100 blocks of 3 bytes each: 300 bytes fit a room of 400 (as the grid ran whole before
    # sampling by memory), pass a room of 250: a sample of half of it, 125 // 3 = 41 blocks
    assert grids.sampled(100, 1, 0, Budget(), written=(3, 400, 1 << 62)) == (None, None)
    chosen, why = grids.sampled(100, 1, 0, Budget(), written=(3, 250, 1 << 62))
    assert chosen is not None and len(chosen) == 41
    assert "write about 0 KiB of global memory (past the 0 KiB left" in (why or "")
    # pages the blocks reach over bound the estimate: 300 bytes within a span of 200 fit
    assert grids.sampled(100, 1, 0, Budget(), written=(3, 250, 200)) == (None, None)


@needs_nvdisasm
def test_a_grid_whose_later_batches_run_slowly_is_sampled_not_stopped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # the first blocks run at their real pace (the grid is judged to fit and runs whole),
    # then the first full batch is made to seem to take 150 of the 180 s (a machine that got
    # busy): the blocks left would pass the limit, so an even sample of them that takes
    # about half the time left runs, and the report says so, rather than the launch being
    # stopped at the limit as an "endless loop"
    kernel = _al_loaded_slowed(monkeypatch, tmp_path, 150.0, after=3)
    cov = kernel.launch.coverage
    # block 0's class, the 8 probes, one batch of 65,536 threads (256 blocks of 256), and a
    # sample of the 759 left that fits about 15 s at 150 / 256 s a block: at most 25
    assert cov is not None and cov.mode == "sample"
    assert 1 + 8 + 256 < cov.run <= 1 + 8 + 256 + 25
    said = cov.sampled or ""
    # 759 blocks at (150 s + the batch's real time) / 256 a block: 445 s and a little more
    # on a busy machine (446 under a full suite beside other work)
    took = re.search(r"the 759 left after 256 more ran would take about (\d+) s", said)
    assert took is not None and 444 <= int(took.group(1)) <= 460, said
    assert "s left before --time-limit): " in said
    assert f"{cov.run - 1:,} of its 1,023 blocks in no class traced" in said


def test_no_batch_is_planned_past_half_the_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    # a persistent GEMM's 131 CTAs after its first fit one batch (65,536 threads) and took
    # 2 s each: run as one batch they outran the 180 s before any pace was judged, and the
    # launch stopped with the time-limit error in that batch. A batch now holds the blocks
    # that fit half the time left at the pace known before it (the blocks run first: 2 s)
    from shmem_cli.trace.emulator.alike import rest

    clock = [0.0]

    class Clock:
        @staticmethod
        def monotonic() -> float:
            return clock[0]

    class Run:
        deadline = 100.0
        sizes: list[int] = []

        def batch(self, batch: Any, watch: Any) -> None:
            self.sizes.append(batch.size)
            clock[0] += 2.0 * batch.size  # every block takes 2 s, alone or together
            assert clock[0] <= self.deadline  # never past the limit

    class Batch:
        def __init__(self, size: int) -> None:
            self.size = size

    class Plan:
        per_batch = 170  # 65,536 threads of 384

        def rest(self, clusters: list[int]) -> Any:
            for start in range(0, len(clusters), self.per_batch):
                yield Batch(len(clusters[start : start + self.per_batch]))

    monkeypatch.setattr(rest, "time", Clock)
    run = Run()
    ran, late = rest.run_in_time(run, Plan(), range(131), range(131), pace=2.0)  # type: ignore[arg-type]
    # 25 blocks fit half of the 100 s at 2 s a block; after them 50 s are left, and the 106
    # left would take 212: a sample that fits half of those 50 s (12 blocks) ends the launch
    assert run.sizes == [25, 12]
    assert len(ran) == 37 and late is not None
    assert "the 106 left after 25 more ran would take about 212 s" in late


def test_the_proof_counts_one_decision_in_the_singular() -> None:
    one = grids.Proof(blocks=4, decisions=1, bounded=1, grid=4).text()
    assert "1 decision was checked: no guard" in one
    assert "1 decision on the block index was evaluated for every block" in one
    many = grids.Proof(blocks=4, decisions=1_234, bounded=3, grid=4).text()
    assert "1,234 decisions were checked" in many
    assert "3 decisions on the block index were evaluated" in many
