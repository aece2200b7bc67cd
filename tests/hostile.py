"""What the hostile-input tests share (issue 28): a ``shmem`` process with its time, peak
memory, the files it opened and the programs it ran, and the checks every refusal must pass.

Each hostile input must end (within :data:`~tests.conftest.HANG_S`, a liveness guard, not a
speed target: what stopped it is proved by its message), with exit status 2 (or a result), a
short message that names the input, no traceback, and less than 1 GiB of memory at its peak;
it must leave no temporary file and no process behind, write nothing, run no program but
NVIDIA's tools and read nothing outside what it was given.

* The peak is the process's own high-water mark (``VmHWM`` of /proc/self/status, where there
  is one: its memory since it was started; ``ru_maxrss`` would also count the test process it
  was forked from), written by the process itself when it ends.
* What it opened, wrote, removed and ran is recorded by a Python audit hook
  (:func:`sys.addaudithook`: every ``open``, ``os.open``, rename, removal, folder and
  ``subprocess`` in the process), written out when it ends. The tools it runs are not
  followed (nvdisasm's reads are its own).
* It runs with ``TMPDIR`` set to a fresh, empty folder, which must be empty again afterwards;
  and with a marker in its environment, which every child inherits: no process holding the
  marker may be alive once it has ended.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .conftest import HANG_S, TEST_DATA

HOSTILE = TEST_DATA / "hostile"
CUBIN = HOSTILE / "hostile.sm_90.cubin"
CUBIN2 = HOSTILE / "hostile2.sm_90.cubin"
PEAK_LIMIT_MIB = 1024
REPO = Path(__file__).resolve().parent.parent
#: the programs shmem may run (NVIDIA's tools and the host compiler nvcc's --dryrun names)
TOOLS = frozenset({"nvcc", "nvdisasm", "cuobjdump", "cu++filt", "c++filt", "g++", "gcc", "c++"})

_PROGRAM = """
import json, os, resource, sys

_events = []
_WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

def _name(path):
    if isinstance(path, int):
        return None
    try:
        return os.path.abspath(os.fsdecode(path))
    except Exception:
        return repr(path)

def _hook(event, args):
    try:
        if event == "open":
            path, mode, flags = args
            name = _name(path)
            if name is not None:
                writing = any(c in (mode or "") for c in "wax+") or bool((flags or 0) & _WRITE)
                _events.append(("write" if writing else "read", name))
        elif event in ("os.rename", "os.replace", "os.link", "os.symlink"):
            _events.append(("write", _name(args[1])))
        elif event in ("os.remove", "os.rmdir", "os.mkdir", "os.truncate", "shutil.rmtree"):
            _events.append(("write", _name(args[0])))
        elif event == "subprocess.Popen":
            _events.append(("run", _name(args[0])))
        elif event in ("os.system", "os.exec", "os.posix_spawn", "os.spawn"):
            _events.append(("run", repr(args)[:200]))
    except Exception:
        pass

sys.addaudithook(_hook)
import shutil
shutil._use_fd_functions = False  # rmtree by full paths: its removals are seen where they are
from shmem_cli.cli import main
try:
    main(args=sys.argv[1:], prog_name="shmem")
finally:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    if os.path.exists("/proc/self/status"):
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) // 1024
    record = {"peak": peak, "events": _events}
    with open(os.environ["SHMEM_TEST_PEAK"], "w") as fh:
        fh.write(json.dumps(record))
