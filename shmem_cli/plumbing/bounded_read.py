"""Reading input files with a size bound, and never waiting on one.

Every file shmem reads (specs, baselines, ncu CSVs, SASS dumps, manifests) comes
through here:

* Only regular files are read. A FIFO, a device (``/dev/zero``), a socket or a
  terminal is refused at once instead of read without end or waited on (the
  file is opened non-blocking, so even opening a FIFO nobody writes returns).
  Standard input (``-``) is the caller's business.
* At most ``limit`` bytes are read; a bigger file is refused with the limit in
  the message, so memory stays bounded however large the file.
* A gzip-compressed file is unpacked as it is read, with the same bound on the
  unpacked size (a "gzip bomb" stops at the bound).

Failures are :class:`~shmem_cli.plumbing.errors.ShmemError` naming the file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator
from typing import IO

from .errors import ShmemError, SourcePos, shorten

MIB = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
#: the byte-order marks of UTF-16 (little- and big-endian): what Windows PowerShell's ``>``
#: writes; every text shmem reads is UTF-8, in which such a file is every other byte a NUL
UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
#: those of UTF-32 (little- and big-endian), looked for first: UTF-32LE's starts as UTF-16LE's
UTF32_MARKS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def kind_of(mode: int) -> str:
    """A file type in words (``"a FIFO (named pipe)"``), from its ``st_mode``."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _size_words(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit % MIB == 0 else f"{limit} bytes"


def open_regular(name: str, what: str, code: str) -> int:
    """A file descriptor of the regular file ``name``, open for reading (the caller closes
    it); a FIFO, device, socket or folder is refused at once, without waiting."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(name, flags)
    except FileNotFoundError:
        raise ShmemError(f"cannot read {what}: no such file", path=name, code=code) from None
    except OSError as exc:
        why = shorten(
            "it is a directory" if exc.errno == errno.EISDIR else exc.strerror or type(exc).__name__
        )
        with contextlib.suppress(OSError, ValueError):  # a socket cannot be opened (ENXIO)
            if stat.S_ISSOCK(os.stat(name).st_mode):
                why = "it is a socket, not a regular file (save the data to a file and name it)"
        raise ShmemError(f"cannot read {what}: {why}", path=name, code=code) from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        raise ShmemError(f"cannot read {what}: it is a directory", path=name, code=code)
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ShmemError(
            f"cannot read {what}: it is {kind_of(mode)}, not a regular file "
            "(save the data to a file and name that file)",
            path=name,
            code=code,
        )
    os.set_blocking(fd, True)
    return fd


def read_prefix(
    path: str | os.PathLike[str], limit: int, *, what: str = "file", code: str = "input"
) -> bytes:
    """At most ``limit`` bytes from the start of a regular file (no error if it is longer)."""
    name = os.fspath(path)
    fd = open_regular(name, what, code)
    try:
        parts: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 4 * MIB))
            if not chunk:
                break
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)
    except OSError as exc:
        why = shorten(exc.strerror or type(exc).__name__)
        raise ShmemError(f"cannot read {what}: {why}", path=name, code=code) from None
    finally:
        os.close(fd)


#: what says a file is the one looked at before: (size, modification time in ns, inode, device)
Stamp = tuple[int, int, int, int]


def _stamp(fd: int) -> Stamp:
    st = os.fstat(fd)
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev


def regular_stamp(path: str, limit: int, *, what: str = "file", code: str = "input") -> Stamp:
    """The :data:`Stamp` of the regular file ``path`` (refused as :func:`read_bounded`
    refuses it: not a regular file, or larger than ``limit`` bytes), read from nothing but
    its inode; its first item is the file's size."""
    fd = open_regular(path, what, code)
    try:
        stamp = _stamp(fd)
    finally:
        os.close(fd)
    if stamp[0] > limit:
        raise _too_large(path, limit, what, code)
    return stamp


def read_into(
    path: str,
    out: memoryview,
    offset: int,
    stamp: Stamp,
    *,
    what: str = "file",
    code: str = "input",
) -> None:
    """Bytes [offset, offset + len(out)) of the regular file ``path`` read straight into
    ``out`` (nothing else holds them); the file must still be the one the caller looked at
    (its ``stamp``, :func:`regular_stamp`: the same size, time of change and inode)."""
    fd = open_regular(path, what, code)
    try:
        now = _stamp(fd)
        if now != stamp:
            how = (
                f"{stamp[0]:,} bytes, now {now[0]:,}"
                if now[0] != stamp[0]
                else "written or replaced since it was looked at"
            )
            raise ShmemError(
                f"cannot read {what}: it changed while shmem ran ({how}); give a file nothing "
                "writes to",
                path=path,
                code=code,
            )
        done = 0
        while done < len(out):
            got = os.preadv(fd, [out[done:]], offset + done)
            if not got:
                raise ShmemError(f"cannot read {what}: it ends too soon", path=path, code=code)
            done += got
    except OSError as exc:
        why = shorten(exc.strerror or type(exc).__name__)
        raise ShmemError(f"cannot read {what}: {why}", path=path, code=code) from None
    finally:
        os.close(fd)


#: gzip members of one file (a tool writes one; ``cat a.gz b.gz`` a few)
MAX_GZIP_MEMBERS = 10_000


