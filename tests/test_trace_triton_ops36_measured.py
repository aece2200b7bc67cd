"""The ops36 sweep on the GPU (tests/data/triton/ops36, issue 27): the 106 launches of the
sweep's own Triton 3.6 kernels that touch shared memory (reductions, Welford, softmax,
scans, sorts, top-k, histograms, gathers, shape ops, shared atomics, dots on mma.sync and
wgmma, device-side tensor descriptors, attention), JIT-run by PyTorch's Triton 3.6 under
Nsight Compute twice (lab/run.sh, lab/gpu_launches.py). Each entry traced with only its grid
and scalars is compared per op and per SASS instruction with each run. Skipped until the run
is parsed into ops36/gpu/ (README: "The run")."""

from __future__ import annotations

import functools
import json

import pytest

from shmem_cli.trace.result import KernelTrace

from .conftest import TEST_DATA, needs_nvdisasm
from .test_trace_triton_tutorial36 import trace_launch
from .test_trace_triton_tutorial36b import per_op
from .tri_lab import Lab, opcode

DATA = TEST_DATA / "triton" / "ops36" / "gpu"
if not (DATA / "measured.json").exists():
    pytest.skip(
        "tests/data/triton/ops36 is not measured yet (README: lab/run.sh on the GPU, then parse)",
        allow_module_level=True,
    )
LAB = Lab(DATA)
LAUNCHES, RUNS, BY_RUN = LAB.launches, LAB.runs, LAB.by_run
# in `make test` a reduction, a histogram (shared atomics) and an mma.sync dot; the rest slow
FAST = {"red_p_sum", "hist_64", "dot_f16_w4"}
CASES = [
    pytest.param(ident, marks=() if ident in FAST else pytest.mark.slow)
    for ident in sorted(LAUNCHES)
]
#: the most a per-op ld or st counter may exceed its run's own SASS rows (mma36: 1 to 5)
#: whatever the run's arbitration conflicts and cp.async fills (tri_lab.Lab.allowance)
EXCESS = 5


@functools.cache
def traced(ident: str) -> KernelTrace:
    return trace_launch(DATA, LAUNCHES[ident])


def test_every_launch_ran_in_both_runs() -> None:
    assert set(RUNS) == {"run1", "run2"}
    for run, launches in BY_RUN.items():
        assert set(launches) == set(LAUNCHES), run


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("ident", CASES)
def test_each_entry_gives_the_gpus_counts_per_op(ident: str) -> None:
    """Every per-op counter as measured; where a run's per-op ld or st wavefronts exceed the
    sum of its own SASS rows (the hardware's timing, as in mma36), the rows' sum, and the
    excess small."""
    got = per_op(traced(ident))
    for run in RUNS:
        assert got == LAB.expected(run, ident, most=EXCESS), run


def test_the_per_op_excess_is_timing_not_a_rule() -> None:
    """Nsight's per-op ld wavefronts exceed a run's SASS rows only where that run's warps
    contended (arbitration conflicts), its st ones also where its rows hold cp.async fills
    (tri_lab.Lab.allowance); a launch with no excess
    in either run counts the same in both. (H200, 2026-12-05: 5 of 106 launches, 2 to 42
    wavefronts; repeats.json: the same 5 launches and 2 more, 5 runs each.)"""
    for ident in LAUNCHES:
        extra = {run: LAB.excess(run, ident) for run in RUNS}
        for run in RUNS:
            timing = LAB.allowance(run, ident) or {"ld": 0, "st": 0}
            measured = LAB.measured(run, ident)
            for op, rows in LAB.source_sums(run, ident).items():
                assert measured[op][1] == rows or timing[op], (ident, run, op)
        if not any(extra.values()):
            assert LAB.measured("run1", ident) == LAB.measured("run2", ident), ident


