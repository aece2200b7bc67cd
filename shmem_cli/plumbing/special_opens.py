"""Whether a running tool has opened, or waits to open, a file that is no regular file.

A compile reads what its source names, and a computed ``#include`` (``#define H "pipe"``,
``#include H``) may name a FIFO, whose opening waits for a writer for ever, or a device that
reads without end (``/dev/zero``, a terminal). :class:`SpecialOpens` looks at the processes
of a tool's process group (Linux's ``/proc``; nothing elsewhere) while it runs and says, in
words, the first such file it finds:

* an open file descriptor whose file is a FIFO, a device or a socket with a name (not the
  anonymous pipes a tool's processes talk through), but for ``/dev/null``, the GPU driver's
  devices and the random devices a compiler reads a seed from (those only while open for
  less than :data:`RANDOM_SECONDS`);
* a process asleep in ``open``/``openat`` on a FIFO: the name it opens is read from its
  memory where Linux lets shmem do so (its own child's), else told by where it waits
  (``wait_for_partner``, Linux's wait for a FIFO's other end).
"""

from __future__ import annotations

import contextlib
import os
import platform
import stat
import time

from .bounded_read import kind_of
from .frozen import frozen

#: how long a random device may stay open in one process (cicc reads 4 bytes of a seed)
RANDOM_SECONDS = 1.0
_HARMLESS = frozenset({"/dev/null"})
#: the driver's devices (``/dev/nvidiactl``, ``/dev/nvidia0``, ``/dev/nvidia-uvm``): a tool
#: that asks the GPU (``nvcc -arch=native``) opens them, and they are read without waiting
_DRIVER = "/dev/nvidia"
_RANDOM = frozenset({"/dev/urandom", "/dev/random"})
#: the numbers of open, openat and openat2 on the architectures Linux names so
_OPEN_CALLS = {"x86_64": {2, 257, 437}, "aarch64": {56, 437}}
_MAX_MEMBERS = 4096  # processes of one group looked at
_AT_FDCWD = 0xFFFFFF9C  # openat's "the current folder", as /proc/PID/syscall shows it


@frozen
class Seen:
    """A random device held open since ``since`` (monotonic)."""

    since: float


class SpecialOpens:
    """The watcher of one tool's process group: call :meth:`check` now and then."""

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid
        self.seen: dict[tuple[int, str, str], Seen] = {}

    def check(self) -> str | None:
        """Words for the first special file a process of the group opened or waits to open
        (``"cc1plus opened /x/pipe, a FIFO (named pipe)"``), or None."""
        now = time.monotonic()
        for pid in _members(self.pgid):
            said = self._process(pid, now)
            if said is not None:
                return said
        return None

    def _process(self, pid: int, now: float) -> str | None:
        name = _read(f"/proc/{pid}/comm").strip() or "a process"
        for fd, target, mode in _open_files(pid):
            if target in _HARMLESS or target.startswith(_DRIVER):
                continue
            if target in _RANDOM:
                first = self.seen.setdefault((pid, fd, target), Seen(now)).since
                if now - first < RANDOM_SECONDS:
                    continue
                return f"{name} reads {target} without end"
            return f"{name} opened {target}, {kind_of(mode)}"
        waiting = _waits_in_open(pid)
        if waiting is None:
            return None
        if _is_fifo(waiting) or _read(f"/proc/{pid}/wchan") == "wait_for_partner":
            return f"{name} waits to open {waiting or 'a file'}, a FIFO (named pipe) nobody writes"
        return None


def _is_fifo(name: str) -> bool:
    try:
        return bool(name) and stat.S_ISFIFO(os.stat(name).st_mode)
    except (OSError, ValueError):
        return False


def _read(path: str, *, strict: bool = False) -> str:
    """The start of a ``/proc`` file ("" where it cannot be read; ``strict``: an OSError)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(1 << 16)
    except OSError:
        if strict:
            raise
        return ""


def _members(pgid: int) -> list[int]:
    """The live processes of the process group ``pgid`` (whose leader is process ``pgid``):
    its leader's descendants, found through each thread's ``children`` (a few files for a
    compile's five processes), else every process's ``stat`` (a machine's thousands)."""
    found: list[int] = []
    todo = [pgid]
    while todo and len(found) < _MAX_MEMBERS:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
            lists = [_read(f"/proc/{pid}/task/{t}/children", strict=True) for t in tasks]
        except OSError:
            if pid == pgid and not os.path.exists(f"/proc/{pid}/task/{pid}/children"):
                return _members_by_stat(pgid)  # a kernel without the children files
            continue  # gone meanwhile
        if _in_group(pid, pgid):
            found.append(pid)
        todo += [int(w) for text in lists for w in text.split() if w.isdigit()]
    return found


def _in_group(pid: int, pgid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process of the group ``pgid``."""
    fields = _read(f"/proc/{pid}/stat").rsplit(")", 1)[-1].split()
    return len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z"


def _members_by_stat(pgid: int) -> list[int]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    return [int(e) for e in entries if e.isdigit() and _in_group(int(e), pgid)]


def _open_files(pid: int) -> list[tuple[str, str, int]]:
    """``pid``'s open files with a name that are no regular file or folder: (fd, name, mode)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    out = []
    for fd in fds:
        link = f"/proc/{pid}/fd/{fd}"
        try:
            target = os.readlink(link)
            mode = os.stat(link).st_mode
        except OSError:
            continue
        if target.startswith("/") and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            out.append((fd, target, mode))
    return out


def _waits_in_open(pid: int) -> str | None:
    """The file ``pid`` sleeps opening ("" where its name cannot be read), or None where it is
    in no open()."""
    calls = _OPEN_CALLS.get(platform.machine(), set())
    words = _read(f"/proc/{pid}/syscall").split()
    if len(words) < 3 or not words[0].isdigit() or int(words[0]) not in calls:
        return None
    try:
        at = int(words[1 if int(words[0]) == 2 else 2], 16)
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
            mem.seek(at)
            raw = mem.read(4096).split(b"\0", 1)[0]
    except (OSError, ValueError, OverflowError):
        return ""
    name = os.fsdecode(raw)
    if not name.startswith("/"):
        folder = f"/proc/{pid}/cwd"
        if int(words[0]) != 2 and int(words[1], 16) & 0xFFFFFFFF != _AT_FDCWD:
            folder = f"/proc/{pid}/fd/{int(words[1], 16) & 0xFFFFFFFF}"
        with contextlib.suppress(OSError):
            name = os.path.join(os.readlink(folder), name)
    return os.path.normpath(name)
