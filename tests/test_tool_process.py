"""Issue 18, leftovers and tool output: NVIDIA's tools run in their own process group with a
private TMPDIR; a signal to shmem ends the whole group and removes the folder, and a tool
that prints or writes without end is stopped at its limit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shmem_cli.plumbing.tool_process import ToolLimit, group_alive, run_tool

from .conftest import HANG_S

# a stand-in for nvcc: leaves a tmpxft file in $TMPDIR and starts a child of its own (as nvcc
# starts cicc and cc1plus), then works for a minute
FAKE_NVCC = """#!{python}
import os, pathlib, subprocess, sys, time
tmp = os.environ["TMPDIR"]
pathlib.Path(tmp, "tmpxft_00001_k.cpp1.ii").write_bytes(b"x" * 100000)
child = subprocess.Popen(["sleep", "60"])
pathlib.Path({mark!r}).write_text(f"{{os.getpid()}} {{child.pid}} {{tmp}}")
time.sleep(60)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_a_compile_ends_nvcc_and_its_children_and_their_files(
    tmp_path: Path, sig: signal.Signals, status: int
) -> None:
    bin_dir, tmp = tmp_path / "bin", tmp_path / "tmp"
    bin_dir.mkdir()
    tmp.mkdir()
    mark = tmp_path / "started"
    nvcc = bin_dir / "nvcc"
    nvcc.write_text(FAKE_NVCC.format(python=sys.executable, mark=str(mark)))
    nvcc.chmod(0o755)
    (tmp_path / "k.cu").write_text("__global__ void k(int *p) { p[threadIdx.x] = 1; }\n")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", TMPDIR=str(tmp))
    proc = subprocess.Popen(
        [sys.executable, "-m", "shmem_cli.cli", "trace", "k.cu", "-b", "32"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not mark.exists() or not mark.read_text():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    tool_pid, child_pid, tool_tmp = mark.read_text().split()
    assert Path(tool_tmp).parent == tmp  # nvcc got a TMPDIR of its own, inside shmem's
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == status, err
    assert b"Traceback" not in err
    time.sleep(0.2)
    assert not alive(int(tool_pid)) and not alive(int(child_pid))
    assert list(tmp.iterdir()) == []  # no tmpxft_*, no shmem-trace-*, no shmem-tool-*


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
def test_a_group_of_zombies_is_gone() -> None:
    """A killed tool's child stays a zombie where init never reaps it: a group holding only
    zombies is gone, not waited for (counted alive, it held each compile's end 2 s)."""
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        assert group_alive(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + HANG_S
        while Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline  # a liveness guard: SIGKILL ends it at once
            time.sleep(0.01)
        assert not group_alive(proc.pid)  # its one process a zombie: this test never reaped it
    finally:
        proc.kill()
        proc.wait()
    assert not group_alive(proc.pid)


def test_output_without_end_is_stopped_at_the_limit() -> None:
    start = time.monotonic()
    with pytest.raises(ToolLimit, match="printed more than 1 MiB"):
        run_tool(["yes"], output_limit=1 << 20)
    assert time.monotonic() - start < HANG_S  # a liveness guard: unstopped, yes never ends


def test_a_file_past_the_limit_stops_the_tool(tmp_path: Path) -> None:
    # (a program that ignores SIGXFSZ, as Python does, gets EFBIG and fails instead)
    dd = ["dd", "if=/dev/zero", "of=big", "bs=1M", "count=64"]
    with pytest.raises(ToolLimit, match="wrote more than 1 MiB to one file"):
        run_tool(dd, cwd=tmp_path, file_limit=1 << 20)
    assert (tmp_path / "big").stat().st_size <= 1 << 20


def test_a_tool_past_its_time_is_ended() -> None:
    with pytest.raises(ToolLimit, match="did not finish within 1 s"):
        run_tool(["sleep", "30"], timeout=1)


def test_output_that_is_not_utf8_is_escaped() -> None:
    done = run_tool([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'a\\xff\\n')"])
    assert done.stdout == "a\\xff\n"


def test_a_tool_starts_under_a_lower_hard_memory_limit() -> None:
    """shmem run under ``ulimit -v`` (a CI sandbox) could start no tool: the child asked for
    its own 8 GiB limit above the hard one given, which only raises, and every nvcc ended in
    a SubprocessError traceback. The tool's limit is now never above the hard one."""
    code = (
        "import resource, sys\n"
        "from shmem_cli.plumbing.tool_process import run_tool\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))\n"
        "done = run_tool([sys.executable, '-c', 'import resource; "
        "print(resource.getrlimit(resource.RLIMIT_AS)[1])'], "
        "memory_limit=8 << 30, file_limit=4 << 30)\n"
        "print(done.stdout.strip())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(3 << 30)
