"""Records folded at their bound where a grid is traced by class, and wgmma's (issue 30).

A trace whose shared-memory records reach their bound costs them, sums them per instruction
and drops them (``Recorder.fold``). The reference of each test here is the same launch
traced with the default bound, which these launches never reach (no fold): every
per-instruction figure and the whole JSON report, the note on folding aside, must be the
same, and the records must never have held more than the small bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shmem_cli.analysis import cost as cost_door
from shmem_cli.cuda.sass import Instruction
from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.engine import AccessKind
from shmem_cli.trace.aggregate import records_costs, trace_access
from shmem_cli.trace.emulator import budget
from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.recorder import Recorder
from shmem_cli.trace.requests import InstructionRecords

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm

CLASSES = TRACE_DATA / "classes" / "classes.sm_90.cubin"


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes the records held each time they were folded."""
    seen: list[int] = []
    fold = Recorder.fold

    def watched(self: Recorder) -> bool:
        seen.append(sum(r.recorded_bytes for r in self.by_index.values()))
        return fold(self)

    monkeypatch.setattr(Recorder, "fold", watched)
    return seen


def same_but_the_note(whole: Any, folded: Any) -> None:
    assert whole.records_note is None
    assert folded.records_note is not None and "every total is exact" in folded.records_note
    assert len(whole.accesses) == len(folded.accesses) > 0
    for a, b in zip(whole.accesses, folded.accesses, strict=True):
        assert a.site.pc == b.site.pc
        assert a.cost.totals == b.cost.totals
        assert a.cost.lane_accesses == b.cost.lane_accesses
        assert a.cost.max_wavefronts_per_request == b.cost.max_wavefronts_per_request
        assert (a.cost.warps, a.cost.iterations) == (b.cost.warps, b.cost.iterations)
        assert (a.cost.shown, a.cost.detail) == (b.cost.shown, b.cost.detail)
        assert a.data_dependent_requests == b.data_dependent_requests
        assert a.inexact_requests == b.inexact_requests
        assert a.predicated_off == b.predicated_off
    whole_json, folded_json = whole.to_json(), folded.to_json()
    assert whole_json.pop("records_note") is None
    assert folded_json.pop("records_note") == folded.records_note
    assert whole_json == folded_json


def _by_class(kernel: str, grid: tuple[int, int, int], args: tuple[str, ...], bound: int) -> Any:
    request = TraceRequest(
        CLASSES,
        kernel=kernel,
        block=(256, 1, 1),
        grid=grid,
        args=args,
        budget=budget.Budget(recorded_bytes=bound),
    )
    return trace_file(request).kernels[0]


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "grid", "args", "bound", "loads"),
    [
        # block (x, y) walks x + 1 steps of 8 reads a warp: 8 classes of 4 blocks; a class's
        # block fills 16 KiB many times over before its class is known
        ("cl_attn", (8, 4, 1), ("1=64",), 1 << 14, 4 * sum(64 * (x + 1) for x in range(8))),
        # x + 1 trips, then max(y, 1): 8 classes, then the 56 blocks in none run in batches
        (
            "cl_causal",
            (24, 3, 1),
            ("1=64",),
            1 << 16,
            sum(8 * ((x + 1) + max(y, 1)) for y in range(3) for x in range(24)),
        ),
        # min(b, 5) trips of one two-way read a warp: 6 classes, the last of 35 blocks (those
        # run beside its block and those it stands for)
        ("cl_min", (40, 1, 1), ("1=5",), 1 << 13, sum(8 * min(b, 5) for b in range(40))),
    ],
)
def test_a_grid_traced_by_class_folds_to_the_unbounded_totals(
    held: list[int],
    kernel: str,
    grid: tuple[int, int, int],
    args: tuple[str, ...],
    bound: int,
    loads: int,
) -> None:
    whole = _by_class(kernel, grid, args, budget.MAX_RECORDED_BYTES)
    assert not held
    folded = _by_class(kernel, grid, args, bound)
    assert len(held) >= 3, held
    assert max(held) <= bound, held
    cov = folded.launch.coverage
    assert cov is not None and cov.mode == "alike" and "classes" in (cov.proof or "")
    assert cov.blocks > cov.run  # classes stood for blocks that did not run
    assert folded.totals["load"].requests == loads  # counted by hand from the kernel
    same_but_the_note(whole, folded)