"""


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_mib: int
    #: (what, path): "read", "write" (also renamed, removed, a folder made), "run" (a program)
    events: tuple[tuple[str, str], ...] = ()
    #: files left in the process's own TMPDIR
    left_files: tuple[str, ...] = ()
    #: processes still alive that it started (their command lines)
    left_processes: tuple[str, ...] = ()
    args: tuple[str, ...] = field(default=())
    #: the run's own folder (its TMPDIR, cache and record): what it does there is its own
    scratch: str = ""

    @property
    def text(self) -> str:
        return self.stdout + self.stderr

    def paths(self, what: str) -> list[str]:
        return [path for kind, path in self.events if kind == what]

    def opened(self, path: Path | str) -> bool:
        """Whether the process read or wrote ``path`` (or anything under it)."""
        target = os.path.realpath(path)
        for _, name in self.events:
            real = os.path.realpath(name) if name else ""
            if real == target or real.startswith(target + os.sep):
                return True
        return False


def _marked_processes(marker: str) -> list[str]:
    """Command lines of the live processes whose environment holds ``marker``."""
    found = []
    needle = f"SHMEM_TEST_MARK={marker}".encode()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle not in fh.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                found.append(fh.read().replace(b"\0", b" ").decode(errors="replace")[:200])
        except OSError:  # gone, or not ours
            continue
    return found


def shmem(
    *args: str, cwd: Path | None = None, timeout: float = 60.0, env: dict[str, str] | None = None
) -> Ran:
    """``shmem ARGS`` as a process of its own (a hang fails the test at ``timeout``)."""
    scratch = Path(tempfile.mkdtemp(prefix="shmem-hostile-"))
    tmpdir = scratch / "tmp"
    tmpdir.mkdir()
    peak_file = scratch / "peak.json"
    marker = uuid.uuid4().hex
    environment = {
        **os.environ,
        **(env or {}),
        "SHMEM_TEST_PEAK": str(peak_file),
        "SHMEM_TEST_MARK": marker,
        "TMPDIR": str(tmpdir),
    }
    start = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROGRAM, *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
            cwd=cwd,
            env=environment,
        )
        seconds = time.monotonic() - start
        record = json.loads(peak_file.read_text() or "{}") if peak_file.exists() else {}
        left_files = tuple(str(path.relative_to(tmpdir)) for path in sorted(tmpdir.rglob("*")))
        left = _marked_processes(marker)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    own = os.path.realpath(scratch)
    events = tuple(
        (kind, path)
        for kind, path in record.get("events", ())
        if path and not (kind != "run" and _under(path, [own]))
    )
    return Ran(
        done.returncode,
        done.stdout,
        done.stderr,
        seconds,
        int(record.get("peak", 0)),
        events,
        left_files,
        tuple(left),
        tuple(args),
        own,
    )


def _under(path: str, roots: Iterable[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


#: what any Python process reads: the interpreter, its libraries, the system's configuration
_SYSTEM = tuple(
    os.path.realpath(p)
    for p in {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        *sysconfig.get_paths().values(),
        "/proc",
        "/sys",
        "/dev/null",
        "/dev/urandom",
        "/etc",
        "/usr",
        "/lib",
        "/lib64",
        "/opt",
    }
)


def _given(args: Iterable[str]) -> list[str]:
    """The folders of every path named in ``args`` (``X``, ``@X``, ``NAME=@X``, ``--opt=X``)."""
    folders = []
    for arg in args:
        for part in (arg, arg.split("=", 1)[-1]):
            text = part.lstrip("@")
            if text and len(text) < 4096 and os.path.exists(text):
                real = os.path.realpath(text)
                folders.append(real if os.path.isdir(real) else os.path.dirname(real))
    return folders


def quiet(ran: Ran, *, roots: Iterable[Path | str] = ()) -> None:
    """Nothing left behind (temporary files, processes), no program but NVIDIA's tools run,
    nothing written, and nothing read outside the interpreter, the project and the folders
    of the paths the command was given (and ``roots``)."""
    assert not ran.left_files, ran.left_files
    assert not ran.left_processes, ran.left_processes
    ran_programs = {os.path.basename(path) for path in ran.paths("run")}
    assert ran_programs <= TOOLS, ran_programs
    assert not ran.paths("write"), ran.paths("write")[:20]
    allowed = (*_SYSTEM, str(REPO), *_given(ran.args), *(os.path.realpath(r) for r in roots))
    outside = [path for path in ran.paths("read") if not _under(path, allowed)]
    assert not outside, outside[:20]


def refused(
    ran: Ran, *fragments: str, seconds: float = HANG_S, roots: Iterable[Path | str] = ()
) -> None:
    """Exit 2, never a hang (``seconds``: HANG_S, more for a run the full budget allows),
    under 1 GiB, no traceback, short lines, every fragment said, and
    nothing left, run, written or read outside the request (:func:`quiet`)."""
    assert ran.code == 2, ran.text[-2000:]
    assert "Traceback" not in ran.text, ran.text[-2000:]
    assert ran.seconds < seconds, ran.seconds
    assert ran.peak_mib < PEAK_LIMIT_MIB, ran.peak_mib
    assert max(len(line) for line in ran.text.splitlines()) <= 400, ran.text[:2000]
    for fragment in fragments:
        assert fragment in ran.text, (fragment, ran.text[-2000:])
    quiet(ran, roots=roots)
