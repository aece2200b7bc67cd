"""Cubins read from a host ELF's fat binary (shmem_cli/trace/kernel/binary_formats/fatbin.py).

The host file is built here byte by byte: an ELF64 header, a ``.nv_fatbin`` section
holding one fat binary with two ELF entries for sm_90 (two translation units whose
cubins cuobjdump would extract under one name), one for sm_80 and one PTX entry.
"""

from __future__ import annotations

import struct

from shmem_cli.trace.kernel.binary_formats.fatbin import FATBIN_MAGIC, cubins_for_arch

from .conftest import TRACE_DATA as DATA


def _entry(kind: int, arch: int, payload: bytes) -> bytes:
    header = bytearray(64)
    struct.pack_into("<HHIQ", header, 0, kind, 0x101, len(header), len(payload))
    struct.pack_into("<I", header, 28, arch)
    return bytes(header) + payload


def _host_elf(section: bytes) -> bytes:
    names = b"\0.nv_fatbin\0.shstrtab\0"
    body_at = 64
    names_at = body_at + len(section)
    sh_at = names_at + len(names)
    sh_at += -sh_at % 8
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", head, 0x28, sh_at)
    struct.pack_into("<HHH", head, 0x3A, 64, 3, 2)
    sections = bytes(64)  # the null section
    sections += struct.pack("<IIQQQQ", 1, 1, 0, 0, body_at, len(section)) + bytes(24)
    sections += struct.pack("<IIQQQQ", 12, 3, 0, 0, names_at, len(names)) + bytes(24)
    body = bytes(head) + section + names
    return body + bytes(sh_at - len(body)) + sections


def test_two_cubins_of_one_name_come_out_apart() -> None:
    first = (DATA / "basics.sm_90.cubin").read_bytes()
    second = (DATA / "gemm.sm_90.cubin").read_bytes()
    entries = (
        _entry(2, 90, first)
        + _entry(2, 80, b"\x7fELF-not-for-this-arch")
        + _entry(1, 90, b"// ptx text")
        + _entry(2, 90, second)
    )
    blob = struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(entries)) + entries
    host = _host_elf(blob)
    assert cubins_for_arch(host, "sm_90") == [first, second]
    assert cubins_for_arch(host, "sm_80") == [b"\x7fELF-not-for-this-arch"]
    assert cubins_for_arch(host, "sm_75") == []


def test_a_file_that_is_not_a_host_elf_holds_none() -> None:
    assert cubins_for_arch(b"#!/bin/sh\n", "sm_90") == []
    cubin = (DATA / "basics.sm_90.cubin").read_bytes()  # an ELF without a fatbin section
    assert cubins_for_arch(cubin, "sm_90") == []
