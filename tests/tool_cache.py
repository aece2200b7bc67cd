"""nvdisasm's output kept for one test session, so that a cubin many tests trace is
disassembled once (nvdisasm takes about 0.45 s to start, whatever the cubin; the suite
disassembles a few dozen cubins some hundreds of times).

The conftest puts a folder first on ``PATH`` whose ``nvdisasm`` runs this file as a program
(``python -IS tool_cache.py REAL CACHE ARGS...``), so shmem, in the test process and in the
processes the tests start, finds it as it finds the real tool. It answers from the cache
what the real tool printed for the same run: the same tool (path, size, time), the same
arguments, and the same bytes in every file an argument names. Anything else runs the real
tool:

* a run that fails, or whose output (standard output or error) names one of its files, is
  passed on and not kept (a run that succeeds is kept whole: nvdisasm warns on its standard
  error about every Triton cubin);
* a run that names something other than a plain file (a FIFO, a device, a folder) is the
  real tool itself (``exec``), never looked up.

The real tool runs under the limits shmem gave this process (they are inherited) and its
exit status (a signal included) is this process's. Set ``SHMEM_TEST_TOOL_CACHE=off`` to run
the real tool every time.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import tempfile

CHUNK = 1 << 20


def _file_digest(path: str) -> bytes:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.digest()


def run_key(real: str, args: list[str]) -> str | None:
    """The key of a run, or None when it must not be looked up (an argument names
    something that is not a plain file)."""
    h = hashlib.sha256()
    st = os.stat(real)
    h.update(f"{os.path.realpath(real)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    for arg in args:
        if os.path.isfile(arg):
            h.update(b"file\0" + _file_digest(arg))
        elif os.path.exists(arg):
            return None
        else:
            h.update(b"arg\0" + os.fsencode(arg) + b"\0")
    return h.hexdigest()


def _names_a_file(args: list[str], *outputs: str) -> bool:
    """Whether an output names a file the run was given (then it depends on the path)."""
    names = [os.fsencode(arg) for arg in args if os.path.isfile(arg)]
    for path in outputs:
        with open(path, "rb") as fh:
            text = fh.read()
        if any(name in text for name in names):
            return True
    return False


def _copy(path: str, fd: int) -> None:
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            os.write(fd, chunk)


def _exit_as(code: int) -> None:
    if code < 0:  # ended by a signal: end this process the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def main(argv: list[str]) -> None:
    real, cache, args = argv[1], argv[2], argv[3:]
    key = None if os.environ.get("SHMEM_TEST_TOOL_CACHE") == "off" else run_key(real, args)
    if key is None:
        os.execv(real, [real, *args])
    kept = os.path.join(cache, key)
    if os.path.isfile(kept):  # written last: its standard error is there too
        _copy(kept + ".err", 2)
        _copy(kept, 1)
        return
    fd_out, out = tempfile.mkstemp(dir=cache, prefix="run-")
    fd_err, err = tempfile.mkstemp(dir=cache, prefix="run-")
    try:
        code = subprocess.run([real, *args], stdout=fd_out, stderr=fd_err, check=False).returncode
        os.close(fd_out)
        os.close(fd_err)
        _copy(err, 2)
        _copy(out, 1)
        if code == 0 and not _names_a_file(args, out, err):
            os.replace(err, kept + ".err")  # each whole or not at all: another process may
            os.replace(out, kept)  # read them, and finds the run once its output is there
    finally:
        for path in (out, err):
            if os.path.exists(path):
                os.remove(path)
    _exit_as(code)


if __name__ == "__main__":
    main(sys.argv)
