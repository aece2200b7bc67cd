"""Synthesized swizzles on compiled kernels (issue 31): tests/data/trace/synth.

Each kernel of ``kernels/swizzled.cu`` was compiled unswizzled and with the CuTe
``Swizzle<B,M,S>`` (on byte offsets) that ``shmem trace --suggest`` synthesizes for it;
both builds were measured on the H200 (measured.json). From the unswizzled trace alone
the suggestion must name that very map first among the zero-byte fixes, reach the
ideal, and predict the counts that the swizzled build traces to and the H200 counted.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.trace.fixes.layout_search import ArraySuggestions
from shmem_cli.trace.fixes.suggest_kernel import trace_with_suggestions
from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.result import KernelTrace

from .conftest import TEST_DATA, needs_nvdisasm

SYNTH = TEST_DATA / "trace" / "synth"
# kernel: block, the CuTe form (bits, base, shift) built into its swizzled cubin
KERNELS: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "transpose_f32": ((32, 8, 1), (5, 2, 5)),
    "transpose_f64": ((32, 8, 1), (4, 3, 5)),
    "half_columns": ((64, 4, 1), (5, 2, 5)),
    "uint4_rows": ((64, 1, 1), (3, 4, 3)),
    "float2_columns": ((32, 4, 1), (4, 3, 5)),
    "ldmatrix_tile": ((128, 1, 1), (3, 4, 3)),
}
TMA_ARG = "0=tensormap:dtype=u32,dims=32x64,box=32x64"


def _cubin(kernel: str, form: tuple[int, int, int] | None) -> Path:
    name = "none" if form is None else "s" + "".join(map(str, form))
    return SYNTH / f"swizzled.{name}.sm_90.cubin"


@functools.cache
def suggested(kernel: str) -> tuple[KernelTrace, ArraySuggestions]:
    block, _ = KERNELS[kernel]
    traced = trace_with_suggestions(TraceRequest(_cubin(kernel, None), kernel=kernel, block=block))
    k = traced.kernels[0]
    assert k.suggestions is not None
    (tile,) = k.suggestions
    return k, tile


@functools.cache
def applied(kernel: str) -> KernelTrace:
    block, form = KERNELS[kernel]
    return trace_file(TraceRequest(_cubin(kernel, form), kernel=kernel, block=block)).kernels[0]


def per_op(k: KernelTrace) -> dict[str, tuple[int, int]]:
    return {op: (t.requests, t.wavefronts) for op, t in k.totals.items() if t.requests}


@needs_nvdisasm
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_the_synthesized_swizzle_is_offered_first_and_predicts_the_swizzled_build(
    kernel: str,
) -> None:
    _, form = KERNELS[kernel]
    _, tile = suggested(kernel)
    free = [s for s in tile.suggestions if s.extra_bytes == 0]
    first = free[0]
    assert first.change.swizzle is not None
    assert first.change.swizzle.cute_form() == form
    assert first.synthesis is not None and first.synthesis.reaches_bound
    predicted = {op: v for op, v in first.predicted.items() if v[0]}
    assert predicted == per_op(applied(kernel))
    by_pc = {a.pc: a for a in applied(kernel).accesses}
    assert all(not a.result.excess_wavefronts for a in by_pc.values())


def _measured() -> dict[str, dict[str, Any]]:
    path = SYNTH / "measured.json"
    return {x["id"]: x for x in json.loads(path.read_text())["launches"]}


@needs_nvdisasm
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("variant", ["none", "synthesized"])
def test_both_builds_trace_as_the_h200_measured_them(kernel: str, variant: str) -> None:
    """Per SASS instruction: executions and wavefronts as Nsight Compute's source counters
    (twice each, the same both times)."""
    _, form = KERNELS[kernel]
    name = "none" if variant == "none" else "s" + "".join(map(str, form))
    traced = suggested(kernel)[0] if variant == "none" else applied(kernel)
    by_pc = {a.pc: a for a in traced.accesses}
    for rep in ("", "_again"):
        launch = _measured()[f"{kernel}_{name}{rep}"]
        for ins in launch["instructions"]:
            a = by_pc.get(ins["pc"])  # an instruction no warp reached has no row
            got = (
                (0, 0) if a is None else (a.result.requests + a.predicated_off, a.result.wavefronts)
            )
            assert got == (ins["executed"], ins["wavefronts"]), (rep, ins["sass"])


@needs_nvdisasm
def test_the_uint4_formula_is_for_uint4_elements() -> None:
    """The 128B map on a uint4 index: index bits 3-5 into 0-2, never the float formula."""
    _, tile = suggested("uint4_rows")
    text = tile.suggestions[0].fix
    assert "uint4 element index" in text and "i ^ ((i >> 3) & 0x7)" in text
    assert "0x1c" not in text


@needs_nvdisasm
def test_a_tile_that_tma_fills_gets_a_tma_mode_and_no_pad() -> None:
    request = TraceRequest(
        SYNTH / "tma_tile.none.sm_90a.cubin", kernel="tma_rows", block=(64, 1, 1), args=(TMA_ARG,)
    )
    k = trace_with_suggestions(request).kernels[0]
    assert k.suggestions is not None
    (tile,) = k.suggestions
    assert tile.tma == 0  # filled by a map with no swizzle
    assert {s.change.kind for s in tile.suggestions} == {"swizzle"}  # no pad: TMA lands densely
    first = tile.suggestions[0]
    assert first.change.swizzle is not None and first.change.swizzle.label == "128B"
    assert "TMA" in first.fix and "i ^ ((i >> 3) & 0x7)" in first.fix
    swizzled = TraceRequest(
        SYNTH / "tma_tile.s343.sm_90a.cubin",
        kernel="tma_rows",
        block=(64, 1, 1),
        args=(TMA_ARG + ",swizzle=128B",),
    )
    assert per_op(trace_file(swizzled).kernels[0]) == {
        op: v for op, v in first.predicted.items() if v[0]
    }
