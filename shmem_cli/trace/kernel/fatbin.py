"""The cubins embedded in a host executable or shared library, read from its fatbin.

nvcc puts device code in the host ELF's ``.nv_fatbin`` section: a sequence of fat
binaries (magic ``0xBA55ED50``), each a list of entries with a small header (kind: 1
PTX, 2 ELF; the target architecture, 90 for sm_90) and a payload. An uncompressed ELF
payload is a cubin as ``nvcc -cubin`` writes it. Reading them here keeps cubins apart
that ``cuobjdump -xelf`` would write to one file name (one per translation unit of a
program often share the name ``app.sm_90.cubin``). Compressed payloads are skipped:
the caller falls back to cuobjdump for those.
"""

from __future__ import annotations

import struct

FATBIN_MAGIC = 0xBA55ED50
KIND_ELF = 2
ELF_MAGIC = b"\x7fELF"
_HOST_SECTIONS = (".nv_fatbin", "__nv_relfatbin")


def cubins_for_arch(host: bytes, arch: str) -> list[bytes]:
    """Every uncompressed cubin for ``arch`` (``sm_90``) in a host ELF file, in order."""
    number = int(arch.removeprefix("sm_").rstrip("af") or 0)
    out: list[bytes] = []
    for blob in _fatbin_sections(host):
        for kind, target, payload in _entries(blob):
            if kind == KIND_ELF and target == number and payload.startswith(ELF_MAGIC):
                out.append(payload)
    return out


def _fatbin_sections(data: bytes) -> list[bytes]:
    """The contents of the host ELF's fatbin sections (64-bit little-endian ELF only)."""
    if len(data) < 64 or not data.startswith(ELF_MAGIC) or data[4] != 2 or data[5] != 1:
        return []
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
        return []
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    out = []
    for name_off, kind, _flags, _addr, offset, size in headers:
        end = data.find(b"\0", names_at + name_off)
        name = data[names_at + name_off : end].decode("ascii", "replace")
        if name in _HOST_SECTIONS and kind != 8 and offset + size <= len(data):  # 8: NOBITS
            out.append(data[offset : offset + size])
    return out


def _entries(blob: bytes) -> list[tuple[int, int, bytes]]:
    """(kind, architecture number, payload) of every entry of the fat binaries in ``blob``."""
    out = []
    pos = 0
    while pos + 16 <= len(blob):
        magic, _version, header, size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            break
        entry, end = pos + header, min(pos + header + size, len(blob))
        while entry + 32 <= end:
            kind, _unknown, entry_header, payload_size = struct.unpack_from("<HHIQ", blob, entry)
            target = struct.unpack_from("<I", blob, entry + 28)[0]
            start = entry + entry_header
            out.append((kind, target, blob[start : start + payload_size]))
            if entry_header == 0:
                break
            entry = start + payload_size
        pos = end
        # fat binaries are 8-byte aligned one after the other
        pos += -pos % 8
    return out
