"""Running one of NVIDIA's tools as a child that cannot outlive, flood or litter.

:func:`run_tool` starts the program (an argument list, never a shell) in a
session and process group of its own, with:

* ``TMPDIR`` (``TMP``, ``TEMP``) pointing at a fresh folder that is removed when
  the tool ends, so nvcc's ``tmpxft_*`` files never stay behind;
* its standard output and error written to files in that folder, each read back
  only up to ``output_limit`` bytes (the tool is stopped when one grows past it);
* ``RLIMIT_FSIZE`` (no file it writes may exceed ``file_limit`` bytes: a
  decompression bomb stops there) and, where given, ``RLIMIT_AS`` (``memory_limit``);
* a wall-time limit;
* where asked (``special=True``), a watch on the files its processes open: one that is a FIFO,
  a device or a socket (:mod:`.special_opens`) stops it at once (:class:`ToolRefused`), where
  a compile would wait on a pipe or read ``/dev/zero`` to its time limit.

Whatever ends the wait (the tool finishing, a limit, Ctrl-C, SIGTERM, an error),
the whole process group is killed and waited for before the folder is removed:
nvcc's cicc, cc1plus and sh go with it. The child also asks Linux to kill it if
shmem dies first.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from .frozen import frozen
from .special_opens import SpecialOpens

MIB = 1 << 20
POLL_SECONDS = 0.02
WATCH_EVERY = 5  # polls between two looks at the files a watched tool opened (0.1 s)
_PR_SET_PDEATHSIG = 1


#: the tools running now: process group -> their folder (for :func:`end_all`)
_LIVE: dict[int, Path] = {}


def end_all() -> None:
    """Kill every tool this process runs and remove their folders (for a worker that is
    told to stop: it ends at once, without unwinding)."""
    for pgid, scratch in list(_LIVE.items()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pgid, os.WNOHANG)
            if not group_alive(pgid):
                break
            time.sleep(POLL_SECONDS)
        shutil.rmtree(scratch, ignore_errors=True)
        _LIVE.pop(pgid, None)


class ToolLimit(Exception):
    """The tool ran past one of its limits (the message says which)."""


class ToolRefused(ToolLimit):
    """The tool opened a file that is no regular file (the message says which)."""


@frozen
class Finished:
    returncode: int
    stdout: str
    stderr: str


def _limits(file_limit: int | None, memory_limit: int | None) -> None:
    """In the child, before exec: resource limits and death with the parent."""
    import resource

    for kind, limit in ((resource.RLIMIT_FSIZE, file_limit), (resource.RLIMIT_AS, memory_limit)):
        if limit is not None:
            # never above the limit shmem itself runs under (``ulimit -v`` in CI): raising a
            # hard limit is refused, and the tool could not start at all
            _, hard = resource.getrlimit(kind)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            resource.setrlimit(kind, (limit, limit))
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def _private(path: Path) -> int:
    """A new file in the tool's own folder, open for reading and writing."""
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)


def _read(path: Path, limit: int) -> str:
    with path.open("rb") as fh:
        data = fh.read(limit)
    # a tool's text is mostly ASCII; anything else is shown escaped, never a traceback
    return data.decode("utf-8", errors="backslashreplace")


def group_alive(pgid: int) -> bool:
    """Whether a process of the group ``pgid`` still runs. A killed child of the tool (nvcc's
    cicc, a shell's sleep) is reparented and stays a zombie until init reaps it, which in a
    container may be never: a group of zombies only is gone for our purpose."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc"):
        return True
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            return True
    return False


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the tool's process group and wait (briefly) until it is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and group_alive(proc.pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        time.sleep(POLL_SECONDS)


def run_tool(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    timeout: float | None = 600.0,
    output_limit: int = 64 * MIB,
    file_limit: int | None = None,
    memory_limit: int | None = None,
    stdin: str | None = None,
    special: bool = False,
) -> Finished:
    """Run ``args`` (see the module docstring); :class:`ToolLimit` when a limit stops it,
    :class:`OSError` when it cannot be started."""
    name = Path(args[0]).name
    scratch = Path(tempfile.mkdtemp(prefix="shmem-tool-"))
    try:
        env = dict(os.environ, TMPDIR=str(scratch), TMP=str(scratch), TEMP=str(scratch))
        out_path, err_path, in_path = scratch / "stdout", scratch / "stderr", scratch / "stdin"
        fds = [_private(in_path), _private(out_path), _private(err_path)]
        try:
            os.write(fds[0], (stdin or "").encode("utf-8"))
            os.lseek(fds[0], 0, os.SEEK_SET)
            proc = subprocess.Popen(
                list(args),
                cwd=cwd,
                env=env,
                stdin=fds[0],
                stdout=fds[1],
                stderr=fds[2],
                start_new_session=True,
                preexec_fn=lambda: _limits(file_limit, memory_limit),  # noqa: PLW1509
            )
        finally:
            for fd in fds:
                os.close(fd)
        _LIVE[proc.pid] = scratch
        try:
            start = time.monotonic()
            watch = SpecialOpens(proc.pid) if special else None
            polls = 0
            while proc.poll() is None:
                time.sleep(POLL_SECONDS)
                if timeout is not None and time.monotonic() - start > timeout:
                    raise ToolLimit(f"{name} did not finish within {timeout:.0f} s")
                size = max(out_path.stat().st_size, err_path.stat().st_size)
                if size > output_limit:
                    raise ToolLimit(
                        f"{name} printed more than {output_limit // MIB} MiB; the input is "
                        "too large or malformed"
                    )
                polls += 1
                said = watch.check() if watch is not None and polls % WATCH_EVERY == 0 else None
                if said is not None:
                    raise ToolRefused(said)
        finally:
            _end_group(proc)
            _LIVE.pop(proc.pid, None)
        if proc.returncode == -signal.SIGXFSZ:
            raise ToolLimit(
                f"{name} was stopped: it wrote more than {(file_limit or 0) // MIB} MiB to one "
                "file (a compressed cubin that unpacks to more than that?)"
            )
        return Finished(
            proc.returncode, _read(out_path, output_limit), _read(err_path, output_limit)
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
