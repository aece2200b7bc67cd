"""Tutorial-shaped Triton matmuls on mma.sync (tests/data/triton/tutorial36): the project's
own kernel in the form of Triton's matmul tutorial (grouped program order, pointer hints, a
masked K tail, an optional leaky-ReLU epilogue; fp16 and tf32 dots; 2 or 4 warps, 3 to 5
stages), run by PyTorch 2.11's Triton 3.6 with its own ptxas (ELF ABI 7 cubins, as a PyTorch
user's cache holds them) on the H200 twice under Nsight Compute. Each entry is traced with
only its grid and the scalars Triton kept, as a user gives them."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.pipeline import TraceRequest, arg_texts, trace_file
from shmem_cli.trace.result import KernelTrace

from .conftest import TEST_DATA, needs_nvdisasm
from .test_trace_triton_jit36 import nsight_per_op
from .test_trace_triton_jit36 import per_op as jit36_per_op

DATA = TEST_DATA / "triton" / "tutorial36"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
RUNS = json.loads((DATA / "measured.json").read_text())["runs"]
BY_RUN = {run: {m["id"]: m for m in launches} for run, launches in RUNS.items()}


def trace_launch(data: Path, launch: dict[str, Any]) -> KernelTrace:
    """A launch of a measured cache folder traced as a user would: its entry, with only the
    program grid and the scalars."""
    grid = (*launch["grid"], 1, 1, 1)[:3]
    request = TraceRequest(data / launch["entry"], grid=grid, args=arg_texts(launch["args"]))
    return trace_file(request).kernels[0]


@functools.cache
def traced(ident: str) -> KernelTrace:
    return trace_launch(DATA, LAUNCHES[ident])


def per_op(kernel: KernelTrace) -> dict[str, Any]:
    """Nsight Compute's per-op terms these runs collected (tests/test_trace_triton_jit36.py)."""
    return {k: v for k, v in jit36_per_op(kernel).items() if k in ("ld", "st", "ldsm", "ldgsts")}


def measured(run: str, ident: str) -> dict[str, Any]:
    return nsight_per_op(BY_RUN[run][ident]["per_op"], ("ld", "st", "ldsm", "ldgsts"))


# two entries in `make test` (tiles of 16 rows, tf32); the fused activation, fp16
# accumulators, K not a multiple of the tile and the other tile shapes and stages are slow
FAST = {"t_16x64_w4", "t_tf32_w2"}
CASES = [
    pytest.param(ident, marks=() if ident in FAST else pytest.mark.slow)
    for ident in sorted(LAUNCHES)
]


@needs_nvdisasm
@pytest.mark.parametrize("ident", CASES)
def test_each_entry_gives_the_h200s_per_op_counts(ident: str) -> None:
    first, second = measured("run1", ident), measured("run2", ident)
    got = per_op(traced(ident))
    if first == second:
        assert got == first
    else:
        # the whole-launch counter read 3 store wavefronts more in one run of
        # t_64x32_s3_k200 (1,923 and 1,920) while every instruction's source counter agreed
        # in both: the trace gives the per-instruction sum, the run that agrees with it
        assert got in (first, second)


@needs_nvdisasm
@pytest.mark.parametrize("ident", CASES)
def test_each_instruction_gives_nsight_computes_source_counters(ident: str) -> None:
    kernel = traced(ident)
    got = {
        a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts)
        for a in kernel.accesses
        if a.op != "cp_async"  # the source view's LDGSTS figure: docs/trace.md
    }
    for run in RUNS:
        exp = {
            i["pc"]: (i["executed"], i["wavefronts"])
            for i in BY_RUN[run][ident]["instructions"]
            if not i["sass"].split()[1 if i["sass"].startswith("@") else 0].startswith("LDGSTS")
        }
        assert got == exp, run


@needs_nvdisasm
def test_an_argument_triton_compiled_in_is_taken_as_called_and_another_value_said_so() -> None:
    L = LAUNCHES["t_32x64_s5_64"]
    # stride_ak (sak) was 1 at the call: Triton compiled it in; given as called it changes
    # nothing (a user passes every scalar of the Python call)
    entry, grid = DATA / L["entry"], (2, 1, 1)
    plain = trace_file(TraceRequest(entry, grid=grid, args=arg_texts(L["args"])))
    called = trace_file(TraceRequest(entry, grid=grid, args=arg_texts({**L["args"], "sak": "1"})))
    assert called.kernels[0].totals == plain.kernels[0].totals
    assert called.kernels[0].launch.arguments == plain.kernels[0].launch.arguments
    with pytest.raises(ShmemError, match="1 or None at the call into the kernel") as err:
        trace_file(TraceRequest(entry, grid=grid, args=arg_texts({**L["args"], "sak": "2"})))
    assert "--arg sak: the compiled kernel has no parameter of that name" in str(err.value)
