"""The cubins embedded in a host executable or shared library, read from its fatbin.

nvcc puts device code in the host ELF's ``.nv_fatbin`` section: a sequence of fat
binaries (magic ``0xBA55ED50``), each a list of entries with a small header (kind: 1
PTX, 2 ELF; the target architecture, 90 for sm_90) and a payload. An uncompressed ELF
payload is a cubin as ``nvcc -cubin`` writes it. Reading them here keeps cubins apart
that ``cuobjdump -xelf`` would write to one file name (one per translation unit of a
program often share the name ``app.sm_90.cubin``). Compressed payloads are skipped:
the caller falls back to cuobjdump for those.

Nothing a header claims is trusted: a host file is read only where its section table
points (never whole: a shared library may hold gigabytes), at most
:data:`MAX_SECTION_BYTES` of fat-binary sections, and a fat binary or entry whose size is
0 or runs past its section ends the walk. Every step moves forward, and only the payloads
asked for are copied, so the walk is linear in the section.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from pathlib import Path

FATBIN_MAGIC = 0xBA55ED50
KIND_ELF = 2
ELF_MAGIC = b"\x7fELF"
_HOST_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
#: the fat-binary sections read from one host file, in all (more: cuobjdump extracts them)
MAX_SECTION_BYTES = 256 << 20
#: the host file's section-name table
MAX_NAMES_BYTES = 16 << 20
SECTION_HEADER = 64  # bytes of an ELF64 section header (e_shentsize)
FAT_HEADER = 16  # magic, version, header size, size of the entries
ENTRY_HEADER = 32  # the fields read from an entry's header
MAX_HEADERS = 1 << 16  # fat binaries, and entries, walked in one section

Read = Callable[[int, int], bytes]  # (offset, size) -> the bytes there, b"" if out of range


def cubins_for_arch(host: bytes, arch: str) -> list[bytes]:
    """Every uncompressed cubin for ``arch`` (``sm_90``) in a host ELF file's bytes, in order."""

    def read(offset: int, size: int) -> bytes:
        ok = offset >= 0 and size >= 0 and offset + size <= len(host)
        return host[offset : offset + size] if ok else b""

    return _cubins(read, len(host), arch)


def cubins_in_file(path: str | Path, arch: str) -> list[bytes]:
    """The same, read from the host file at ``path`` (a regular file) where it is needed.

    Raises :class:`~shmem_cli.plumbing.errors.ShmemError` when ``path`` is not a regular
    file that can be read; returns [] when it holds no cubin this reader can take (more
    than :data:`MAX_SECTION_BYTES` of fat binaries, compressed entries)."""
    from ....plumbing.bounded_read import open_regular

    fd = open_regular(os.fspath(path), "executable", "invalid-kernel")
    try:
        size = os.fstat(fd).st_size

        def read(offset: int, count: int) -> bytes:
            if offset < 0 or count < 0 or offset + count > size:
                return b""
            parts, done = [], 0
            while done < count:
                piece = os.pread(fd, count - done, offset + done)
                if not piece:
                    return b""
                parts.append(piece)
                done += len(piece)
            return b"".join(parts)

        return _cubins(read, size, arch)
    finally:
        os.close(fd)


def _cubins(read: Read, size: int, arch: str) -> list[bytes]:
    number = int(arch.removeprefix("sm_").rstrip("af") or 0)
    out: dict[bytes, None] = {}  # a cubin the same byte for byte as one found adds nothing
    for blob in _fatbin_sections(read, size):
        for kind, target, start, stop in _entries(blob):
            if kind == KIND_ELF and target == number and blob[start : start + 4] == ELF_MAGIC:
                out.setdefault(blob[start:stop])
    return list(out)


def _fatbin_sections(read: Read, size: int) -> list[bytes]:
    """The contents of the host ELF's fatbin sections (64-bit little-endian ELF only)."""
    head = read(0, 64)
    if len(head) < 64 or not head.startswith(ELF_MAGIC) or head[4] != 2 or head[5] != 1:
        return []
    shoff = struct.unpack_from("<Q", head, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
    # an ELF64 section header is 64 bytes: a larger e_shentsize (65,535 of 65,535 headers, a
    # sparse file of 4 GiB) had 4 GiB read, 8.4 GB held; the table is at most 4 MiB now
    if shentsize != SECTION_HEADER or shoff + shnum * shentsize > size or shstrndx >= shnum:
        return []
    table = read(shoff, shnum * shentsize)
    if len(table) < shnum * shentsize:
        return []
    headers = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(shnum)]
    names_at, names_size = headers[shstrndx][4], headers[shstrndx][5]
    names = read(names_at, min(names_size, MAX_NAMES_BYTES))
    wanted = []
    for name_off, kind, _flags, _addr, offset, length in headers:
        end = names.find(b"\0", name_off, name_off + 32)  # the names sought are short
        name = names[name_off:end].decode("ascii", "replace") if end >= 0 else ""
        if name in _HOST_SECTIONS and kind != 8 and offset + length <= size:  # 8: NOBITS
            wanted.append((offset, length))
    # sections overlap in no file a linker writes: one that starts inside another is not read
    # (65,000 section headers naming one fat binary made each of its cubins 65,000 files)
    kept: list[tuple[int, int]] = []
    for offset, length in sorted(set(wanted)):
        if not kept or offset >= kept[-1][0] + kept[-1][1]:
            kept.append((offset, length))
    apart = set(kept)
    wanted = list(dict.fromkeys(w for w in wanted if w in apart))  # in the table's order
    if sum(length for _, length in wanted) > MAX_SECTION_BYTES:
        return []  # cuobjdump, with its own limits, extracts from a file this large
    return [read(offset, length) for offset, length in wanted]


def _entries(blob: bytes) -> list[tuple[int, int, int, int]]:
    """(kind, architecture number, payload start, payload end) of every entry of the fat
    binaries in ``blob``; a header whose sizes do not fit in ``blob`` ends the walk."""
    out: list[tuple[int, int, int, int]] = []
    pos = steps = 0
    while pos + FAT_HEADER <= len(blob):
        steps += 1
        if steps > MAX_HEADERS:
            break  # more fat binaries than any program links: the rest is not read
        magic, _version, header, size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC or header < FAT_HEADER:
            break
        entry, end = pos + header, min(pos + header + size, len(blob))
        while entry + ENTRY_HEADER <= end:
            kind, _unknown, entry_header, payload_size = struct.unpack_from("<HHIQ", blob, entry)
            target = struct.unpack_from("<I", blob, entry + 28)[0]
            start = entry + entry_header
            stop = start + payload_size
            if entry_header < ENTRY_HEADER or stop > end or len(out) >= MAX_HEADERS:
                break  # a header that claims more than the fat binary holds: malformed
            out.append((kind, target, start, stop))
            entry = stop
        pos = max(end, pos + FAT_HEADER)
        # fat binaries are 8-byte aligned one after the other
        pos += -pos % 8
    return out
