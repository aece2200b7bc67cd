"""Whether a running tool has opened, or waits to open, a file that is no regular file.

A compile reads what its source names, and a computed ``#include`` (``#define H "pipe"``,
``#include H``) may name a FIFO, whose opening waits for a writer for ever, or a device that
reads without end (``/dev/zero``, a terminal). :class:`SpecialOpens` looks at the processes
of a tool's process group (Linux's ``/proc``; nothing elsewhere) while it runs and says, in
words, the first such file it finds:

* an open file descriptor whose file is a FIFO, a device or a socket with a name (not the
  anonymous pipes a tool's processes talk through), but for ``/dev/null`` and the random
  devices a compiler reads a seed from (those only while open for less than
  :data:`RANDOM_SECONDS`);
* a process waiting in ``open`` for the other end of a FIFO (``wait_for_partner``), or
  sleeping in ``open``/``openat`` for :data:`OPEN_SECONDS`: the name it opens is read from
  its memory where Linux lets its parent's process do so.
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
#: how long a process may sleep in one open() before it is taken to wait on a FIFO
OPEN_SECONDS = 2.0
_HARMLESS = frozenset({"/dev/null"})
_RANDOM = frozenset({"/dev/urandom", "/dev/random"})
#: the numbers of open, openat and openat2 on the architectures Linux names so
_OPEN_CALLS = {"x86_64": {2, 257, 437}, "aarch64": {56, 437}}


@frozen
class Seen:
    """A special file held open, or an open() waited in, since ``since`` (monotonic)."""

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
            if target in _HARMLESS:
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
        first = self.seen.setdefault((pid, "open", waiting), Seen(now)).since
        if _read(f"/proc/{pid}/wchan") == "wait_for_partner" or now - first >= OPEN_SECONDS:
            return f"{name} waits to open {waiting}, a FIFO (named pipe) nobody writes"
        return None


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096)
    except OSError:
        return ""


def _members(pgid: int) -> list[int]:
    """The live processes of the process group ``pgid``."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    out = []
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = _read(f"/proc/{entry}/stat").rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            out.append(int(entry))
    return out


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
    """The file ``pid`` sleeps opening (its name where its memory can be read, else a word),
    or None where it is in no open()."""
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
        return "a file"
    name = os.fsdecode(raw)
    if not name.startswith("/"):
        with contextlib.suppress(OSError):
            name = os.path.join(os.readlink(f"/proc/{pid}/cwd"), name)
    return os.path.normpath(name)
