"""The session's nvdisasm cache (tests/tool_cache.py): it answers a run it has seen with what
the tool printed, and runs the tool for anything else, with the tool's exit status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

# a stand-in for the tool: counts its runs, prints its arguments and its file's bytes, and
# fails (or ends by a signal) where the file says so
FAKE = """#!/bin/sh
echo run >> "$(dirname "$0")/runs"
case "$(cat "$2")" in
  fail) echo "cannot read $2" >&2; exit 3 ;;
  warn) echo "a warning" >&2 ;;
  die) kill -XFSZ $$ ;;
esac
echo "$1"
cat "$2"
"""


@pytest.fixture
def tool(tmp_path: Path) -> Path:
    fake = tmp_path / "tool" / "nvdisasm"
    fake.parent.mkdir()
    fake.write_text(FAKE)
    fake.chmod(0o755)
    (tmp_path / "kept").mkdir()
    return fake


def _run(tool: Path, *args: str, off: bool = False) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SHMEM_TEST_TOOL_CACHE="off" if off else "")
    program = [sys.executable, "-IS", str(ROOT / "tests" / "tool_cache.py")]
    kept = tool.parent.parent / "kept"
    return subprocess.run(
        [*program, str(tool), str(kept), *args], capture_output=True, text=True, env=env
    )


def _runs(tool: Path) -> int:
    counted = tool.parent / "runs"
    return len(counted.read_text().splitlines()) if counted.exists() else 0


def test_a_run_seen_before_is_answered_with_the_same_output(tool: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.cubin", tmp_path / "b.cubin"
    a.write_text("code one\n")
    b.write_text("code one\n")  # another file with the same bytes
    first = _run(tool, "-c", str(a))
    again = _run(tool, "-c", str(b))
    assert (first.returncode, first.stdout, first.stderr) == (0, "-c\ncode one\n", "")
    assert (again.returncode, again.stdout, again.stderr) == (0, "-c\ncode one\n", "")
    assert _runs(tool) == 1


def test_other_bytes_or_arguments_run_the_tool(tool: Path, tmp_path: Path) -> None:
    cubin = tmp_path / "k.cubin"
    cubin.write_text("code one\n")
    _run(tool, "-c", str(cubin))
    assert _run(tool, "-gi", str(cubin)).stdout == "-gi\ncode one\n"
    cubin.write_text("code two\n")
    assert _run(tool, "-c", str(cubin)).stdout == "-c\ncode two\n"
    assert _runs(tool) == 3


def test_a_failure_is_passed_on_and_not_kept(tool: Path, tmp_path: Path) -> None:
    cubin = tmp_path / "k.cubin"
    cubin.write_text("fail")
    for _ in range(2):
        ran = _run(tool, "-c", str(cubin))
        assert (ran.returncode, ran.stdout, ran.stderr) == (3, "", f"cannot read {cubin}\n")
    assert _runs(tool) == 2


def test_a_warning_is_kept_with_the_output(tool: Path, tmp_path: Path) -> None:
    cubin = tmp_path / "k.cubin"
    cubin.write_text("warn")
    for _ in range(2):
        ran = _run(tool, "-c", str(cubin))
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, "-c\nwarn", "a warning\n")
    assert _runs(tool) == 1


def test_an_output_that_names_the_file_is_not_kept(tool: Path, tmp_path: Path) -> None:
    cubin = tmp_path / "k.cubin"
    cubin.write_text(str(cubin))  # the stand-in prints its file's bytes: here its name
    for _ in range(2):
        assert _run(tool, "-c", str(cubin)).stdout == f"-c\n{cubin}"
    assert _runs(tool) == 2


def test_a_tool_ended_by_a_signal_ends_it_by_the_same_signal(tool: Path, tmp_path: Path) -> None:
    cubin = tmp_path / "k.cubin"
    cubin.write_text("die")
    assert _run(tool, "-c", str(cubin)).returncode == -signal.SIGXFSZ
    assert not list((tmp_path / "kept").iterdir())


def test_a_fifo_or_the_off_switch_runs_the_tool_itself(tool: Path, tmp_path: Path) -> None:
    cubin = tmp_path / "k.cubin"
    cubin.write_text("code one\n")
    for _ in range(2):
        assert _run(tool, "-c", str(cubin), off=True).stdout == "-c\ncode one\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    ran = _run(tool, "-c", str(cubin), str(fifo))  # the tool reads its second argument only
    assert (ran.returncode, ran.stdout) == (0, "-c\ncode one\n")
    assert _runs(tool) == 3
    assert not list((tmp_path / "kept").iterdir())
