"""Source confinement on every path that compiles or reads sources (issue 28), and compiles
that end at once on Ctrl-C.

``shmem sweep K.cu --define ...`` refuses a source that includes a file outside its tree,
as ``shmem trace`` does, before anything is compiled; ``--suggest`` and ``--list-params``
read declarations and parameter names only from files inside the tree. Ctrl-C or SIGTERM
during the compiles of a sweep (``-j2``), of ``shmem trace K.cu`` or of a ``shmem lint -j2``
worker kills every compile with its children within a second and leaves no temporary file.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from shmem_cli.cli import main

from .conftest import HANG_S, TRACE_DATA, needs_nvdisasm
from .hostile import refused, shmem

SGEMM = TRACE_DATA / "fixes" / "warp_sgemm.pad0.sm_90.cubin"
SGEMM_CU = TRACE_DATA / "fixes" / "kernels" / "warp_sgemm.cu"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A source tree (it holds .git) with a kernel that includes a file outside it."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (tmp_path / "outside.h").write_text("#define TILE 32 // SECRET_OUTSIDE_LINE\n")
    (root / "k.cu").write_text(
        '#include "../outside.h"\n__global__ void k(float *o) { o[threadIdx.x] = TILE; }\n'
    )
    return root


def test_a_kernel_sweep_refuses_a_source_outside_its_tree(project: Path) -> None:
    ran = shmem("sweep", str(project / "k.cu"), "--define", "PAD=0,1", "-b", "32")
    refused(ran, f"{project / 'k.cu'}:1:", "outside the kernel's source tree")
    assert "SECRET_OUTSIDE_LINE" not in ran.text


def test_a_kernel_sweep_checks_an_include_folder_as_trace_does(project: Path) -> None:
    # typed on the command line, a folder outside the tree is a library's (as shmem trace
    # takes it: tests/test_trace_frontdoor.py compiles one); it must exist
    (project / "k.cu").write_text("__global__ void k(float *o) { o[0] = 1; }\n")
    ran = shmem(
        "sweep", str(project / "k.cu"), "--define", "P=0,1", "-b", "32",
        f"--nvcc-arg=-I{project.parent / 'missing'}",
    )  # fmt: skip
    refused(ran, "no such folder")


def _run_in(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output[-500:]
    return result


@pytest.mark.slow  # 10-12 s; the other confinement tests of this file stay fast
@needs_nvdisasm
def test_declarations_and_names_are_read_only_inside_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cubin in a folder of its own, run from a folder holding its source: outside the
    cubin's tree, so neither --list-params nor --suggest reads it; inside, both do."""
    (tmp_path / "proj").mkdir()
    shutil.copy(SGEMM, tmp_path / "proj" / "k.cubin")
    shutil.copy(SGEMM_CU, tmp_path / "warp_sgemm.cu")  # found by name under the current folder
    listing = ("trace", "proj/k.cubin", "--list-params")
    suggest = ("trace", "proj/k.cubin", "-b", "256", "-a", "3=64", "-a", "4=128", "-a", "5=64")
    suggest += ("--suggest", "--no-tables", "--format", "json")
    outside = [_run_in(tmp_path, monkeypatch, *args).output for args in (listing, suggest)]
    assert "3  ?     int" in outside[0]
    assert "__shared__ float As" not in outside[1]
    shutil.move(tmp_path / "warp_sgemm.cu", tmp_path / "proj" / "warp_sgemm.cu")
    inside = [_run_in(tmp_path, monkeypatch, *args).output for args in (listing, suggest)]
    assert "3  M     int" in inside[0]
    assert "__shared__ float As[16][64 + " in inside[1]


# --- Ctrl-C during the compiles -------------------------------------------------------------

SLOW_NVCC = """#!/bin/sh
# a compiler that takes a minute, in a child of its own (its process group must go too)
[ "$1" = --dryrun ] && exit 0
echo $$ >> "$PIDS"
sleep 60 &
echo $! >> "$PIDS"
wait
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is gone for our purpose
        return fh.read().split(")")[-1].split()[0] != "Z"


SPEC = """block: [32]
arrays:
  s: {dtype: float32, shape: [32]}
accesses:
  - {name: st, array: s, op: store, index: [lane]}
kernel: {source: k.cu, name: k, nvcc: [-DPAD=%d]}
"""


def _sweep(project: Path) -> list[str]:
    return ["sweep", str(project / "k.cu"), "--define", "PAD=1,2,3,4", "-b", "32", "-j", "2"]


def _trace(project: Path) -> list[str]:
    return ["trace", str(project / "k.cu"), "-b", "32", "--nvcc-arg=-DPAD=1"]


def _lint(project: Path) -> list[str]:
    for n in range(4):
        (project / f"k{n}.yaml").write_text(SPEC % n)
    return ["lint", str(project), "-j", "2"]


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
@pytest.mark.parametrize(
    ("command", "compiles", "sig"),
    [
        (_sweep, 2, signal.SIGINT),
        pytest.param(_sweep, 2, signal.SIGTERM, marks=pytest.mark.slow),
        (_trace, 1, signal.SIGINT),
        (_lint, 1, signal.SIGTERM),  # a lint worker's compile
    ],
)
def test_a_signal_ends_every_compile_at_once(
    tmp_path: Path, project: Path, command: Any, compiles: int, sig: signal.Signals
) -> None:
    """Each compile is a shell that waits on a child of its own: both are gone, with their
    folders, once shmem has ended (a killed child stays a zombie when init does not reap it:
    that is gone too, not waited for; test_tool_process proves a zombie counts as gone).
    shmem must not wait out its compiles: they take a minute, past HANG_S."""
    (project / "k.cu").write_text("__global__ void k(float *o) { o[threadIdx.x] = PAD; }\n")
    bin_dir, scratch, pids = tmp_path / "bin", tmp_path / "tmp", tmp_path / "pids"
    bin_dir.mkdir()
    scratch.mkdir()
    (bin_dir / "nvcc").write_text(SLOW_NVCC)
    (bin_dir / "nvcc").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "TMPDIR": str(scratch),
        "PIDS": str(pids),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "shmem_cli.cli", *command(project)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (
        not pids.exists() or len(pids.read_text().split()) < 2 * compiles
    ):
        time.sleep(0.05)  # the compiles started, each with its child
    started = [int(p) for p in pids.read_text().split()]
    proc.send_signal(sig)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < HANG_S < 60, "shmem waited for its compiles"
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err
    # killed, they are gone as soon as the kernel has run them once more (a loaded machine
    # may take a moment to), far sooner than the minute their compile would take
    gone_by = time.monotonic() + 5
    while [p for p in started if _alive(p)] and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not [p for p in started if _alive(p)]
    assert list(scratch.iterdir()) == []