@needs_nvdisasm
def test_a_block_standing_for_the_grid_folds_to_the_unbounded_counts(held: list[int]) -> None:
    """Blocks proven alike: the first is traced and counted for all 64, its heat map of its
    own 32 warps. Its records fold, and the folds' costs, which know nothing of the report's
    count of warps (decided once the run ends), leave it as it is."""
    hostile = TRACE_DATA.parent / "hostile" / "hostile.sm_90.cubin"

    def traced(bound: int) -> Any:
        small = budget.Budget(recorded_bytes=bound)
        request = TraceRequest(
            hostile, kernel="repeat", block=(1024, 1, 1), grid=(64, 1, 1), args=("n=40",),
            budget=small,
        )  # fmt: skip
        return trace_file(request).kernels[0]

    whole = traced(budget.MAX_RECORDED_BYTES)
    assert not held
    folded = traced(1 << 14)
    assert len(held) >= 3 and max(held) <= 1 << 14, held
    cov = folded.launch.coverage
    assert cov is not None and (cov.mode, cov.blocks, cov.run) == ("alike", 64, 1)
    assert [(a.cost.warps, a.cost.requests) for a in folded.accesses] == [
        (32, 64 * 32 * 40),  # one store a trip, 40 trips a warp
        (32, 64 * 32),
    ]
    same_but_the_note(whole, folded)


@pytest.mark.slow
@needs_nvdisasm
def test_wgmma_records_fold_to_the_unbounded_totals(held: list[int]) -> None:
    # the warp-specialized GEMM: 128 wgmma requests (and stmatrix, TMA), 8 KiB of records
    whole, out = lab.run("ws_gemm_k256")
    assert not held
    folded, out_folded = lab.run("ws_gemm_k256", budget=budget.Budget(recorded_bytes=1 << 13))
    assert len(held) >= 3 and max(held) <= 1 << 13, held
    measured = lab.measured()["ws_gemm_k256"]["per_op"]["gmma"]
    assert lab.per_op(folded)["wgmma"] == (measured["requests"], measured["wavefronts"])
    assert all(r.folded.cost is not None for r in folded.records if r.kind.op == "wgmma")
    assert out_folded == out
    same_but_the_note(whole, folded)


HGMMA = Instruction(0x80, None, "HGMMA", (), (), "k.cu", 9, "HGMMA.64x64x16.F32 R24, gdesc[UR4]")


def test_a_wgmma_whose_own_records_reach_the_bound_keeps_each_warps_cost() -> None:
    """The fold that a wgmma's own request sets off leaves that request's wavefronts with
    it (each warp of the warpgroup its own)."""
    kind = AccessKind("wgmma", 16)

    def coster(rec: InstructionRecords, ranges: Any) -> Any:
        return records_costs(rec, SM90, ranges, warps=None, warps_per_block=4, blocks=1)

    recorder = Recorder(32, 3000, coster)
    tids, warp_ids = np.arange(128), np.arange(4, dtype=np.int64)
    given = [[k % 7 + 1, k % 5 + 2, 3, k % 3 + 4] for k in range(200)]
    for cost in given:
        recorder.record_cost(0, HGMMA, kind, tids, cost, warp_ids)
    assert recorder.folds >= 10
    access = trace_access(recorder.by_index[0], SM90, warps=4, warps_per_block=4, blocks=1)
    assert access.cost.requests == 4 * len(given)
    assert access.cost.wavefronts == sum(map(sum, given))
    assert access.cost.max_wavefronts_per_request == 7