def test_repeated_runs_show_the_excess_only_with_contention() -> None:
    """repeats.json (lab/run.sh with RUNS=5 and TRI_ONLY, the launches with an excess and two
    controls): in every run each per-op ld/st figure is at least its rows' sum, an excess
    comes only with arbitration conflicts or cp.async fills in that run, and it stays within
    EXCESS of them; two single-CTA launches hold the same excess, equal to their arbitration
    conflicts, in every run (mm_bT_tf32_w2 2, mm_loop_f16_s1_w16 8): a deterministic
    schedule, still the warps' timing and no access rule."""
    runs = json.loads((DATA / "repeats.json").read_text())["runs"]
    assert len(runs) == 5
    steady = {"mm_bT_tf32_w2": 2, "mm_loop_f16_s1_w16": 8}
    for run in runs:
        for ident, r in run.items():
            ld, st = r["ld"] - r["ld_rows"], r["st"] - r["st_rows"]
            assert min(ld, st) >= 0, (ident, r)
            # an ld excess only with conflicts, an st excess with conflicts or fills
            assert ld == 0 or r["arbitration"], (ident, r)
            assert st == 0 or r["arbitration"] + r["fills"], (ident, r)
            assert ld <= EXCESS + r["arbitration"], (ident, r)
            assert st <= EXCESS + r["arbitration"] + r["fills"], (ident, r)
            if ident in steady:
                assert ld + st == r["arbitration"] == steady[ident], (ident, r)


@needs_nvdisasm
@pytest.mark.parametrize("ident", CASES)
def test_each_instruction_gives_nsight_computes_source_counters(ident: str) -> None:
    # LDGSTS: executions only (the source view counts cp.async as a store of its width, not
    # the per-op wavefronts); wgmma and TMA are compared per op only (docs/trace.md)
    kernel = traced(ident)
    # instructions that never ran have no row on Nsight's source page; the trace lists those
    # that data decided (idle, flagged 'data': sparse_blocks' pipelined loads)
    ran = [a for a in kernel.accesses if a.cost.requests + a.predicated_off]
    got = {
        a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts)
        for a in ran
        if a.op not in ("cp_async", "wgmma", "tma")
    }
    got_cp = {a.pc: a.cost.requests + a.predicated_off for a in ran if a.op == "cp_async"}
    for run in RUNS:
        rows = BY_RUN[run][ident]["instructions"]
        exp = {
            i["pc"]: (i["executed"], i["wavefronts"])
            for i in rows
            if opcode(i["sass"]) not in ("LDGSTS", "HGMMA")
        }
        exp_cp = {i["pc"]: i["executed"] for i in rows if opcode(i["sass"]) == "LDGSTS"}
        assert (got, got_cp) == (exp, exp_cp), run


# the launches whose op_misc the rule of docs/hardware-model.md 9e misses: (the rule's, run1's,
# run2's). Most hold wgmma or TMA (CTA-scope memory barriers that warps run together: 9e,
# timing) or runs that differ; the 86 others are exact in both runs (23 before the rule counted
# shuffles, guarded-off stores and loads and special-register reads, 66 before its barrier
# completions needed a memory-pipe instruction since the previous one and it costed fences,
# 76 before a warp's reads of threadIdx.x after its first cost 1 each)
MISC_OPEN = {
    "attn_causal_bf16_w8": (712, 743, 745),
    "attn_f16_d128_w4": (130, 136, 137),
    "attn_f16_w4": (248, 259, 260),
    "desc_atomic_add": (58, 57, 58),
    "dot_bf16_w8": (26, 25, 25),
    "dot_e4m3_w8_128": (26, 25, 25),
    "dot_e5m2_w4": (14, 14, 13),
    "dot_scaled_e4m3": (24, 21, 21),
    "mm_desc_dev": (268, 260, 260),
    "mm_desc_dev_w8": (130, 127, 126),
    "mm_loop_e4m3_s3_w4": (748, 741, 742),
    "mm_loop_f16_s1_w16": (119, 115, 118),
    "mm_persist": (672, 656, 657),
    "red_loop": (416, 419, 420),
    "red_p_argmax": (652, 657, 660),
    "red_p_argmin": (652, 655, 657),
    "sort_f32_2x2048_w8": (5674, 5674, 5679),
    "sparse_blocks": (68, 67, 68),
    "welford_loop": (362, 366, 362),
    "welford_loop_x16": (1122, 1129, 1124),
}


@needs_nvdisasm
@pytest.mark.parametrize("ident", CASES)
def test_each_entry_gives_the_gpus_op_misc_by_the_rule(ident: str) -> None:
    got = traced(ident).misc.wavefronts
    runs = tuple(BY_RUN[run][ident]["per_op"]["misc"]["wavefronts"] for run in ("run1", "run2"))
    assert (got, *runs) == MISC_OPEN.get(ident, (runs[0], *runs)), ident