def read_bounded(
    path: str | os.PathLike[str],
    limit: int,
    *,
    what: str = "file",
    code: str = "input",
    gunzip: bool = False,
    text: bool = False,
) -> bytes:
    """The whole of a regular file, refused if it (or, gzip-compressed, its content)
    is larger than ``limit`` bytes; with ``text``, also if it is UTF-16 or UTF-32
    (:func:`wide_encoding`)."""
    name = os.fspath(path)
    with contextlib.suppress(OSError):
        if os.stat(name).st_size > limit:  # refused without reading it
            raise _too_large(name, limit, what, code)
    data = read_prefix(name, limit + 1, what=what, code=code)
    if gunzip and len(data) <= limit and data[:2] == GZIP_MAGIC:
        data = _gunzip(data, limit + 1, name, what, code)
    if len(data) > limit:
        raise _too_large(name, limit, what, code)
    if text and (encoding := wide_encoding(data)):
        raise encoding_error(name, encoding, code)
    return data


def wide_encoding(data: bytes) -> str | None:
    """``"UTF-32"`` or ``"UTF-16"`` where ``data`` is text in that encoding, else None: a
    byte-order mark, or (``iconv -t utf-16le`` writes none) its first two characters each a
    byte and three NULs (UTF-32) or a byte and one NUL (UTF-16), which no UTF-8 text holds."""
    if data.startswith(UTF32_MARKS):
        return "UTF-32"
    if data.startswith(UTF16_MARKS):
        return "UTF-16"
    if len(data) >= 8 and all(_one_byte(data[i : i + 4]) for i in (0, 4)):
        return "UTF-32"
    even, odd = data[0:4:2], data[1:4:2]
    if len(data) >= 4 and ((all(even) and not any(odd)) or (all(odd) and not any(even))):
        return "UTF-16"
    return None


def _one_byte(unit: bytes) -> bool:
    """Whether a 4-byte unit is one non-NUL byte and three NULs, at either end (UTF-32LE, BE)."""
    return (unit[0] != 0 and not any(unit[1:])) or (unit[3] != 0 and not any(unit[:3]))


def encoding_error(name: str, encoding: str, code: str = "input") -> ShmemError:
    """A text file written as UTF-16 or UTF-32 (:func:`wide_encoding`), said at 1:1."""
    return ShmemError(
        f"file is {encoding} encoded; save it as UTF-8 text",
        path=name,
        pos=SourcePos(1, 1),
        code=code,
    )


def _too_large(name: str, limit: int, what: str, code: str) -> ShmemError:
    return ShmemError(
        f"{what} is larger than the limit of {_size_words(limit)}; "
        "give a smaller file (or split it)",
        path=name,
        code=code,
    )


def _gunzip(data: bytes, limit: int, name: str, what: str, code: str) -> bytes:
    """The unpacked content of gzip ``data`` (all members, at most :data:`MAX_GZIP_MEMBERS`),
    at most ``limit`` bytes, in time linear in ``data``: each member is fed a small piece,
    then doubling pieces, so what zlib hands back unused (a copy) stays small, and the zero
    padding between members is skipped by a search, not a copy."""
    import re
    import zlib  # here: only gzip inputs need it

    out: list[bytes] = []
    size = pos = members = 0
    view = memoryview(data)
    try:
        while pos < len(data) and size < limit:
            members += 1
            if members > MAX_GZIP_MEMBERS:
                raise ShmemError(
                    f"cannot read {what}: more than {MAX_GZIP_MEMBERS:,} gzip members (files "
                    "packed one after another); unpack it and give the file itself",
                    path=name,
                    code=code,
                )
            unpacker = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            step = 1 << 10
            while not unpacker.eof and pos < len(data) and size < limit:
                piece = view[pos : pos + step]
                unpacked = unpacker.decompress(piece, limit - size)
                out.append(unpacked)
                size += len(unpacked)
                pos += len(piece) - len(unpacker.unconsumed_tail) - len(unpacker.unused_data)
                step = min(2 * step, 1 << 20)
            if size >= limit:
                break
            if not unpacker.eof:
                raise ShmemError(
                    f"cannot read {what}: the gzip data ends too soon", path=name, code=code
                )
            found = re.compile(rb"[^\x00]").search(data, pos)  # zero padding between members
            pos = found.start() if found else len(data)
    except zlib.error as exc:
        raise ShmemError(
            f"cannot read {what}: bad gzip data ({exc})", path=name, code=code
        ) from None
    return b"".join(out)


#: characters of one line of a CSV export that Python's csv reader is given: it makes the
#: list of a record's fields at once, and a line of 150 million commas (a 150 MB export, or
#: a gzip of 150 KB) held 1.6 GB (Nsight Compute's longest line here: 31 KB)
MAX_CSV_LINE = 1 << 20


def csv_line_error(name: str, line: int, code: str) -> ShmemError:
    """A CSV line past :data:`MAX_CSV_LINE`, said at its line."""
    return ShmemError(
        f"a line longer than {MAX_CSV_LINE >> 20} MiB, where Nsight Compute writes lines of a "
        "few KB: give the CSV ncu wrote",
        path=name,
        pos=SourcePos(line, 1),
        code=code,
    )


def csv_lines(stream: IO[str], name: str, code: str) -> Iterator[str]:
    """The lines of a text stream opened with ``newline=""`` (for :mod:`csv`), each read up to
    :data:`MAX_CSV_LINE` characters: a longer one is :func:`csv_line_error` before it is
    held whole."""
    line = 0
    while text := stream.readline(MAX_CSV_LINE + 1):
        line += 1
        if len(text) > MAX_CSV_LINE:
            raise csv_line_error(name, line, code)
        yield text


#: what str.splitlines ends a line at
_LINE_END = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_CHUNK = 1 << 20


def text_lines(text: str) -> Iterator[str]:
    """``text.splitlines()``, the same lines, split a megabyte at a time: a reader of a large
    input never holds a list of all its lines (60 million blank ones took 600 MB)."""
    start, size = 0, len(text)
    while start < size:
        end = _LINE_END.search(text, min(start + _CHUNK, size))
        stop = end.end() if end else size
        yield from text[start:stop].splitlines()
        start = stop
