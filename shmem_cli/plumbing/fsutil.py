"""Writing output files safely: whole or not at all, and never over what is not ours.

Rules (docs/robustness.md, "Writing files"):

* A regular file, or a name that does not exist yet, is written to a temporary
  file beside it and renamed into place, so a crash, a full disk or Ctrl-C never
  leaves half a file: the old file survives byte for byte.
* Anything else that exists (``/dev/null``, a terminal, a FIFO, ``/dev/stdout``)
  is written in place, never renamed over; a FIFO nobody reads is refused
  instead of waiting for a reader.
* Symbolic links are followed: the file the link points to is replaced and the
  link stays a link.
* The folder must exist; shmem does not create folders for an output file.
* Text is written as UTF-8; a file name's byte that is not UTF-8 (it reaches us as a lone
  surrogate) is spelled ``\\xff`` as in every JSON output (``json_text.spelled``), in
  text, GitHub annotations and JUnit alike; what else cannot be encoded is a backslash escape.

Every failure is an :class:`OutputError` naming the file and the reason.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import IO

from .errors import ShmemError, shorten
from .json_text import spelled

#: What the operating system's terse error names mean, in words.
_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder",
    errno.ENXIO: "it is a FIFO that nobody reads",
    errno.EPIPE: "the reader has gone away (broken pipe)",
    errno.ENAMETOOLONG: "the name is too long",
    errno.ELOOP: "too many levels of symbolic links",
}


#: the words of a refused output that names an input (lint looks for them in its findings)
OVERWRITE = "refusing to write over the input"


class OutputError(ShmemError):
    """An output file could not be written; the message says which file and why."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message, path=path, code="output")


def reason(exc: OSError) -> str:
    """A short, human reason for an operating-system error."""
    if exc.errno in _REASONS:
        return _REASONS[exc.errno]
    return shorten(exc.strerror or type(exc).__name__)


def encode(text: str) -> bytes:
    """UTF-8 bytes of ``text``; a file name's stray byte spelled ``\\xff`` (as JSON spells
    it), any other unencodable character a backslash escape."""
    return spelled(text).encode("utf-8", errors="backslashreplace")


def display(path: str | os.PathLike[str]) -> str:
    """A path as text that can always be printed (a stray byte spelled ``\\xff``)."""
    return spelled(os.fspath(path)).encode("utf-8", "backslashreplace").decode("utf-8")