LDS = Instruction(0x40, None, "LDS", (), (), "k.cu", 7, "LDS R1, [R2]")
WARPS = 2  # a block's
#: (block, steps, the blocks of its class besides it: None, a block in no class)
BLOCKS = ((0, 9, 3), (1, 13, 2), (2, 5, None), (3, 11, 0), (4, 7, 4))


def _block(recorder: Recorder, block: int, steps: int) -> None:
    """A block of two warps: ``steps`` loads of 1- to 5-way strides, the first warp's every
    third one tainted, and a warp predicated off every fourth step."""
    recorder.new_batch()
    tids = np.arange(32 * WARPS)
    warp_ids = np.arange(WARPS, dtype=np.int64) + WARPS * block
    for k in range(steps):
        addr = (tids % 32) * 4 * (1 + (block + k) % 5) + 128 * k
        taint = ((tids < 32) & (k % 3 == 0)).astype(np.uint8)
        recorder.record(0, LDS, AccessKind("load", 4), tids, addr, taint, warp_ids)
        if k % 4 == 1:
            recorder.predicated_off(0, LDS, AccessKind("load", 4), 1)


def _classes(bound: int | None) -> Recorder:
    """BLOCKS recorded as a class-traced grid records them: a class's block once, counted
    ``times`` more, records folding at ``bound``."""
    classes = Recorder(32, bound, _coster)
    for block, steps, times in BLOCKS:
        if times is not None:
            classes.open_class()
        _block(classes, block, steps)
        if times is not None:
            classes.close_class(times)
    return classes


def _coster(rec: InstructionRecords, ranges: Any) -> Any:
    return records_costs(rec, SM90, ranges, warps=None, warps_per_block=WARPS, blocks=8)


@pytest.mark.parametrize("bound", [None, 6000, 3000, 1500])
def test_class_blocks_count_again_exactly_whatever_folds_mid_block(bound: int | None) -> None:
    """A class's block's requests count ``times`` more, folded before, during or after it:
    the same totals as running every block of every class (no nvdisasm needed)."""
    every = Recorder(32, None, _coster)
    for block, steps, times in BLOCKS:
        for _ in range(1 + (times or 0)):
            _block(every, block, steps)
    classes = _classes(bound)
    assert (classes.folds >= 5) == (bound is not None), classes.folds  # mid-block too
    want, got = (
        trace_access(r.by_index[0], SM90, warps=16, warps_per_block=WARPS, blocks=8)
        for r in (every, classes)
    )
    assert got.cost.totals == want.cost.totals and want.cost.requests == WARPS * 126
    assert got.cost.lane_accesses == want.cost.lane_accesses
    assert got.cost.max_wavefronts_per_request == want.cost.max_wavefronts_per_request
    assert got.data_dependent_requests == want.data_dependent_requests > 0
    assert got.predicated_off == want.predicated_off > 0


@pytest.mark.parametrize("bound", [None, 1500])
def test_each_distinct_request_goes_to_the_engine_once_per_fold(
    monkeypatch: pytest.MonkeyPatch, bound: int | None
) -> None:
    """The spans of the class's blocks reuse the answers of the pass over every request: the
    engine gets each distinct row once per fold and once at the end, not once per span."""
    asked: list[int] = []
    ask = cost_door.rows_stats

    def counted(addr: Any, *rest: Any) -> Any:
        asked.append(len(addr))
        return ask(addr, *rest)

    monkeypatch.setattr(cost_door, "rows_stats", counted)
    held: list[int] = []  # the distinct rows each fold costs
    fold = InstructionRecords.fold

    def watched(self: InstructionRecords, *args: Any) -> None:
        held.append(self.distinct.n if self.n else 0)
        fold(self, *args)

    monkeypatch.setattr(InstructionRecords, "fold", watched)
    classes = _classes(bound)
    rec = classes.by_index[0]
    trace_access(rec, SM90, warps=16, warps_per_block=WARPS, blocks=8)
    assert len(rec.spans) >= 1 and (len(held) >= 5) == (bound is not None), (rec.spans, held)
    assert sum(asked) == sum(held) + rec.distinct.n > 0
