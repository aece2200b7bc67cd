"""A Triton user's cache on Hopper: the project's own kernels run by PyTorch 2.11's Triton 3.6
(JIT, on the H200), whose cache entries were kept (tests/data/triton/jit36): once with
Triton's own ptxas (ELF ABI 7 cubins) and once with CUDA 13's (ABI 8, as PyTorch's Inductor
entries). Each entry traced with only the grid, the named scalars and each host-side
descriptor's shape and strides gives Nsight Compute's counts of that very run."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from shmem_cli.cuda import toolchain
from shmem_cli.trace.pipeline import TraceRequest, arg_texts, trace_file
from shmem_cli.trace.result import KernelTrace

from .conftest import TEST_DATA

DATA = TEST_DATA / "triton" / "jit36"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
RUNS = json.loads((DATA / "measured.json").read_text())["runs"]
MEASURED = {(abi, m["id"]): m for abi, runs in RUNS.items() for m in runs}
# in `make test` both descriptor kinds and a matmul of the ABI 7 cache (PyTorch's Triton
# writes ABI 7) and the matmul of the ABI 8 cache; the rest are marked slow
FAST = {
    *(("abi7", i) for i in ("device_desc", "host_desc", "matmul_f16")),
    ("abi8", "matmul_f16"),
}
CASES = [
    pytest.param(abi, ident, marks=() if (abi, ident) in FAST else pytest.mark.slow)
    for abi, ident in sorted(MEASURED)
]
IDS = [f"{abi}-{ident}" for abi, ident in sorted(MEASURED)]

pytestmark = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


@functools.cache
def traced(abi: str, ident: str) -> KernelTrace:
    L = LAUNCHES[ident]
    args = {**L["args"], **L.get("tensordesc", {})}
    request = TraceRequest(DATA / L[f"entry_{abi}"], grid=tuple(L["grid"]), args=arg_texts(args))
    return trace_file(request).kernels[0]


def per_op(kernel: KernelTrace) -> dict[str, Any]:
    """Nsight Compute's per-op terms (ldmatrix/stmatrix wavefronts count in op_ld/op_st)."""
    t = kernel.totals
    return {
        "ld": (t["load"].requests, t["load"].wavefronts + t["ldmatrix"].wavefronts),
        "st": (t["store"].requests, t["store"].wavefronts + t["stmatrix"].wavefronts),
        "ldsm": t["ldmatrix"].requests,
        "stsm": t["stmatrix"].requests,
        "ldgsts": t["cp_async"].requests,
        "gmma": t["wgmma"].wavefronts,
    }


def nsight_per_op(counters: dict[str, dict[str, int]], ops: tuple[str, ...]) -> dict[str, Any]:
    """Nsight Compute's per-op counters of a measured.json launch, shaped as `per_op` gives
    shmem's: (requests, wavefronts) for loads, stores and atomics, requests for the rest."""
    return {
        op: (
            (counters[op]["requests"], counters[op]["wavefronts"])
            if op in ("ld", "st", "atom")
            else counters[op]["requests"]
        )
        for op in ops
    }


def measured(abi: str, ident: str) -> dict[str, Any]:
    m = MEASURED[(abi, ident)]
    got = nsight_per_op(m["per_op"], ("ld", "st", "ldsm", "stsm", "ldgsts"))
    return got | {"gmma": m["gmma_wavefronts"]}


@pytest.mark.slow
@pytest.mark.parametrize(("abi", "ident"), CASES, ids=IDS)
def test_each_entry_gives_the_h200s_per_op_counts(abi: str, ident: str) -> None:
    # cp.async's wavefronts are the total less the other parts: they moved between the two
    # runs of the same kernel (grouped_b: 513 and 512), so only its requests are compared
    assert per_op(traced(abi, ident)) == measured(abi, ident)


@pytest.mark.slow
@pytest.mark.parametrize(("abi", "ident"), CASES, ids=IDS)
def test_each_instruction_gives_nsight_computes_source_counters(abi: str, ident: str) -> None:
    ncu = {i["pc"]: i for i in MEASURED[(abi, ident)]["instructions"]}
    kernel = traced(abi, ident)
    assert {a.pc for a in kernel.accesses if a.op not in ("wgmma", "tma")} == set(ncu)
    for a in kernel.accesses:
        if a.op in ("wgmma", "cp_async", "tma"):
            continue  # wgmma per op (gmma); the source view's LDGSTS figure: docs/trace.md
        m = ncu[a.pc]
        got = (a.result.requests + a.predicated_off, a.result.wavefronts, a.result.ideal_wavefronts)
        assert got == (m["executed"], m["wavefronts"], m["ideal"]), a.sass


def test_both_runs_are_the_cubin_layouts_they_are_kept_for() -> None:
    for abi, version in (("abi7", 7), ("abi8", 8)):
        for L in LAUNCHES.values():
            cubin = next((DATA / L[f"entry_{abi}"]).glob("*.cubin"))
            assert cubin.read_bytes()[8] == version, cubin