def printable(text: str, stream: IO[str]) -> str:
    """``text`` with whatever ``stream``'s encoding cannot hold written as backslash escapes."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    text = spelled(text)  # a file name's stray byte: \xff, as in the JSON outputs
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, errors="backslashreplace").decode(encoding)
    return text


@contextlib.contextmanager
def stdout_guard(stream: IO[str] | None = None) -> Iterator[None]:
    """Turn a failed write to standard output (closed or full pipe) into an OutputError.

    Standard output is then pointed at the null device, so that Python's own flush
    at exit does not fail a second time.
    """
    try:
        yield
    except OSError as exc:
        with contextlib.suppress(OSError, ValueError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, (stream or sys.stdout).fileno())
            os.close(null)
        raise OutputError(f"cannot write the report: {reason(exc)}", "<standard output>") from None


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` by the rules of this module; raises :class:`OutputError`."""
    write_bytes(path, encode(text))


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` by the rules of this module; raises :class:`OutputError`."""
    name = os.fspath(path)
    shown = display(name)
    try:
        found: os.stat_result | None = os.stat(name)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise OutputError(f"cannot write: {reason(exc)}", shown) from None
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise OutputError("cannot write: it is a folder; name a file instead", shown)
    if found is not None and (not stat.S_ISREG(found.st_mode) or _is_proc_link(name)):
        _write_in_place(name, shown, data)
        return
    target = os.path.realpath(name)  # a symbolic link stays; the file it names is replaced
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        if os.path.exists(folder):
            raise OutputError(f"cannot write: {display(folder)} is a file, not a folder", shown)
        raise OutputError(
            f"cannot write: the folder {display(folder)} does not exist "
            "(create it first, e.g. with mkdir -p)",
            shown,
        )
    _replace(target, folder, shown, data)


def _is_proc_link(name: str) -> bool:
    """``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/1``: an open file, not a name to replace."""
    return os.path.realpath(name).startswith("/proc/")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_in_place(name: str, shown: str, data: bytes) -> None:
    """Devices, FIFOs, terminals and open files: open them and write, nothing else."""
    flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise OutputError(f"cannot write: {reason(exc)}", shown) from None
    try:
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.ftruncate(fd, 0)
        os.set_blocking(fd, True)  # the open must not wait for a reader; the writes may
        _write_all(fd, data)
    except OSError as exc:
        raise OutputError(f"cannot write: {reason(exc)}", shown) from None
    finally:
        os.close(fd)


def _replace(target: str, folder: str, shown: str, data: bytes) -> None:
    base = os.path.basename(target)
    try:
        import tempfile  # here: it imports shutil, random and hashlib, ms of start-up

        fd, tmp = tempfile.mkstemp(prefix=f".{base[:64]}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write: {reason(exc)}", shown) from None
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError(
                f"cannot write: {reason(exc)} (the old file, if any, is unchanged)", shown
            ) from None
        raise


def _mode_for(target: str) -> int:
    """The mode a plain write would give: the existing file's, else 0666 minus the umask."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def make_folder(path: str | os.PathLike[str]) -> None:
    """Create the output folder ``path`` (``verify --emit DIR``) if it is not there yet.

    Only the folder itself is created: its parent must exist, as for output files.
    Raises :class:`OutputError`.
    """
    name = os.fspath(path)
    shown = display(name)
    if os.path.isdir(name):
        return
    if os.path.lexists(name):
        raise OutputError("cannot create the folder: a file of that name exists", shown)
    try:
        os.mkdir(name)
    except FileNotFoundError:
        parent = os.path.dirname(os.path.abspath(name))
        raise OutputError(
            f"cannot create the folder: {display(parent)} does not exist "
            "(create it first, e.g. with mkdir -p)",
            shown,
        ) from None
    except OSError as exc:
        raise OutputError(f"cannot create the folder: {reason(exc)}", shown) from None


def append_text(path: str | os.PathLike[str], text: str) -> None:
    """Append ``text`` to a log someone else owns (``$GITHUB_STEP_SUMMARY``).

    Only a regular file (or a new one) is appended to: a FIFO or device is refused
    rather than waited on. Raises :class:`OutputError`.
    """
    name = os.fspath(path)
    shown = display(name)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(name, flags, 0o666)
    except OSError as exc:
        raise OutputError(f"cannot append: {reason(exc)}", shown) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OutputError("cannot append: not a regular file", shown)
        os.set_blocking(fd, True)
        _write_all(fd, encode(text))
    except OSError as exc:
        raise OutputError(f"cannot append: {reason(exc)}", shown) from None
    finally:
        os.close(fd)


def check_outputs(
    outputs: Iterable[str | os.PathLike[str] | None],
    inputs: Iterable[str | os.PathLike[str]],
    folder_suffixes: tuple[str, ...] = (".yaml", ".yml"),
) -> None:
    """Refuse, before any work, outputs that would overwrite an input or another output, or
    cannot be created.

    An output names an input when it is the same file as an input file, or an
    existing file inside an input folder with one of ``folder_suffixes`` (a spec that
    would be read; for a Triton cache folder, the entry's ``.json``, ``.cubin``, ...).
    Raises :class:`OutputError`.
    """
    sources = [os.fspath(p) for p in inputs]
    earlier: list[str] = []
    for out in outputs:
        if out is None:
            continue
        name = os.fspath(out)
        shown = display(name)
        twice = next((e for e in earlier if _same_output(name, e)), None)
        if twice is not None:
            also = "" if display(twice) == shown else f" (also named {display(twice)})"
            raise OutputError(
                f"refusing to write two outputs to one file{also}: the second would replace "
                "the first; give each output its own file",
                shown,
            )
        earlier.append(name)
        for source in sources:
            if _overwrites(name, source, folder_suffixes):
                raise OutputError(
                    f"{OVERWRITE} {display(source)}; choose another output file", shown
                )
        try:
            found = os.stat(name)
        except FileNotFoundError:
            found = None
        except OSError as exc:
            raise OutputError(f"cannot write: {reason(exc)}", shown) from None
        if found is not None and stat.S_ISDIR(found.st_mode):
            raise OutputError("cannot write: it is a folder; name a file instead", shown)
        if found is None:
            folder = os.path.dirname(os.path.realpath(name)) or "."
            if not os.path.isdir(folder):
                what = "is a file, not a folder" if os.path.exists(folder) else "does not exist"
                raise OutputError(
                    f"cannot write: the folder {display(folder)} {what}"
                    + (
                        " (create it first, e.g. with mkdir -p)" if what == "does not exist" else ""
                    ),
                    shown,
                )


def _same_output(one: str, other: str) -> bool:
    """Whether two outputs name one file that a write would replace (a device, a FIFO or
    standard output written twice is fine: both go through)."""
    try:
        if not stat.S_ISREG(os.stat(one).st_mode):
            return False
        return os.path.samefile(one, other)
    except FileNotFoundError:  # not there yet: the same path once links are followed
        return os.path.realpath(one) == os.path.realpath(other)
    except OSError:
        return False


def _overwrites(output: str, source: str, folder_suffixes: tuple[str, ...]) -> bool:
    try:
        out_stat = os.stat(output)
    except OSError:
        return False
    if not stat.S_ISREG(out_stat.st_mode):
        return False
    try:
        if os.path.samefile(output, source):
            return True
    except OSError:
        return False
    if not os.path.isdir(source) or not output.endswith(folder_suffixes):
        return False
    real_dir = os.path.realpath(source)
    real_out = os.path.realpath(output)
    return os.path.commonpath([real_dir, real_out]) == real_dir


def missing(path: str, plain: str = "no such file or directory") -> str:
    """Why ``path`` is not there: no such name (``plain``), a link to nothing, or a loop of
    links."""
    if not os.path.islink(path):
        return plain
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a loop of links (each links to the next, and none to a file or folder)"
    try:
        target = os.readlink(path)
    except OSError:  # gone since
        return plain
    return f"a link to nothing (it names {shorten(target)!r}, which is not there)"
