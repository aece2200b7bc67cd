"""Triton 3.6 dots on mma.sync (tests/data/triton/mma36, issue 27): our own spread of
`tl.dot` variants (fp16, bf16 and tf32 inputs; 16 to 128 tiles; 2, 4 and 8 warps; 1 to 4
stages; masked M/N/K edges; either operand column-major; the accumulator chained through
tl.dot, `allow_tf32`; A changed in registers; two dots in an attention-like kernel), run by
PyTorch 2.11's Triton 3.6 (JIT, ELF ABI 7 cubins) under Nsight Compute twice, to find the
configuration where a held-back mma.sync matmul reads one load wavefront more than its trace.
Each entry traced with only its grid and scalars is compared per op and per SASS instruction
with each run (measured on the H200 on 2026-12-05: README)."""

from __future__ import annotations

import functools
import json

import pytest

from shmem_cli.trace.result import KernelTrace

from .conftest import TEST_DATA, needs_nvdisasm
from .test_trace_triton_tutorial36 import trace_launch
from .test_trace_triton_tutorial36b import per_op
from .tri_lab import Lab, opcode

DATA = TEST_DATA / "triton" / "mma36"
if not (DATA / "measured.json").exists():
    pytest.skip(
        "tests/data/triton/mma36 is not measured yet (README: lab/run.sh on the GPU, then parse)",
        allow_module_level=True,
    )
LAB = Lab(DATA)
LAUNCHES, RUNS, BY_RUN = LAB.launches, LAB.runs, LAB.by_run
# in `make test` one fp16, one tf32 and one two-dot entry; the rest are marked slow
FAST = {"f16_32x32x32_w2_s2", "tf32_32x32x32_w2_s2", "attn_f16_32x32_d64_w2"}
CASES = [
    pytest.param(ident, marks=() if ident in FAST else pytest.mark.slow)
    for ident in sorted(LAUNCHES)
]


@functools.cache
def traced(ident: str) -> KernelTrace:
    return trace_launch(DATA, LAUNCHES[ident])


def test_every_launch_ran_in_both_runs() -> None:
    for run, launches in BY_RUN.items():
        assert set(launches) == set(LAUNCHES), run


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("ident", CASES)
def test_each_entry_gives_the_gpus_counts_per_op(ident: str) -> None:
    """Every per-op counter as measured; where a run's per-op ld or st wavefronts exceed the
    sum of its own SASS rows (6 of the 86 launch-runs, by 1 to 5, not the same in both runs
    of a launch: README), the rows' sum, and the excess small."""
    got = per_op(traced(ident))
    for run in RUNS:
        assert got == LAB.expected(run, ident, most=5), run


def test_the_per_op_excess_is_timing_not_a_rule() -> None:
    """Where the per-op counter holds wavefronts no SASS row has, the two runs of the same
    launch disagree on it, or only one run has it: the hardware's timing, not the access."""

    excess = {(run, ident): LAB.excess(run, ident) for run in RUNS for ident in LAUNCHES}
    uneven = {ident for (run, ident), extra in excess.items() if extra}
    assert uneven  # the lab saw it (6 launch-runs of 4 launches)
    for ident in uneven:
        assert len({excess[run, ident] for run in RUNS}) == 2, ident


def test_sixteen_more_runs_give_the_excess_a_spread() -> None:
    """``repeats.json``: the 43 launches 16 times more (per-op counters only, lab/repeat.sh).
    Against the SASS rows of ``measured.json`` (the same kernels: their hashes are equal),
    the per-op ld and st wavefronts are never below the rows, and every launch that ever
    exceeds them does so by amounts that differ from run to run."""
    data = json.loads((DATA / "repeats.json").read_text())
    ld, st = (
        data["counters"].index(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{o}")
        for o in ("ld", "st")
    )
    spread: dict[str, set[tuple[int, int]]] = {}
    for counts in data["runs"].values():
        assert set(counts) == set(LAUNCHES)
        for ident, row in counts.items():
            rows = LAB.source_sums("run1", ident)
            extra = (row[ld] - rows["ld"], row[st] - rows["st"])
            assert min(extra) >= 0, (ident, extra)
            spread.setdefault(ident, set()).add(extra)
    uneven = {ident for ident, seen in spread.items() if seen != {(0, 0)}}
    assert len(uneven) == 5  # of 43
    assert all(len(spread[ident]) >= 2 for ident in uneven), spread


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("ident", CASES)
def test_each_instruction_gives_nsight_computes_source_counters(ident: str) -> None:
    # LDGSTS: executions only (the source view counts cp.async as a store of its width, not
    # the per-op wavefronts: docs/trace.md)
    kernel = traced(ident)
    got = {
        a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts)
        for a in kernel.accesses
        if a.op != "cp_async"
    }
    got_cp = {
        a.pc: a.cost.requests + a.predicated_off for a in kernel.accesses if a.op == "cp_async"
    }
    for run in RUNS:
        rows = BY_RUN[run][ident]["instructions"]
        exp = {
            i["pc"]: (i["executed"], i["wavefronts"]) for i in rows if opcode(i["sass"]) != "LDGSTS"
        }
        exp_cp = {i["pc"]: i["executed"] for i in rows if opcode(i["sass"]) == "LDGSTS"}
        assert (got, got_cp) == (exp, exp_cp), run


def test_every_launch_ran_mma_sync_not_wgmma() -> None:
    # the lab is about mma.sync: the GPU counted no wgmma instruction in any launch
    for run, launches in BY_RUN.items():
        for ident, m in launches.items():
            assert m["per_op"]["gmma"]["requests"] == 0, (run, ident)
            assert not any("HGMMA" in i["sass"] for i in m["instructions"]), (run, ident)
