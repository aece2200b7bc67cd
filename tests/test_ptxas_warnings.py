"""ptxas's warnings and advisories of a ``.cu`` build that succeeded reach the report (a
register spill, wgmma serialized): ``ptxas:`` lines in the text, ``compiler_warnings`` in the
JSON, per kernel, each once; kept with a cached build; nvcc's own words (an architecture's
deprecation) and ``-v``'s statistics never shown. Before them nvcc's front end's warnings,
as nvcc wrote them, by the rule a failed build's messages follow. The kernels are our own
(tests/data/trace/ptxas_warnings/); the ptxas and nvcc lines below are CUDA 13.0's for
them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.build import build_warnings
from shmem_cli.cuda.build_cache import Cached, lookup, open_cache, store
from shmem_cli.cuda.nvcc_messages import (
    MAX_KERNEL_WARNINGS,
    kernel_front,
    kernel_warnings,
    source_warnings,
)
from shmem_cli.cuda.sources import SourceTree

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
    assert build_warnings(said) == (SPILL, *SERIALIZED)  # each once, in ptxas's order


# what CUDA 13.0's nvcc writes building front_end.cu (copied to /proj/src, its library to
# /proj/lib) with -I/proj/lib, source lines quoted and all
FRONT_END = """\
/proj/src/front_end.cu:6:2: warning: #warning "tile size not tuned" [-Wcpp]
    6 | #warning "tile size not tuned"
      |  ^~~~~~~
/proj/src/front_end.cu(16): warning #69-D: integer conversion resulted in truncation
      char c = 1000;
               ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

/proj/src/front_end.cu(17): warning #20058-D: the #pragma unroll must precede a loop
  #pragma unroll
          ^

/proj/src/front_end.cu(19): warning #1444-D: function "old_twice" was declared deprecated \
("use twice")
      out[k] = old_twice(out[k]) + scaled(n);
               ^
/proj/src/front_end.cu(8): note #3287-D: because of a "deprecated" attribute
  __attribute__((device)) __attribute__((deprecated("use twice"))) float old_twice(float x) \
{ return x * 2; }
                                         ^

/proj/src/front_end.cu(11): warning #177-D: variable "unused_tile" was declared but never \
referenced
      __attribute__((shared)) float unused_tile[32];
                                    ^

/proj/src/front_end.cu(12): warning #177-D: variable "unused_local" was declared but never \
referenced
      int unused_local = 3;
          ^

/proj/lib/scale.h(4): warning #69-D: integer conversion resulted in truncation
      T big = 5000000000;
              ^
          detected during instantiation of "T scaled(T) [with T=int]" at line 19 of \
/proj/src/front_end.cu

