"""Hostile inputs of the twentieth adversarial round (docs/robustness.md, "What was found and
fixed", item 20).

A cubin's global data whose relocations name a function many times over (a virtual table of
millions of entries) is filled in one copy of each section, not one copy a slot. ``lint
--write-baseline -`` is standard output, as ``-o -`` is.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm
from .hostile import REPO, refused, shmem

CALLS = TRACE_DATA / "calls" / "calls.sm_90.cubin"
_HEADER = "<IIQQQQIIQQ"  # an ELF64 section header


def _virtual_table(out: Path, size: int, slots: int) -> Path:
    """calls.sm_90.cubin with its ``.nv.global.init`` grown to ``size`` zero bytes and
    ``slots`` relocations of it naming the kernel ``pointer_call`` (the section header of
    ``.rela.debug_frame`` made ``.rela.nv.global.init``, its name added to a copy of the
    section names at the end of the file)."""
    data = bytearray(CALLS.read_bytes())
    table = struct.unpack_from("<Q", data, 0x28)[0]

    def header(index: int) -> list[int]:
        return list(struct.unpack_from(_HEADER, data, table + 64 * index))

    names, symbols, strings = header(1), header(3), header(2)
    index = {header(i)[0]: i for i in range(struct.unpack_from("<H", data, 0x3C)[0])}
    by_name = {
        bytes(data[names[4] + at : data.index(b"\0", names[4] + at)]): i for at, i in index.items()
    }
    kernel = next(
        k
        for k in range(symbols[5] // 24)
        if data[strings[4] + struct.unpack_from("<I", data, symbols[4] + 24 * k)[0] :].startswith(
            b"_Z12pointer_callPii\0"
        )
    )
    old = bytes(data[names[4] : names[4] + names[5]])
    added = b".rela.nv.global.init\0"
    names[4], names[5] = len(data), len(old) + len(added)
    data += old + added
    init = header(by_name[b".nv.global.init"])
    data += bytes(-len(data) % 16)
    init[4], init[5] = len(data), size
    data += bytes(size)
    rela = header(by_name[b".rela.debug_frame"])
    rela[0], rela[1], rela[4], rela[5] = len(old), 4, len(data), 24 * slots
    rela[6], rela[7] = 3, by_name[b".nv.global.init"]
    data += b"".join(
        struct.pack("<QQq", k * 8 % (size - 8), kernel << 32 | 2, 0) for k in range(slots)
    )
    for i, fields in (
        (1, names),
        (by_name[b".nv.global.init"], init),
        (by_name[b".rela.debug_frame"], rela),
    ):
        struct.pack_into(_HEADER, data, table + 64 * i, *fields)
    out.write_bytes(data)
    return out


@pytest.mark.slow
@needs_nvdisasm
def test_a_virtual_table_of_many_slots_is_filled_in_one_copy(tmp_path: Path) -> None:
    # 200,000 slots in 8 MiB (13 MB of cubin): each slot copied the section, past 300 s (the
    # 64 MiB a cubin may have: days); one copy a section: 4 s
    cubin = _virtual_table(tmp_path / "table.cubin", 4 << 20, 100_000)
    ran = shmem("trace", str(cubin), "-k", "pointer_call", "-b", "32", "-a", "1=0", "--no-tables")
    refused(ran, "calls.cu:51:1: error: the kernel calls a function outside it")


def test_a_dash_for_the_baseline_written_is_standard_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --write-baseline - wrote a file named "-" in the current folder (-o - was mended in
    # round 19)
    monkeypatch.chdir(tmp_path)
    spec = str(REPO / "access_specs" / "column_read_32x32.yaml")
    res = CliRunner().invoke(main, ["lint", "--no-config", spec, "--write-baseline", "-"])
    assert res.exit_code == 0, res.output
    written = json.loads(res.stdout)
    assert written["tool"] == "shmem" and written["findings"] == [], res.output
    assert "wrote 0 findings to standard output" in res.stderr, res.stderr
    assert list(tmp_path.iterdir()) == []
