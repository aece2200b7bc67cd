"""A cubin traced from outside its sources' tree: why its parameters have no names.

The kernel is compiled here with -lineinfo from ``src/k.cu`` into ``out/k.cubin`` and traced
from ``tmp_path`` (no repository): the line table names ``src/k.cu``, which lies outside the
cubin's tree. ``--arg NAME``, ``--list-params`` and a run without ``--arg`` say so, in the
words a Triton entry's unread def gets (cuda.named_sources.unread_words); the source there
but without the kernel, or gone, is said as that."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain

from .conftest import needs_nvcc, needs_nvdisasm

pytestmark = [needs_nvcc, needs_nvdisasm]

KERNEL = """\
__global__ void k(float *out, int e) {
    __shared__ float s[128];
    s[threadIdx.x * e] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
"""


@pytest.fixture
def apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(src/k.cu, out/k.cubin), built with -lineinfo, shmem run from ``tmp_path``."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "k.cu").write_text(KERNEL)
    nvcc = toolchain.which("nvcc")
    assert nvcc is not None
    cmd = [nvcc, "-cubin", "-arch=sm_90", "-lineinfo", "-o", str(out / "k.cubin"), "k.cu"]
    subprocess.run(cmd, cwd=src, check=True, capture_output=True)
    monkeypatch.chdir(tmp_path)
    return src / "k.cu", out / "k.cubin"


def _said(args: list[str]) -> tuple[int, str]:
    got = CliRunner().invoke(main, ["trace", *args])
    return got.exit_code, " ".join(got.output.split())


def test_a_source_outside_the_tree_is_named_with_the_root_that_reads_it(
    apart: tuple[Path, Path],
) -> None:
    source, cubin = apart
    code, said = _said([str(cubin), "-b", "32", "-a", "e=4"])
    assert code == 2
    assert "no parameter names were found" not in said and "Traceback" not in said
    assert "--arg e: no parameter of that name: the kernel's parameters have no names" in said
    assert f"in {source}, outside the source tree (the cubin's repository or folder" in said
    assert f"give --source-root {source.parent} (or a folder above it), or name the" in said
    code, listed = _said([str(cubin), "--list-params"])  # the same reason under the table
    assert code == 0
    assert "note: the kernel's parameters have no names" in listed
    assert f"give --source-root {source.parent} (or a folder above it)" in listed
    got = CliRunner().invoke(main, ["trace", str(cubin), "--list-params", "--format", "json"])
    kernel = json.loads(got.output)["kernels"][0]
    assert f"in {source}, outside the source tree" in kernel["unnamed_parameters"]
    code, run = _said([str(cubin), "-b", "32"])  # labelled by position: why, once
    assert code == 0 and run.count("have no names") == 1
    assert "0=zero-filled buffer" in run
    got = CliRunner().invoke(main, ["trace", str(cubin), "-b", "32", "--format", "json"])
    launch = json.loads(got.output)["files"][0]["kernels"][0]
    assert f"in {source}, outside the source tree" in launch["unnamed_parameters"]
    code, fixed = _said([str(cubin), "-b", "32", "-a", "e=4", "--source-root", str(source.parent)])
    assert code == 0, fixed
    assert "1 (e)=4" in fixed and "have no names" not in fixed


def test_a_source_without_the_kernel_says_so(apart: tuple[Path, Path]) -> None:
    source, cubin = apart
    source.write_text(KERNEL.replace("void k(", "void renamed("))
    code, said = _said([str(cubin), "-b", "32", "-a", "e=4", "--source-root", str(source.parent)])
    assert code == 2
    assert (
        f"{source}, the file the line table names as shmem found it, holds no __global__ "
        "declaration of k that shmem could read (edited since the compile, or written through "
        "a macro?)" in said
    )


def test_a_source_not_there_says_where_it_was_compiled(apart: tuple[Path, Path]) -> None:
    source, cubin = apart
    source.unlink()
    code, said = _said([str(cubin), "-b", "32", "-a", "e=4"])
    assert code == 2
    assert f"whose file, {source} as the line table names it, is not there" in said
    assert f"the kernel's source file ({source.parent} where it was compiled)" in said


def test_a_named_kernel_has_no_note(apart: tuple[Path, Path]) -> None:
    source, cubin = apart
    code, run = _said([str(cubin), "-b", "32", "--source-root", str(source.parent)])
    assert code == 0 and "note: the kernel's parameters" not in run
    assert "0 (out)=zero-filled buffer" in run


def test_a_cu_whose_kernel_a_macro_declares_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a .cu just built holds what was compiled: never "edited since the compile?"
    source = tmp_path / "m.cu"
    source.write_text(
        "#define KERNEL(name) __global__ void name(float *out, int e)\n"
        + KERNEL.replace("__global__ void k(float *out, int e)", "KERNEL(k)")
    )
    monkeypatch.chdir(tmp_path)
    code, said = _said([str(source), "-b", "32", "-a", "e=4"])
    assert code == 2
    assert (
        f"{source}, the file the line table names as shmem found it, holds no __global__ "
        "declaration of k that shmem could read (written through a macro, which shmem does "
        "not expand?)" in said
    )


def test_the_kernels_of_one_cubin_share_one_note(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    second = KERNEL.replace("void k(", "void k2(")
    (src / "two.cu").write_text(KERNEL + second)
    nvcc = toolchain.which("nvcc")
    assert nvcc is not None
    cmd = [nvcc, "-cubin", "-arch=sm_90", "-lineinfo", "-o", str(out / "two.cubin"), "two.cu"]
    subprocess.run(cmd, cwd=src, check=True, capture_output=True)
    code, listed = _said([str(out / "two.cubin"), "--list-params"])
    assert code == 0 and "2 kernels" in listed
    assert listed.count("note: the kernel's parameters have no names") == 1
    assert listed.endswith(f"give --source-root {src} (or a folder above it), or name the "
                           "parameters by position (--arg 0=...)")  # fmt: skip


def test_an_older_triton_entrys_run_says_why_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Triton 3.3.1 writes %arg0, ...; its def's file (where it was compiled) is not here: the
    # trace by position says so under its arguments, once, as a cubin's does (one rule)
    from .conftest import TEST_DATA

    (meta,) = (TEST_DATA / "triton" / "called" / "3.3.1").glob("*/centred_rows.json")
    folder = tmp_path / "cache" / meta.parent.name
    shutil.copytree(meta.parent, folder)
    monkeypatch.chdir(tmp_path)
    args = ["-a", "2=1000", "-a", "3=1024", "-a", "4=0.5", "-a", "5=1", "--grid", "2"]
    code, run = _said([str(folder), *args])
    assert code == 0, run
    assert "2 (arg2)=1000" in run
    assert run.count("note: this entry's TTGIR does not name the parameters") == 1
    assert "/work/wt/trisweep/tests/data/triton/kernels.py as the TTGIR names it, is not" in run