"""
#: what the report says of it, the sources under /proj/src and the library typed
FRONT_END_SHOWN = [
    '/proj/src/front_end.cu:6:2: warning: #warning "tile size not tuned" [-Wcpp]',
    "/proj/src/front_end.cu(16): warning #69-D: integer conversion resulted in truncation",
    "/proj/src/front_end.cu(17): warning #20058-D: the #pragma unroll must precede a loop",
    '/proj/src/front_end.cu(19): warning #1444-D: function "old_twice" was declared '
    'deprecated ("use twice")',
    '/proj/src/front_end.cu(8): note #3287-D: because of a "deprecated" attribute',
    '/proj/src/front_end.cu(11): warning #177-D: variable "unused_tile" was declared but '
    "never referenced",
    '/proj/src/front_end.cu(12): warning #177-D: variable "unused_local" was declared but '
    "never referenced",
    "/proj/lib/scale.h(4): warning #69-D: integer conversion resulted in truncation",
    "/proj/src/front_end.cu:19: note: instantiated from here (the kernel's own line)",
]


def test_front_end_warnings_are_shown_as_nvcc_wrote_them() -> None:
    said = build_warnings(SPILL + "\n" + FRONT_END + SPILL + "\n")
    assert said[0] == SPILL and said.count(SPILL) == 1  # ptxas's first, each once
    front = said[1:]
    assert "Remark" not in " ".join(front) and not any("^" in line for line in front)
    assert not any("char c = 1000" in line for line in front)  # no source line quoted
    tree = SourceTree((Path("/proj/src"),))
    assert source_warnings(said, tree, ("/proj/lib",)) == tuple(FRONT_END_SHOWN)
    # the library not typed (an include root, or any folder): its place, not its words
    hidden = source_warnings(said, tree)
    assert hidden[:7] == tuple(FRONT_END_SHOWN[:7])
    assert hidden[7] == (
        "/proj/lib/scale.h(4): warning #69-D (not shown: the file is outside the kernel's "
        "source tree)"
    )
    assert "5000000000" not in " ".join(hidden) and hidden[8] == FRONT_END_SHOWN[8]
    # nvcc repeats a warning (a header's, per compile pass): once; many: 15 lines at most
    assert source_warnings(build_warnings(FRONT_END * 2), tree, ("/proj/lib",)) == tuple(
        FRONT_END_SHOWN
    )
    many = "".join(f"/proj/src/k.cu({n}): warning #177-D: variable unused\n" for n in range(40))
    cut = source_warnings(build_warnings(many), tree)
    assert len(cut) == 15 and cut[-1] == "... and 26 more lines (warnings)"
    # nvcc's own words about the build and ptxas's statistics are none of them
    assert source_warnings(build_warnings("\n".join(NOISE)), tree) == ()


def test_a_front_end_warning_goes_with_the_kernel_whose_lines_hold_it() -> None:
    warned = [("/proj/src/front_end.cu", 9, 20)]  # its line table's own rows, in nvcc's words
    other = [("src/front_end.cu", 22, 30), ("/proj/src/other.cu", 1, 99)]
    assert kernel_front(FRONT_END_SHOWN, warned, other) == tuple(FRONT_END_SHOWN)
    # another kernel's: the #warning at global scope only; the deprecated call's note (line
    # 8) goes with its warning, the header's with the line that instantiated it (19)
    assert kernel_front(FRONT_END_SHOWN, other, warned) == (FRONT_END_SHOWN[0],)
    # a header's warning with no instantiating line, or one outside every kernel: everyone's
    header = "/proj/lib/scale.h(4): warning #69-D: integer conversion resulted in truncation"
    outside = "/proj/src/front_end.cu(21): warning #177-D: variable unused"
    assert kernel_front([header, outside], other, warned) == (header, outside)


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


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_front_end_warnings_reach_the_report_once(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    source = tmp_path / "src" / "front_end.cu"
    shutil.copy(KERNELS / "front_end.cu", source)
    shutil.copytree(KERNELS / "lib", tmp_path / "lib")
    root = os.path.realpath(tmp_path)
    shown = [line.replace("/proj", root) for line in FRONT_END_SHOWN]
    words = [
        "trace", str(source), "-b", "64", "--arg", "n=2", f"--nvcc-arg=-I{tmp_path / 'lib'}",
        "--build-cache", str(tmp_path / "cache"),
    ]  # fmt: skip
    fresh = _kernels(_shmem(*words, "--format", "json"))["_Z6warnedPfi"]
    assert fresh["build_cached"] is False and fresh["compiler_warnings"] == shown
    text = _shmem(*words, "--no-tables")  # from the cache now: the same, each once
    assert "build: cached" in text and all(text.count(line + "\n") == 1 for line in shown)
    assert "Traceback" not in text and "^" not in text and "char c = 1000" not in text
    cached = _kernels(_shmem(*words, "--format", "json"))["_Z6warnedPfi"]
    assert cached["build_cached"] is True and cached["compiler_warnings"] == shown
    sweep = [str(source), "--define", "UNUSED=0,1", *words[2:7]]
    doc = json.loads(_shmem("sweep", *sweep, "-f", "json"))
    assert [v["compiler_warnings"] for v in doc["variants"]] == [shown, shown]
    said = _shmem("sweep", *sweep)
    assert all(said.count(line + "\n") == 1 for line in shown)  # both variants': said once


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
def test_each_kernel_of_a_file_shows_its_own_front_end_warnings(tmp_path: Path) -> None:
    source = tmp_path / "two_kernels.cu"
    shutil.copy(KERNELS / "two_kernels.cu", source)
    at = os.path.realpath(source)
    said = {
        k: _kernels(_shmem("trace", str(source), "-k", k, "-b", "64", "--format", "json"))
        for k in ("first", "second")
    }
    file_level = f'{at}:3:2: warning: #warning "file level" [-Wcpp]'
    assert said["first"]["_Z5firstPf"]["compiler_warnings"] == [
        file_level,
        f"{at}(8): warning #69-D: integer conversion resulted in truncation",
        f'{at}(6): warning #177-D: variable "unused_a" was declared but never referenced',
    ]
    second = [
        file_level,
        f'{at}(13): warning #177-D: variable "unused_b" was declared but never referenced',
    ]
    assert said["second"]["_Z6secondPf"]["compiler_warnings"] == second
    sweep = ["sweep", str(source), "--define", "UNUSED=0,1", "-k", "second", "-b", "64"]
    doc = json.loads(_shmem(*sweep, "-f", "json"))  # a compiled sweep's variants: the same
    assert [v["compiler_warnings"] for v in doc["variants"]] == [second, second]
