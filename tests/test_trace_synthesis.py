"""Synthesized swizzles on compiled kernels (issue 31): tests/data/trace/synth.

Each kernel of ``kernels/swizzled.cu`` was compiled unswizzled and with the CuTe
``Swizzle<B,M,S>`` (on byte offsets) that ``shmem trace --suggest`` synthesizes for it;
both builds were measured on the H200 (measured.json). From the unswizzled trace alone
the suggestion must name that very map first among the zero-byte fixes, reach the
ideal, and predict the counts that the swizzled build traces to and the H200 counted.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shmem_cli.analysis.synthesis import ArrayAccess, synthesize
from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.swizzle import Swizzle
from shmem_cli.trace.fixes.arrays import SharedArray, array_of
from shmem_cli.trace.fixes.layout_search import ArraySuggestions
from shmem_cli.trace.fixes.suggest_kernel import trace_with_suggestions
from shmem_cli.trace.fixes.synthesized import synthesize_array
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
@pytest.mark.parametrize(
    "kernel",
    # a 2-byte and an ldmatrix tile in `make test`; the wider elements and transposes slow
    [k if k in ("half_columns", "ldmatrix_tile") else pytest.param(k, marks=pytest.mark.slow)
     for k in sorted(KERNELS)],
)  # fmt: skip
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --- Triton's choice (tests/data/triton) -----------------------------------------------

TRITON = TEST_DATA / "triton"
_ENCODING = re.compile(
    r"^(#shared\w*) = #ttg\.swizzled_shared<\{vec = (\d+), perPhase = (\d+), maxPhase = (\d+), "
    r"order = \[1, 0\]\}>",
    re.M,
)
_ALLOC = re.compile(r"ttg\.local_alloc : \(\) -> !ttg\.memdesc<([0-9x]+)x(f16|bf16|f32), (#\w+),")
ELEMENT = {"f16": 2, "bf16": 2, "f32": 4}


def _triton_buffers(entry: Path) -> list[tuple[SharedArray, Swizzle]]:
    """Each buffer Triton allocates (one after the other, as its allocator placed these) and
    the byte map of its swizzled_shared encoding, from Triton's own parameters: the column's
    vec-group bits XOR-ed with the row bits perPhase up (written out here bit by bit)."""
    ttgir = next(entry.glob("*.ttgir")).read_text()
    encodings = {m[1]: (int(m[2]), int(m[3]), int(m[4])) for m in _ENCODING.finditer(ttgir)}
    out, offset = [], 0
    for dims, ty, enc in _ALLOC.findall(ttgir):
        shape = [int(d) for d in dims.split("x")]
        esize, cols = ELEMENT[ty], shape[-1]
        vec, per, most = encodings[enc]
        terms: dict[int, int] = {}
        for k in range(most.bit_length() - 1):  # phase bit k: row bit (log2 per + k)
            row_bit = cols.bit_length() - 1 + per.bit_length() - 1 + k
            col_bit = vec.bit_length() - 1 + k
            byte = esize.bit_length() - 1
            terms[row_bit + byte] = terms.get(row_bit + byte, 0) | 1 << (col_bit + byte)
        size = esize
        for d in shape:
            size *= d
        out.append(
            (SharedArray(f"buf{len(out)}", "", offset, size, 128), Swizzle.from_terms(terms))
        )
        offset += size
    return out


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("launch_id", ["matmul_f16", "matmul_bf16", "matmul_tf32"])
def test_synthesis_from_the_unswizzled_buffers_is_as_good_as_tritons_choice(launch_id: str) -> None:
    """Triton chose each buffer's swizzled_shared layout; with that layout undone (an XOR map
    is its own inverse), the synthesis must find a map as cheap as Triton's, and both reach
    the ideal."""
    doc = json.loads((TRITON / "launches.json").read_text())
    launch = next(x for x in doc["launches"] if x["id"] == launch_id)
    entry = TRITON / launch["entry"]
    args = tuple(f"{k}={v}" for k, v in launch["args"].items())
    kernel = trace_file(TraceRequest(entry, grid=tuple(launch["grid"]), args=args)).kernels[0]
    buffers = _triton_buffers(entry)
    arrays = [a for a, _ in buffers]
    for array, triton in buffers:
        recs = [r for r in kernel.records if array_of(r, arrays) is array]
        if not recs:
            continue
        as_chosen = synthesize_array(recs, array, SM90)
        assert as_chosen is not None
        accesses = []
        for rec in recs:
            batch = rec.batch(SM90)
            logical = triton.apply(np.where(batch.active, batch.addr - array.offset, 0))
            accesses.append(ArrayAccess(rec.kind, dataclasses.replace(batch, addr=logical)))
        fresh = synthesize(accesses, array.size, SM90, base=array.offset)
        assert as_chosen.current == as_chosen.bound  # Triton's layout: at the ideal
        assert fresh.wavefronts == as_chosen.current and fresh.reaches_bound, array.name
