"""What the hostile-input tests share (issue 28): a ``shmem`` process with its time and peak
memory, and the checks every refusal must pass.

Each hostile input must end in seconds, with exit status 2 (or a result), a short message
that names the input, no traceback, and less than 1 GiB of memory at its peak. The peak is
the process's own high-water mark (``VmHWM`` of /proc/self/status, where there is one: its
memory since it was started; ``ru_maxrss`` would also count the test process it was forked
from), written by the process itself when it ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .conftest import TEST_DATA

HOSTILE = TEST_DATA / "hostile"
CUBIN = HOSTILE / "hostile.sm_90.cubin"
PEAK_LIMIT_MIB = 1024

_PROGRAM = """
import os, resource, sys
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
    with open(os.environ["SHMEM_TEST_PEAK"], "w") as fh:
        fh.write(str(peak))
"""


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_mib: int

    @property
    def text(self) -> str:
        return self.stdout + self.stderr


def shmem(*args: str, cwd: Path | None = None, timeout: float = 60.0) -> Ran:
    """``shmem ARGS`` as a process of its own (a hang fails the test at ``timeout``)."""
    peak_file = (
        Path(os.environ.get("TMPDIR", "/tmp")) / f"shmem-peak-{os.getpid()}-{time.time_ns()}"
    )
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
            env={**os.environ, "SHMEM_TEST_PEAK": str(peak_file)},
        )
        seconds = time.monotonic() - start
        peak = int(peak_file.read_text() or 0) if peak_file.exists() else 0
    finally:
        peak_file.unlink(missing_ok=True)
    return Ran(done.returncode, done.stdout, done.stderr, seconds, peak)


def refused(ran: Ran, *fragments: str, seconds: float = 20.0) -> None:
    """Exit 2, in seconds, under 1 GiB, no traceback, short lines, and every fragment said."""
    assert ran.code == 2, ran.text[-2000:]
    assert "Traceback" not in ran.text, ran.text[-2000:]
    assert ran.seconds < seconds, ran.seconds
    assert ran.peak_mib < PEAK_LIMIT_MIB, ran.peak_mib
    assert max(len(line) for line in ran.text.splitlines()) <= 400, ran.text[:2000]
    for fragment in fragments:
        assert fragment in ran.text, (fragment, ran.text[-2000:])
