"""Issue 29's kernels measured on the H200 (tests/data/trace/frontdoor): a tile kernel
written as a user of a header library (the project's own, kernels/include/tile: computed
includes, inlined copy and swizzle functions), a ``__constant__`` table set by the host with
cudaMemcpyToSymbol, and a ``Params`` struct whose bytes the host program wrote where it
launched the kernel. Each is traced as a user would (``--const``, ``--params``, the tile
kernel from its cubin and from its ``.cu``) and compared per op and per instruction."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.result import KernelTrace

from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm

DATA = TRACE_DATA / "frontdoor"
CUBIN = DATA / "host.sm_90a.cubin"
MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
INPUTS = DATA / "inputs"
# each launch as host.cu made it: the kernel, the block, and what the host program gave
LAUNCHES: dict[str, dict[str, Any]] = {
    "tile_plain": {
        "kernel": "tile_columns<tile::RowMajor",
        "block": (128, 1, 1),
        "args": (f"0=@{INPUTS / 'tile_in.bin'}",),
    },
    "tile_swizzled": {
        "kernel": "tile_columns<tile::Swizzled",
        "block": (128, 1, 1),
        "args": (f"0=@{INPUTS / 'tile_in.bin'}",),
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
@pytest.mark.parametrize("launch_id", ["tile_plain", "tile_swizzled", "const_table"])
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


KERNELS = DATA / "kernels"
TILE_CU = KERNELS / "tile_columns.cu"
LIBRARY = KERNELS / "include"  # the header library, inside this repository


def test_every_launch_counted_the_same_twice() -> None:
    assert all(m["second_run_agrees"] for m in MEASURED.values())


def _rows_at_the_user_s_lines(kernel: KernelTrace, library: Path) -> None:
    """Every row at the kernel's own lines, the tile::copy(...) call and the column read;
    the cp.async rows keep the library's line as detail."""
    lines = {(Path(a.file or "").name, a.line) for a in kernel.accesses if a.cost.requests}
    assert lines == {("tile_columns.cu", 16), ("tile_columns.cu", 23)}
    copies = [a for a in kernel.accesses if a.op == "cp_async"]
    assert copies and all(a.site.inner for a in copies)
    assert all(a.site.inner[0] == str(library / "tile" / "copy.hpp") for a in copies)


@needs_nvcc
@pytest.mark.parametrize(
    "launch_id", ["tile_swizzled", pytest.param("tile_plain", marks=pytest.mark.slow)]
)
@pytest.mark.slow
def test_the_tile_kernel_traces_from_its_cu(launch_id: str) -> None:
    """As a user types it (``--nvcc-arg=-I.../include``): what the library's computed
    includes (``#include TILE_HEADER(copy.hpp)``) read is checked from the compile's own
    list, and the rows stand at the user's lines."""
    nvcc = (f"-I{LIBRARY}", "-std=c++17")
    kernel = trace(TILE_CU, launch_id, nvcc_args=nvcc, nvcc_trusted=True)
    assert per_op(kernel) == measured(launch_id)
    _rows_at_the_user_s_lines(kernel, LIBRARY)


@pytest.mark.slow
@needs_nvcc
def test_a_spec_may_name_the_library_inside_the_tree() -> None:
    """A spec's kernel.nvcc (not trusted) may name an include folder inside the repository:
    its headers are then the user's own sources, so the copy rows stand at the library's
    line, the innermost of the user's own."""
    kernel = trace(TILE_CU, "tile_swizzled", nvcc_args=(f"-I{LIBRARY}", "-std=c++17"))
    assert per_op(kernel) == measured("tile_swizzled")
    lines = {(Path(a.file or "").name, a.line) for a in kernel.accesses if a.cost.requests}
    assert lines == {("copy.hpp", 10), ("tile_columns.cu", 23)}


@pytest.mark.slow
@needs_nvcc
def test_a_library_outside_the_tree_is_accepted_only_where_the_user_names_it(
    tmp_path: Path,
) -> None:
    """The library copied outside the repository: named with --nvcc-arg=-I... on the user's
    own command line (trusted) it is read; named by a spec's kernel.nvcc it is refused."""
    outside = tmp_path / "include"
    shutil.copytree(LIBRARY, outside)
    nvcc = (f"-I{outside}", "-std=c++17")
    kernel = trace(TILE_CU, "tile_swizzled", nvcc_args=nvcc, nvcc_trusted=True)
    assert per_op(kernel) == measured("tile_swizzled")
    _rows_at_the_user_s_lines(kernel, outside)
    with pytest.raises(ShmemError, match="outside the kernel's source tree"):
        trace(TILE_CU, "tile_swizzled", nvcc_args=nvcc)


def test_no_upstream_headers_are_included() -> None:
    """The kernels include only the toolkit's headers, the C++ library's and their own."""
    own = {p.name for p in KERNELS.glob("*.cu")} | {
        f"tile/{p.name}" for p in (LIBRARY / "tile").glob("*.hpp")
    }
    toolkit = {"cuda_fp16.h", "cstdio", "cstdlib", "vector"}
    for path in [*KERNELS.glob("*.cu"), *(LIBRARY / "tile").glob("*.hpp")]:
        for line in path.read_text().splitlines():
            if line.startswith("#include"):
                name = line.split(None, 1)[1].strip('<>" ')
                if name.startswith("TILE_HEADER("):
                    name = "tile/" + name.removeprefix("TILE_HEADER(").rstrip(")")
                assert name in own | toolkit, (path.name, line)
