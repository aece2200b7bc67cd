"""Triton 3.6 dots on mma.sync (tests/data/triton/mma36, issue 27): our own spread of
`tl.dot` variants (fp16, bf16 and tf32 inputs; 16 to 128 tiles; 2, 4 and 8 warps; 1 to 4
stages; masked M/N/K edges; either operand column-major; the accumulator chained through
tl.dot, `allow_tf32`; A changed in registers; two dots in an attention-like kernel), run by
PyTorch 2.11's Triton 3.6 (JIT, ELF ABI 7 cubins) under Nsight Compute twice, to find the
configuration where a held-back mma.sync matmul reads one load wavefront more than its trace.
Each entry traced with only its grid and scalars is compared per op and per SASS instruction
with each run. Until the lab has run (lab/run.sh, then parse: README), this file skips."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from shmem_cli.trace.result import KernelTrace

from .conftest import TEST_DATA, needs_nvdisasm
from .test_trace_triton_tutorial36 import trace_launch
from .test_trace_triton_tutorial36b import measured_per_op, per_op

DATA = TEST_DATA / "triton" / "mma36"
if not (DATA / "measured.json").exists():
    pytest.skip(
        "tests/data/triton/mma36 is not measured yet (README: lab/run.sh on the GPU, then parse)",
        allow_module_level=True,
    )
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
RUNS = json.loads((DATA / "measured.json").read_text())["runs"]
BY_RUN = {run: {m["id"]: m for m in launches} for run, launches in RUNS.items()}
# in `make test` one fp16, one tf32 and one two-dot entry; the rest are marked slow
FAST = {"f16_32x32x32_w2_s2", "tf32_32x32x32_w2_s2", "attn_f16_32x32_d64_w2"}
CASES = [
    pytest.param(ident, marks=() if ident in FAST else pytest.mark.slow)
    for ident in sorted(LAUNCHES)
]


@functools.cache
def traced(ident: str) -> KernelTrace:
    return trace_launch(DATA, LAUNCHES[ident])


def measured(run: str, ident: str) -> dict[str, Any]:
    """A run's per-op counters shaped as `per_op` gives the trace's."""
    return measured_per_op(BY_RUN[run][ident]["per_op"])


def test_every_launch_ran_in_both_runs() -> None:
    for run, launches in BY_RUN.items():
        assert set(launches) == set(LAUNCHES), run


@needs_nvdisasm
@pytest.mark.parametrize("ident", CASES)
def test_each_entry_gives_the_gpus_counts_per_op(ident: str) -> None:
    got = per_op(traced(ident))
    for run in RUNS:
        assert got == measured(run, ident), run


def _opcode(sass: str) -> str:
    return sass.split()[1 if sass.startswith("@") else 0].split(".")[0]


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
            i["pc"]: (i["executed"], i["wavefronts"])
            for i in rows
            if _opcode(i["sass"]) != "LDGSTS"
        }
        exp_cp = {i["pc"]: i["executed"] for i in rows if _opcode(i["sass"]) == "LDGSTS"}
        assert (got, got_cp) == (exp, exp_cp), run


def test_every_launch_ran_mma_sync_not_wgmma() -> None:
    # the lab is about mma.sync: the GPU counted no wgmma instruction in any launch
    for run, launches in BY_RUN.items():
        for ident, m in launches.items():
            assert m["per_op"]["gmma"]["requests"] == 0, (run, ident)
            assert not any("HGMMA" in i["sass"] for i in m["instructions"]), (run, ident)
