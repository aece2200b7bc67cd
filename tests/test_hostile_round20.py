"""Hostile inputs of the twentieth adversarial round (docs/robustness.md, "What was found and
fixed", item 20).

A cubin's global data whose relocations name a function many times over (a virtual table of
millions of entries) is filled in one copy of each section, not one copy a slot; so are the
constant banks' slots that hold a global section's address, each section read once. A cubin
declares at most 65,536 kernels. ``lint
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


def _global_slots(out: Path, size: int, slots: int) -> Path:
    """calls.sm_90.cubin with its ``.nv.global.init`` grown to ``size`` zero bytes, constant
    bank 4 to 64 KiB, and ``slots`` relocations of the bank naming the global section's
    first symbol (the loader writes the section's address into each)."""
    data = bytearray(CALLS.read_bytes())
    table = struct.unpack_from("<Q", data, 0x28)[0]

    def header(index: int) -> list[int]:
        return list(struct.unpack_from(_HEADER, data, table + 64 * index))

    names = header(1)
    count = struct.unpack_from("<H", data, 0x3C)[0]
    by_name = {
        bytes(data[names[4] + h[0] : data.index(b"\0", names[4] + h[0])]): i
        for i, h in ((i, header(i)) for i in range(count))
    }
    rela, bank, init = (
        by_name[b".rela.nv.constant4"],
        by_name[b".nv.constant4"],
        by_name[b".nv.global.init"],
    )
    relocations = header(rela)
    info = next(  # a relocation of the bank whose symbol lies in .nv.global.init
        struct.unpack_from("<QQq", data, relocations[4] + 24 * k)[1]
        for k in range(relocations[5] // 24)
        if struct.unpack_from(
            "<H",
            data,
            header(3)[4]
            + 24 * (struct.unpack_from("<QQq", data, relocations[4] + 24 * k)[1] >> 32)
            + 6,
        )[0]
        == init
    )
    grown = []
    for index, length in ((bank, 65536), (init, size)):
        fields = header(index)
        data += bytes(-len(data) % 16)
        fields[4], fields[5] = len(data), length
        data += bytes(length)
        grown.append((index, fields))
    data += bytes(-len(data) % 16)
    relocations[4], relocations[5] = len(data), 24 * slots
    data += b"".join(struct.pack("<QQq", k * 8 % 65528, info, 0) for k in range(slots))
    for index, fields in (*grown, (rela, relocations)):
        struct.pack_into(_HEADER, data, table + 64 * index, *fields)
    out.write_bytes(data)
    return out


def test_a_global_section_many_slots_name_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 8,000 slots of constant bank 4 naming 40 MiB of .nv.global.init: the section was
    # copied once a slot (and the bank once a slot), past 120 s; once now (1 s)
    from shmem_cli.trace.kernel import externals
    from shmem_cli.trace.kernel.constants import read_constants

    cubin = _global_slots(tmp_path / "slots.cubin", 1 << 20, 4_000)
    reads: list[str] = []
    real = externals._global_data
    monkeypatch.setattr(
        externals, "_global_data", lambda elf, sec: reads.append(sec.name) or real(elf, sec)
    )
    constants = read_constants(cubin, "_Z12pointer_callPii")
    assert len(constants.global_slots) == 4_000
    assert reads == [".nv.global.init"]
    # each slot gets the section's address (here 0x1000) plus its symbol's value
    banks = dict(constants.banks)
    at = externals.link_globals(
        banks, constants.global_slots, constants.global_sections, lambda data, name: 0x1000
    )
    assert at == {".nv.global.init": 0x1000}
    slot = constants.global_slots[-1]
    written = int.from_bytes(banks[4][slot.offset : slot.offset + 8], "little")
    assert written == 0x1000 + slot.at


@pytest.mark.slow
@needs_nvdisasm
def test_a_global_section_of_many_slots_traces_in_seconds(tmp_path: Path) -> None:
    cubin = _global_slots(tmp_path / "slots.cubin", 40 << 20, 8_000)
    ran = shmem("trace", str(cubin), "-k", "pointer_call", "-b", "32", "-a", "1=0", "--no-tables")
    refused(ran, "calls.cu:50:1: error: misaligned 4-byte access")


def _many_entries(entries: int) -> bytes:
    """calls.sm_90.cubin with ``entries`` more entry-function symbols (k0, k1, ...), copies of
    its first kernel's symbol, in a symbol and string table moved to the end of the file."""
    data = bytearray(CALLS.read_bytes())
    table = struct.unpack_from("<Q", data, 0x28)[0]

    def header(index: int) -> list[int]:
        return list(struct.unpack_from(_HEADER, data, table + 64 * index))

    symbols, strings = header(3), header(2)
    old_symbols = bytes(data[symbols[4] : symbols[4] + symbols[5]])
    names = bytearray(data[strings[4] : strings[4] + strings[5]])
    _name, info, other, shndx, _value, size = next(
        fields for fields in struct.iter_unpack("<IBBHQQ", old_symbols) if fields[2] & 0x10
    )
    added = bytearray()
    for k in range(entries):
        added += struct.pack("<IBBHQQ", len(names), info, other, shndx, 0, size)
        names += b"k%d\0" % k
    for index, fields, body in ((2, strings, names), (3, symbols, old_symbols + added)):
        data += bytes(-len(data) % 16)
        fields[4], fields[5] = len(data), len(body)
        data += body
        struct.pack_into(_HEADER, data, table + 64 * index, *fields)
    return bytes(data)


def test_a_cubin_of_millions_of_kernels_is_refused() -> None:
    # 2 million entry symbols (a 64 MiB cubin) were each read, demangled and kept: 40 s and
    # 1.9 GB before the first line of --list-params; refused past 65,536 now (0.8 s)
    from shmem_cli.plumbing.errors import ShmemError
    from shmem_cli.trace.kernel.binary_formats.elf import MAX_ENTRIES, Elf

    own = len(Elf(CALLS.read_bytes(), "calls").entries())
    at_most = Elf(_many_entries(MAX_ENTRIES - own), "most.cubin").entries()
    assert len(at_most) == MAX_ENTRIES and at_most[-1].name == f"k{MAX_ENTRIES - own - 1}"
    with pytest.raises(ShmemError) as err:
        Elf(_many_entries(MAX_ENTRIES - own + 1), "more.cubin").entries()
    assert "it declares more than 65,536 kernels (entry functions)" in err.value.message


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
