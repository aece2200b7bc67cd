"""Issue 29's kernels measured on the H200 (tests/data/trace/frontdoor): a CuTe kernel of the
project's own, a ``__constant__`` table set by the host with cudaMemcpyToSymbol, and a
``Params`` struct whose bytes the host program wrote where it launched the kernel. Each is
traced as a user would (``--const``, ``--params``) and compared per op and per instruction."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.result import KernelTrace

from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm

DATA = TRACE_DATA / "frontdoor"
CUBIN = DATA / "host.sm_90a.cubin"
MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
INPUTS = DATA / "inputs"
# each launch as host.cu made it: the kernel, the block, and what the host program gave
LAUNCHES: dict[str, dict[str, Any]] = {
    "cute_plain": {
        "kernel": "cute_tile<cute::Layout",
        "block": (128, 1, 1),
        "args": (f"0=@{INPUTS / 'cute_in.bin'}",),
    },
    "cute_swizzled": {
        "kernel": "cute_tile<cute::ComposedLayout",
        "block": (128, 1, 1),
        "args": (f"0=@{INPUTS / 'cute_in.bin'}",),
    },
    "const_table": {
        "kernel": "const_table",
        "block": (128, 1, 1),
        "consts": (f"strides=@{INPUTS / 'const_strides.bin'}",),
    },
    **{
        f"params_ld{ld}": {
            "kernel": "params_kernel",
            "block": (32, 32, 1),
            "params_file": f"@{INPUTS / f'params_ld{ld}.bin'}",
        }
        for ld in (32, 33, 34)
    },
}


def trace(path: Path, launch_id: str, **extra: Any) -> KernelTrace:
    spec = LAUNCHES[launch_id]
    request = TraceRequest(
        path,
        kernel=spec["kernel"],
        block=spec["block"],
        args=spec.get("args", ()),
        consts=spec.get("consts", ()),
        params_file=spec.get("params_file"),
        **extra,
    )
    (kernel,) = trace_file(request).kernels
    return kernel


def per_op(kernel: KernelTrace) -> dict[str, tuple[int, int]]:
    t = kernel.totals
    return {
        "ld": (t["load"].requests, t["load"].wavefronts),
        "st": (t["store"].requests, t["store"].wavefronts),
        "atom": (t["atomic"].requests, t["atomic"].wavefronts),
        "ldgsts": (t["cp_async"].requests, t["cp_async"].wavefronts),
    }


def measured(launch_id: str) -> dict[str, tuple[int, int]]:
    m = MEASURED[launch_id]["per_op"]
    return {op: (m[op]["requests"], m[op]["wavefronts"]) for op in ("ld", "st", "atom", "ldgsts")}


@needs_nvdisasm
@pytest.mark.parametrize("launch_id", list(LAUNCHES))
def test_each_launch_is_exact_per_op(launch_id: str) -> None:
    kernel = trace(CUBIN, launch_id)
    assert per_op(kernel) == measured(launch_id)
    assert kernel.launch.unset_constants == ()


@needs_nvdisasm
@pytest.mark.parametrize("launch_id", ["cute_plain", "cute_swizzled", "const_table"])
def test_each_instruction_is_exact(launch_id: str) -> None:
    kernel = trace(CUBIN, launch_id)
    got = {a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts) for a in kernel.accesses}
    rows = [
        i
        for i in MEASURED[launch_id]["instructions"]
        if i["sass"].split()[0].split(".")[0].lstrip("@!P0123456789T ") in ("LDS", "STS")
        or "LDGSTS" in i["sass"]
    ]
    assert rows
    for ins in rows:
        executed, wavefronts = got[ins["pc"]]
        assert executed == ins["executed"], ins
        if "LDGSTS" not in ins["sass"]:  # ncu's per-instruction cp.async figure is a model
            assert wavefronts == ins["wavefronts"], ins


@needs_nvdisasm
def test_the_host_program_s_pointers_are_untouched_memory() -> None:
    kernel = trace(CUBIN, "params_ld34")
    regions = kernel.launch.undescribed
    assert len(regions) == 1 and regions[0].startswith("0x7f")  # the H200 run's own pointers
    assert kernel.launch.undescribed_reads == 32 * 32  # every thread's p.in[...] read
    assert all(a.inexact_requests == 0 for a in kernel.accesses)  # no address used the data


def _cutlass_include() -> Path | None:
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return None
    include = Path(next(iter(spec.submodule_search_locations))) / "source" / "include"
    return include if (include / "cute" / "tensor.hpp").is_file() else None


@needs_nvcc
@pytest.mark.slow
@pytest.mark.skipif(_cutlass_include() is None, reason="needs the nvidia-cutlass headers")
@pytest.mark.parametrize("launch_id", ["cute_plain", "cute_swizzled"])
def test_the_cute_kernel_traces_from_its_cu(launch_id: str) -> None:
    include = _cutlass_include()
    nvcc = (f"-I{include}", "-std=c++17", "--expt-relaxed-constexpr")
    kernel = trace(DATA / "kernels" / "cute_tile.cu", launch_id, nvcc_args=nvcc, nvcc_trusted=True)
    assert per_op(kernel) == measured(launch_id)
    # every row at the kernel's own lines: the copy(...) call and the column read
    lines = {(Path(a.file or "").name, a.line) for a in kernel.accesses if a.cost.requests}
    assert lines == {("cute_tile.cu", 21), ("cute_tile.cu", 28)}
    copies = [a for a in kernel.accesses if a.op == "cp_async"]
    assert all(a.site.inner and a.site.inner[0].endswith("copy_sm80.hpp") for a in copies)
