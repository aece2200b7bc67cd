"""ptxas's warnings and advisories of a ``.cu`` build that succeeded reach the report (a
register spill, wgmma serialized): ``ptxas:`` lines in the text, ``compiler_warnings`` in the
JSON, per kernel, each once; kept with a cached build; nvcc's own words (an architecture's
deprecation) and ``-v``'s statistics never shown. The kernels are our own
(tests/data/trace/ptxas_warnings/); the ptxas lines below are CUDA 13.0's for them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.build import ptxas_warnings
from shmem_cli.cuda.build_cache import Cached, lookup, open_cache, store
from shmem_cli.cuda.nvcc_messages import MAX_KERNEL_WARNINGS, kernel_warnings

from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm

KERNELS = TRACE_DATA / "ptxas_warnings"
SPILL = (
    "ptxas warning : Registers are spilled to local memory in function '_Z6spillsPfi', "
    "1112 bytes spill stores, 1196 bytes spill loads"
)
SERIALIZED = [
    "ptxas info    : (C7519) warpgroup.arrive is injected in around line 95 by compiler to "
    "allow use of registers in GMMA in function '_Z10serializedPfi'",
    "ptxas info    : (C7517) warpgroup.wait is injected in around line 93 by compiler to allow "
    "use of registers defined by GMMA in function '_Z10serializedPfi'",
    "ptxas info    : (C7517) warpgroup.wait is injected in around line 98 by compiler to allow "
    "use of registers defined by GMMA in function '_Z10serializedPfi'",
    "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are "
    "serialized due to insufficient register resources for the wgmma pipeline in the function "
    "'_Z10serializedPfi'",
]
NOISE = [  # nvcc's own and -Xptxas -v's: never shown
    "nvcc warning : The 'compute_35', 'compute_37', 'sm_35', 'sm_37' architectures are "
    "deprecated, and may be removed in a future release (Use -Wno-deprecated-gpu-targets to "
    "suppress warning).",
    "ptxas info    : 0 bytes gmem",
    "ptxas info    : Compiling entry function '_Z6spillsPfi' for 'sm_90'",
    "    1088 bytes stack frame, 1112 bytes spill stores, 1196 bytes spill loads",
    "ptxas info    : Used 32 registers, used 1 barriers, 1088 bytes cumulative stack size",
]


def test_only_ptxas_warnings_and_coded_advisories_are_kept() -> None:
    said = "\n".join([NOISE[0], SPILL, *NOISE[1:], *SERIALIZED, SPILL]) + "\n"
    assert ptxas_warnings(said) == (SPILL, *SERIALIZED)  # each once, in ptxas's order


def test_each_kernel_gets_its_own_each_distinct_one_once() -> None:
    said = (SPILL, *SERIALIZED)
    kernels = ("_Z6spillsPfi", "_Z10serializedPfi", "_Z5quietPf")
    assert kernel_warnings(said, "_Z6spillsPfi", kernels) == (
        "ptxas: Registers are spilled to local memory, 1112 bytes spill stores, "
        "1196 bytes spill loads",
    )
    assert kernel_warnings(said, "_Z10serializedPfi", kernels) == (
        "ptxas: (C7519) warpgroup.arrive is injected by compiler to allow use of registers in GMMA",
        "ptxas: (C7517) warpgroup.wait is injected by compiler to allow use of registers "
        "defined by GMMA (2 places)",
        "ptxas: (C7511) Potential Performance Loss: wgmma.mma_async instructions are "
        "serialized due to insufficient register resources for the wgmma pipeline",
    )
    assert kernel_warnings(said, "_Z5quietPf", kernels) == ()


def test_a_warning_naming_no_kernel_is_every_kernels_and_many_are_cut() -> None:
    ptx = "ptxas /tmp/tmpxft_0001_k.ptx, line 26; warning : Rounding modifier required"
    assert kernel_warnings([ptx], "_Z1kv", ["_Z1kv", "_Z1jv"]) == (
        "ptxas: Rounding modifier required",
    )
    many = [f"ptxas warning : thing {n} in function '_Z1kv'" for n in range(30)]
    got = kernel_warnings(many, "_Z1kv")
    assert len(got) == MAX_KERNEL_WARNINGS
    assert got[0] == "ptxas: thing 0" and got[-1] == "ptxas: ... and 21 more warnings"
    long = kernel_warnings(["ptxas warning : " + "x" * 5000], "_Z1kv")
    assert len(long) == 1 and len(long[0]) == len("ptxas: ") + 300


def test_a_cached_build_keeps_its_warnings(tmp_path: Path) -> None:
    cache = open_cache(tmp_path / "cache")
    cubin = tmp_path / "kernel.cubin"
    cubin.write_bytes(b"\x7fELF cubin")
    made = Cached(cubin, "sm_90", None, (), "", (SPILL,))
    assert store(cache, "a" * 64, made, started_ns=1 << 62)
    got = lookup(cache, "a" * 64, tmp_path / "out", lambda _: True)
    assert got is not None and got.warnings == (SPILL,)


def _shmem(*words: str) -> str:
    res = CliRunner().invoke(main, list(words))
    assert res.exit_code == 0, res.output
    return res.output


def _kernels(text: str) -> dict[str, dict[str, Any]]:
    doc = json.loads(text)
    return {k["mangled"]: k for f in doc["files"] for k in f["kernels"]}


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_a_spilling_kernel_says_so_fresh_and_cached(tmp_path: Path) -> None:
    source = tmp_path / "spills.cu"
    shutil.copy(KERNELS / "spills.cu", source)
    cache = tmp_path / "cache"
    words = [
        "trace", str(source), "-k", "spills", "-b", "256", "--arg", "n=2",
        "--nvcc-arg=-maxrregcount=32", "--build-cache", str(cache),
    ]  # fmt: skip
    fresh = _kernels(_shmem(*words, "--format", "json"))["_Z6spillsPfi"]
    spilled = fresh["compiler_warnings"]
    assert fresh["build_cached"] is False and len(spilled) == 1
    assert spilled[0].startswith("ptxas: Registers are spilled to local memory, ")
    assert spilled[0].endswith(" bytes spill loads") and "_Z6" not in spilled[0]
    text = _shmem(*words, "--no-tables")  # from the cache now
    assert "build: cached" in text and text.count(spilled[0] + "\n") == 1
    cached = _kernels(_shmem(*words, "--format", "json"))["_Z6spillsPfi"]
    assert cached["build_cached"] is True and cached["compiler_warnings"] == spilled
    other = ["trace", str(source), "-k", "quiet", "-b", "256", "--nvcc-arg=-maxrregcount=32"]
    quiet = _kernels(_shmem(*other, "--format", "json"))["_Z5quietPf"]
    assert quiet["compiler_warnings"] == []  # the spill is the other kernel's


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_serialized_wgmma_is_said(tmp_path: Path) -> None:
    source = tmp_path / "serialized.cu"
    shutil.copy(KERNELS / "serialized.cu", source)
    words = ["trace", str(source), "-b", "128", "--arg", "n=2"]
    said = _kernels(_shmem(*words, "--format", "json"))["_Z10serializedPfi"]["compiler_warnings"]
    assert [w.split(")")[0] for w in said] == ["ptxas: (C7519", "ptxas: (C7517", "ptxas: (C7511"]
    assert said[2].startswith("ptxas: (C7511) Potential Performance Loss: wgmma.mma_async")
    text = _shmem(*words, "--no-tables")
    assert all(text.count(w + "\n") == 1 for w in said)


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_a_compiled_sweep_says_each_warning_once(tmp_path: Path) -> None:
    source = tmp_path / "spills.cu"
    shutil.copy(KERNELS / "spills.cu", source)
    words = [
        "sweep", str(source), "--define", "UNUSED=0,1", "-k", "spills", "-b", "256",
        "--arg", "n=2", "--nvcc-arg=-maxrregcount=32",
    ]  # fmt: skip
    doc = json.loads(_shmem(*words, "-f", "json"))
    said = [v["compiler_warnings"] for v in doc["variants"]]
    assert len(said) == 2 and said[0] == said[1] and len(said[0]) == 1
    assert said[0][0].startswith("ptxas: Registers are spilled to local memory, ")
    assert _shmem(*words).count(said[0][0] + "\n") == 1  # both variants': said once
