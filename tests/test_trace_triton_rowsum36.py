"""A Triton 3.6 dot on mma.sync whose row sums are reduced across warps through shared
memory (tests/data/triton/rowsum36): Triton predicates that reduction's stores and loads
(``@P0 STS``, ``@!P1 LDS``), and in some warps no lane has its predicate on. Run by
PyTorch 2.11's Triton 3.6 (JIT, ELF ABI 7 cubins) on the H200 twice under Nsight Compute;
each entry traced with only its grid and scalars and compared per op and per SASS
instruction, the warps with no lane on counted as executions without a request or a
wavefront, as the H200 counts them."""

from __future__ import annotations

import json

import pytest

from .conftest import TEST_DATA, needs_nvdisasm
from .test_trace_triton_tutorial36 import trace_launch
from .test_trace_triton_tutorial36b import measured_per_op, per_op

DATA = TEST_DATA / "triton" / "rowsum36"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
RUNS = json.loads((DATA / "measured.json").read_text())["runs"]
BY_RUN = {run: {m["id"]: m for m in launches} for run, launches in RUNS.items()}


def measured_here(run: str, ident: str) -> dict[str, object]:
    """A run's per-op counters shaped as `per_op` gives the trace's."""
    return measured_per_op(BY_RUN[run][ident]["per_op"])


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("ident", sorted(LAUNCHES))
def test_each_entry_gives_the_h200s_counts_per_op_and_per_instruction(ident: str) -> None:
    kernel = trace_launch(DATA, LAUNCHES[ident])
    got = {a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts) for a in kernel.accesses}
    for run in RUNS:
        assert per_op(kernel) == measured_here(run, ident), run
        exp = {
            i["pc"]: (i["executed"], i["wavefronts"]) for i in BY_RUN[run][ident]["instructions"]
        }
        assert got == exp, run


@needs_nvdisasm
def test_a_warp_with_no_lane_on_is_an_execution_without_a_request() -> None:
    # rowsum_32x32x32_w4: the reduction's guarded load runs in one of the four warps
    kernel = trace_launch(DATA, LAUNCHES["rowsum_32x32x32_w4"])
    rows = {i["pc"]: i for i in BY_RUN["run1"]["rowsum_32x32x32_w4"]["instructions"]}
    guarded = [a for a in kernel.accesses if a.sass.startswith("@") and a.predicated_off]
    assert guarded
    for a in guarded:
        assert rows[a.pc]["executed"] == a.cost.requests + a.predicated_off
        assert rows[a.pc]["wavefronts"] == a.cost.wavefronts
