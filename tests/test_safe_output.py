"""Output files: never destroy what is not ours, and fail with exit 2, the path and the reason.

docs/robustness.md, "Writing files", states the rules these tests check.
"""

from __future__ import annotations

import os
import select
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.plumbing import fsutil

SPEC = """\
block: [32]
arrays:
  a: {dtype: float32, shape: [32, 32]}
accesses:
  - name: column read
    array: a
    index: [lane, 0]
"""


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result.exit_code, result.stdout + result.stderr


def shmem(*args: str | bytes, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    """``shmem`` as its own process (output as bytes)."""
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "shmem_cli.cli", *args], timeout=60, check=False, **streams
    )


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    return path


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --- special files are written in place, never replaced ----------------------------------


def test_a_device_stays_a_device(tmp_path: Path, spec: Path) -> None:
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the null device
    except (PermissionError, OSError):
        pytest.skip("cannot create a device node here (not root)")
    code, out = run("analyze", str(spec), "-o", str(null))
    assert code == 0, out
    assert stat.S_ISCHR(null.stat().st_mode)
    assert temp_files(tmp_path) == []


def test_dev_null_stays_a_device(spec: Path) -> None:
    code, out = run("analyze", str(spec), "--format", "json", "-o", os.devnull)
    assert code == 0, out
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_full_device_is_exit_2(tmp_path: Path, spec: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    code, out = run("analyze", str(spec), "-o", "/dev/full")
    assert code == 2
    assert "/dev/full: error: cannot write: no space left on the device" in out
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_fifo_nobody_reads_is_refused_at_once(tmp_path: Path, spec: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, out = run("analyze", str(spec), "-o", str(fifo))
    assert code == 2
    assert f"{fifo}: error: cannot write: it is a FIFO that nobody reads" in out
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_fifo_with_a_reader_gets_the_report(tmp_path: Path, spec: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    # a reader that is there before the writer comes: non-blocking, it reads until the
    # writer has written and gone
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)

    def read() -> None:
        deadline = time.monotonic() + 30
        data = b""
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                chunk = None
            if chunk:
                data += chunk
            elif chunk == b"" and data:
                break
            else:
                select.select([fd], [], [], 0.05)
        got.append(data)

    reader = threading.Thread(target=read)
    reader.start()
    code, out = run("analyze", str(spec), "--format", "json", "-o", str(fifo))
    reader.join(30)
    os.close(fd)
    assert code == 0, out
    assert b'"wavefronts"' in got[0]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_symlink_is_followed_and_stays_a_link(tmp_path: Path, spec: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    code, out = run("analyze", str(spec), "--format", "json", "-o", str(link))
    assert code == 0, out
    assert link.is_symlink()
    assert '"wavefronts"' in real.read_text()


def test_dev_stdout_writes_to_standard_output(tmp_path: Path, spec: Path) -> None:
    if not os.path.exists("/dev/stdout"):
        pytest.skip("no /dev/stdout")
    done = shmem("analyze", str(spec), "--format", "json", "-o", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert b'"wavefronts"' in done.stdout


# --- outputs that would destroy an input, or need a folder ---------------------------------


def test_output_naming_the_input_spec_is_refused(spec: Path) -> None:
    for args in (
        ("analyze", str(spec), "-o", str(spec)),
        ("analyze", str(spec), "--svg", str(spec)),
        ("lint", str(spec), "-o", str(spec)),
        ("lint", str(spec), "--write-baseline", str(spec)),
        ("sweep", str(spec), "--pad", "0..1", "-o", str(spec)),
        ("verify", str(spec), "--emit", str(spec.parent / "b"), "-o", str(spec)),
    ):
        code, out = run(*args)
        assert code == 2, (args, out)
        assert f"{spec}: error: refusing to write over the input {spec}" in out, out
        assert spec.read_text() == SPEC


def test_output_naming_a_spec_in_an_input_folder_is_refused(spec: Path) -> None:
    code, out = run("lint", str(spec.parent), "-o", str(spec))
    assert code == 2
    assert "refusing to write over the input" in out
    assert spec.read_text() == SPEC


def test_a_missing_folder_is_not_created(tmp_path: Path, spec: Path) -> None:
    target = tmp_path / "no" / "such" / "r.txt"
    code, out = run("analyze", str(spec), "-o", str(target))
    assert code == 2
    assert f"the folder {tmp_path / 'no' / 'such'} does not exist" in out
    assert "mkdir -p" in out
    assert not (tmp_path / "no").exists()


def test_a_parent_that_is_a_file(tmp_path: Path, spec: Path) -> None:
    (tmp_path / "file").write_text("x")
    code, out = run("lint", str(spec), "--write-baseline", str(tmp_path / "file" / "b.json"))
    assert code == 2
    assert "is a file, not a folder" in out
    assert (tmp_path / "file").read_text() == "x"


def test_write_failures_in_the_library(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(fsutil.OutputError, match="a part of the path is a file"):
        fsutil.write_atomic(tmp_path / "file" / "sub" / "r.txt", "text")
    with pytest.raises(fsutil.OutputError, match="it is a folder"):
        fsutil.write_atomic(tmp_path, "text")
    with pytest.raises(fsutil.OutputError, match="does not exist"):
        fsutil.write_atomic(tmp_path / "none" / "r.txt", "text")


def test_a_full_file_system_keeps_the_old_file(tmp_path: Path, spec: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        target = mount / "report.txt"
        target.write_text("old report\n")
        (mount / "filler").write_bytes(b"x" * (60 * 1024))
        code, out = run("analyze", str(spec), "-o", str(target))
        assert code == 2
        assert "no space left on the device (the old file, if any, is unchanged)" in out
        assert target.read_text() == "old report\n"
        assert temp_files(mount) == []
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_read_only_file_system(tmp_path: Path, spec: Path) -> None:
    mount = tmp_path / "ro"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        code, out = run("lint", str(spec), "--write-baseline", str(mount / "b.json"))
        assert code == 2
        assert "the file system is read-only" in out
    finally:
        subprocess.run(["umount", str(mount)], check=False)


# --- standard output that fails ----------------------------------------------------------


def test_standard_output_on_a_closed_pipe(spec: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = shmem("analyze", str(spec), stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert done.returncode == 2
    assert b"<standard output>: error: cannot write the report: the reader has gone away" in (
        done.stderr
    )
    assert b"Traceback" not in done.stderr
    assert b"Exception ignored" not in done.stderr


def test_standard_output_on_a_full_device(spec: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "wb") as full:
        done = shmem("analyze", str(spec), stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 2
    assert b"cannot write the report: no space left on the device" in done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.slow
def test_file_names_that_are_not_utf8(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path)
    name = folder + b"/sp\xffec.yaml"
    with open(name, "w") as fh:
        fh.write(SPEC)
    out = folder + b"/rep\xfe.json"
    for args in (
        ("analyze", name),
        ("analyze", name, "--format", "json"),
        ("lint", name, "--format", "sarif"),
        ("analyze", name, "--format", "json", "-o", out),
    ):
        done = shmem(*args)
        assert done.returncode in (0, 1), (args, done.stderr)
        assert b"Traceback" not in done.stderr
    assert b'"wavefronts"' in Path(os.fsdecode(out)).read_bytes()


# --- interrupts --------------------------------------------------------------------------


def test_sigterm_during_a_baseline_write(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text("old baseline\n")
    real_fsync = os.fsync

    def terminated_while_writing(fd: int) -> None:
        real_fsync(fd)
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs before this returns

    monkeypatch.setattr(fsutil.os, "fsync", terminated_while_writing)
    code, _ = run("lint", str(spec), "--write-baseline", str(baseline))
    assert code == 143
    assert baseline.read_text() == "old baseline\n"
    assert temp_files(tmp_path) == []


def test_sigterm_during_a_sarif_write(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write

    def terminated_halfway(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        os.kill(os.getpid(), signal.SIGTERM)
        return len(data) // 2

    monkeypatch.setattr(fsutil.os, "write", terminated_halfway)
    code, _ = run("lint", str(spec), "--format", "sarif", "-o", str(tmp_path / "r.sarif"))
    assert code == 143
    assert not (tmp_path / "r.sarif").exists()
    assert temp_files(tmp_path) == []


def test_ctrl_c_exits_130(spec: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shmem_cli.analysis.analyze as analysis

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(analysis, "analyze_many", interrupted)
    code, out = run("analyze", str(spec))
    assert code == 130
    assert "shmem: interrupted" in out


# a SIGINT that arrives while the console script imports the command line (click, rich,
# the commands), before any command's handler: sent from inside the import of click
EARLY_CTRL_C = """
import builtins, os, signal, sys
import shmem_cli.console as console
real_import = builtins.__import__
def importing(name, *args, **kwargs):
    if name == "click":
        os.kill(os.getpid(), signal.SIGINT)
    return real_import(name, *args, **kwargs)
builtins.__import__ = importing
sys.argv = ["shmem", "--version"]
console.main()
"""


def test_ctrl_c_while_the_command_line_is_imported_exits_130_without_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-c", EARLY_CTRL_C], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr, done.stdout) == (130, "shmem: interrupted\n", "")


def test_the_console_script_is_the_one_that_handles_an_early_ctrl_c() -> None:
    import tomllib

    scripts = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"][
        "scripts"
    ]
    assert scripts == {"shmem": "shmem_cli.console:main"}


def test_python_dash_m_runs_the_shmem_command() -> None:
    # `python -m shmem_cli trace ...` (where the script is not on PATH) runs the same command
    # group: it said "No module named shmem_cli.__main__"
    from shmem_cli import __version__

    root = Path(__file__).parents[1]
    version = subprocess.run(
        [sys.executable, "-m", "shmem_cli", "--version"],
        capture_output=True, text=True, timeout=60, cwd=root,
    )  # fmt: skip
    assert (version.returncode, version.stdout) == (0, f"shmem, version {__version__}\n")
    usage = subprocess.run(
        [sys.executable, "-m", "shmem_cli", "trace"],
        capture_output=True, text=True, timeout=60, cwd=root,
    )  # fmt: skip
    assert usage.returncode == 2
    assert usage.stderr.splitlines() == [
        "shmem: error: Missing argument 'KERNEL'.",
        "(see: python -m shmem_cli trace --help)",
    ]


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_sigterm_to_lint_stops_its_workers(tmp_path: Path) -> None:
    # the first file is linted before the workers start: a quick one; the others take
    # minutes each, so only stopping the workers ends the run within the timeout below
    (tmp_path / "s00.yaml").write_text(SPEC)
    slow = SPEC.replace("index: [lane, 0]", "loop: {i: 0..4000000}\n    index: [lane, i % 32]")
    for i in range(1, 64):
        (tmp_path / f"s{i:02d}.yaml").write_text(slow)
    process = subprocess.Popen(
        [sys.executable, "-m", "shmem_cli.cli", "lint", "-j2", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        workers: list[int] = []
        while time.monotonic() < deadline and process.poll() is None:
            workers = children(process.pid)
            if len(workers) >= 2:
                break
            time.sleep(0.02)
        if len(workers) < 2:
            pytest.skip("lint ended before its workers could be seen")
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=15)  # EOF: nobody holds the pipes any more
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 143, err
    assert b"Traceback" not in err
    assert [w for w in workers if alive(w)] == []


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def test_stopping_workers_leaves_no_pool_thread_behind() -> None:
    # the pool's manager thread, left running, races Python's exit for its wake-up pipe and
    # prints "Exception ignored ... Bad file descriptor" (1 stop in 20 to 100 under load):
    # stop() must return with it ended, not merely told to end
    from concurrent.futures import ProcessPoolExecutor

    from shmem_cli.plumbing import workers

    pool = ProcessPoolExecutor(max_workers=2, initializer=workers._worker_start)
    for _ in range(4):
        pool.submit(_sleep, 60.0)
    manager = pool._executor_manager_thread  # a threading.Thread (typeshed says otherwise)
    assert manager is not None and manager.is_alive()
    workers.stop(pool)
    assert not manager.is_alive()


def test_verify_emit_creates_only_its_own_folder(tmp_path: Path, spec: Path) -> None:
    code, out = run("verify", str(spec), "--emit", str(tmp_path / "no" / "bench"))
    assert code == 2
    assert "does not exist (create it first" in out
    assert not (tmp_path / "no").exists()
    (tmp_path / "file").write_text("x")
    code, out = run("verify", str(spec), "--emit", str(tmp_path / "file"))
    assert code == 2
    assert "is a file" in out  # click's own check of --emit comes first
    code, out = run("verify", str(spec), "--emit", str(tmp_path / "bench"))
    assert code == 0, out
    assert (tmp_path / "bench" / "run.sh").is_file()
