"""Hostile binaries (issue 28): cubins, fat binaries and executables whose headers claim more
than they hold. Each reader checks a size before it reads or copies it, and is linear in its
input: a header that says 0, entries that overrun their section, a 20 GiB sparse file, names
that all point at one long string; every one answered at once with "not a valid cubin" or
nothing found, never a hang, a traceback or gigabytes."""

from __future__ import annotations

import os
import struct
import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.kernel.binary_formats import fatbin
from shmem_cli.trace.kernel.binary_formats.fatbin import (
    FATBIN_MAGIC,
    cubins_for_arch,
    cubins_in_file,
)
from shmem_cli.trace.kernel.cubin import find_kernel, read_cubin

from .conftest import needs_nvdisasm
from .hostile import CUBIN, refused, shmem
from .test_fatbin import _entry, _host_elf

REAL = CUBIN.read_bytes()


def _spy(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, limit: int, what: str
) -> list[int]:
    """Count the calls of ``owner.name`` (a one-item list), failing the test at the call past
    ``limit``: the bound proved by the work done, not by the time taken."""
    real, calls = getattr(owner, name), [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] > limit:
            raise AssertionError(f"more than {limit:,} {what}: the input is walked whole")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def _fat_reads(monkeypatch: pytest.MonkeyPatch, limit: int) -> list[int]:
    """The fat binary reader's header reads (each one ``struct.unpack_from``), counted."""
    counter = SimpleNamespace(unpack_from=struct.unpack_from)
    monkeypatch.setattr(fatbin, "struct", counter)
    return _spy(monkeypatch, counter, "unpack_from", limit, "headers read")


def _sparse(path: Path, head: bytes, size: int = 20 << 30) -> Path:
    with path.open("wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def _fat(entries: bytes, header: int = 16, size: int | None = None) -> bytes:
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, header, len(entries) if size is None else size)


# --- cubins --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"\x7fELF", "not an ELF file"),
        (REAL[:3000], "its section table is cut off or malformed"),
        (REAL[:64] + bytes(100), "its section table is cut off or malformed"),
        (b"", "not an ELF file"),
    ],
)
def test_broken_cubins(tmp_path: Path, data: bytes, fragment: str) -> None:
    path = tmp_path / "k.cubin"
    path.write_bytes(data)
    with pytest.raises(ShmemError) as err:
        read_cubin(path, use_tools=False)
    assert f"not a valid cubin: {fragment}" in err.value.message
    assert err.value.path == str(path)


def test_a_sparse_20_gib_cubin_is_refused_from_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmem_cli.plumbing import bounded_read

    path = _sparse(tmp_path / "big.cubin", REAL[:64])
    _spy(monkeypatch, bounded_read, "read_prefix", 0, "reads of a file its size refuses")
    with pytest.raises(ShmemError, match="cubin is larger than the limit of 64 MiB"):
        read_cubin(path, use_tools=False)


def test_names_that_overlap_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A symbol table of 200,000 entry functions all named by one 50 KB string: 10 GB of
    names if each were read; refused once their bytes pass twice the file's size (about 10
    MB: some 200 names read, where the file holds 200,000)."""
    from shmem_cli.trace.kernel.binary_formats.elf import Elf

    names = _spy(monkeypatch, Elf, "_string", 1000, "names read")
    long_name = b"k" * 50_000 + b"\0"
    count = 200_000
    strtab = b"\0.shstrtab\0.strtab\0.symtab\0"
    symtab = bytes(24) + struct.pack("<IBBHQQ", len(strtab), 0x12, 0x10, 0, 0, 0) * count
    body_at = 64
    strings = strtab + long_name
    sym_at = body_at + len(strings)
    sh_at = sym_at + len(symtab)
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<H", head, 18, 190)  # EM_CUDA
    struct.pack_into("<I", head, 0x30, 0x5A055A)  # sm_90 (ABI 7; an sm_0 is refused: round 16)
    struct.pack_into("<Q", head, 0x28, sh_at)
    struct.pack_into("<HHH", head, 0x3A, 64, 4, 1)
    sections = bytes(64)
    sections += struct.pack("<IIQQQQIIQQ", 1, 3, 0, 0, body_at, len(strings), 0, 0, 1, 0)
    sections += struct.pack("<IIQQQQIIQQ", 11, 3, 0, 0, body_at, len(strings), 0, 0, 1, 0)
    sections += struct.pack("<IIQQQQIIQQ", 19, 2, 0, 0, sym_at, len(symtab), 2, 0, 8, 24)
    path = tmp_path / "names.cubin"
    path.write_bytes(bytes(head) + strings + symtab + sections)
    tracemalloc.start()
    try:
        with pytest.raises(ShmemError, match="its names add up to more than twice its size"):
            read_cubin(path, use_tools=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 200 < names[0] < 1000  # 2 * 4.9 MB + 1 MiB of 50 KB names, then the refusal
    assert peak < 200 << 20


@needs_nvdisasm
def test_broken_cubins_on_the_command_line(tmp_path: Path) -> None:
    four = tmp_path / "four.cubin"
    four.write_bytes(b"\x7fELF")
    refused(shmem("trace", str(four), "-b", "32"), f"{four}: error:", "too short for an ELF")
    sparse = _sparse(tmp_path / "sparse.cubin", REAL[:64])
    refused(shmem("trace", str(sparse), "-b", "32"), "larger than the limit of 64 MiB")


# --- fat binaries and executables -----------------------------------------------------------


def test_a_fat_binary_whose_header_says_size_0_ends() -> None:
    entries = _entry(2, 90, REAL)
    for header, size in ((0, 0), (0, len(entries)), (16, 0), (8, 1 << 60)):
        blob = _fat(entries, header, size) + entries
        assert cubins_for_arch(_host_elf(blob), "sm_90") == []


def test_entries_that_overrun_their_section_are_not_copied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """16,384 entries of 32 bytes, each claiming 2^40 bytes of payload: the old reader copied
    the rest of the section for each one (quadratic, past 1 GiB from 512 KiB). The first
    entry that overruns ends the walk: a handful of headers read, not 16,384."""
    entry = bytearray(32)
    struct.pack_into("<HHIQ", entry, 0, 2, 0x101, 32, 1 << 40)
    struct.pack_into("<I", entry, 28, 90)
    entries = bytes(entry) * 16_384
    host = _host_elf(_fat(entries) + entries)
    reads = _fat_reads(monkeypatch, 100)
    tracemalloc.start()
    try:
        assert cubins_for_arch(host, "sm_90") == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0 < reads[0] < 100
    assert peak < 8 << 20


def test_entries_whose_headers_are_too_short_end_the_walk() -> None:
    entry = bytearray(32)
    struct.pack_into("<HHIQ", entry, 0, 2, 0x101, 0, 0)  # entry header size 0: no progress
    entries = bytes(entry) * 1000 + _entry(2, 90, REAL)
    assert cubins_for_arch(_host_elf(_fat(entries) + entries), "sm_90") == []


def test_an_executable_is_read_where_its_sections_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _entry(2, 90, REAL)
    host = _host_elf(_fat(entries) + entries)
    path = _sparse(tmp_path / "app", host)  # the fat binary, then 20 GiB of hole
    read, pread = [0], os.pread

    def counted(fd: int, count: int, offset: int) -> bytes:
        piece = pread(fd, count, offset)
        read[0] += len(piece)
        assert read[0] <= 2 * len(host), "the executable was read past its sections"
        return piece

    monkeypatch.setattr(os, "pread", counted)
    assert cubins_in_file(path, "sm_90") == [REAL]
    assert len(REAL) < read[0] <= 2 * len(host)  # its headers and sections, not 20 GiB
    with pytest.raises(ShmemError, match="it is a directory"):
        cubins_in_file(tmp_path, "sm_90")


def test_fat_binary_sections_past_the_bound_are_left_to_cuobjdump(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entries = _entry(2, 90, REAL)
    host = _host_elf(_fat(entries) + entries)
    monkeypatch.setattr(fatbin, "MAX_SECTION_BYTES", 1024)
    assert cubins_for_arch(host, "sm_90") == []


@needs_nvdisasm
def test_an_executable_error_names_the_executable(tmp_path: Path) -> None:
    entries = _entry(2, 90, REAL[:3000])  # an ELF cut off inside the fat binary
    app = tmp_path / "app"
    app.write_bytes(_host_elf(_fat(entries) + entries))
    refused(
        shmem("trace", str(app), "-b", "32"),
        f"{app}: error: not a valid cubin",
        "(embedded cubin: fat binary entry 0)",
    )


# --- what the errors say ---------------------------------------------------------------------


@pytest.mark.slow
def test_two_thousand_kernel_names_are_listed_short() -> None:
    from shmem_cli.trace.kernel.cubin import CubinInfo, Kernel

    kernels = tuple(
        Kernel(f"_Z{i}", f"k{i}_" + "x" * 10_000, f"k{i}()", (), 0x210, 0, 0, 0, 16)
        for i in range(2000)
    )
    with pytest.raises(ShmemError) as err:
        find_kernel(CubinInfo("k.cubin", "sm_90", kernels), "nope")
    message = err.value.message
    assert "no kernel matches --kernel 'nope'; the cubin holds:" in message
    assert "... and 1,980 more" in message and len(message) < 10_000


@needs_nvdisasm
@pytest.mark.parametrize("name", ["x.cubin", "x.json", "sub.cu"])
def test_a_folder_named_like_a_kernel_file(tmp_path: Path, name: str) -> None:
    (tmp_path / name).mkdir()
    ran = shmem("trace", str(tmp_path / name), "-b", "32")
    refused(ran, f"{tmp_path / name}: error: a folder, and no Triton cache entry is in it")
    assert "no such file" not in ran.text


def test_a_tool_error_names_the_executable_not_a_temporary_cubin(tmp_path: Path) -> None:
    from shmem_cli.cuda.toolchain import ToolError
    from shmem_cli.trace.pipeline import _tool_failure

    folder = tmp_path / "shmem-trace-1234"
    said = ToolError(
        f"nvdisasm failed (exit status 1):\nnvdisasm fatal : '{folder}/app.0.sm_90.cubin'"
    )
    error = _tool_failure(said, Path("app"), folder)
    assert str(folder) not in error.message
    assert "nvdisasm fatal : 'app (its embedded cubin)'" in error.message
    assert error.path == "app"


@needs_nvdisasm
def test_only_the_traced_kernel_s_sass_is_parsed_and_it_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shmem_cli.cuda import sass, toolchain
    from shmem_cli.trace.tracer import find_function

    disassembly = toolchain.disassemble(CUBIN)
    kernel = find_kernel(read_cubin(CUBIN, use_tools=False), "trivial")
    other = '\t.section\t.text._Z5otherv,"ax",@progbits\n'
    other += "        /*0000*/                   NOP ;\n" * 400_000  # 15 MiB: minutes to parse
    parsed: list[int] = []
    parse = sass.parse

    def measured(text: str) -> Any:
        parsed.append(len(text))
        return parse(text)

    monkeypatch.setattr(sass, "parse", measured)
    function = find_function(other + disassembly + other, kernel, "k.cubin")
    assert function.name == "_Z7trivialPi" and function.instructions
    assert parsed and max(parsed) < len(disassembly)  # the kernel's section, not 30 MiB
    monkeypatch.setattr(sass, "MAX_FUNCTION_TEXT", 1000)
    with pytest.raises(ShmemError, match=r"the SASS of trivial is 0 MiB \(about [0-9,]+ instr"):
        find_function(disassembly, kernel, "k.cubin")


def test_millions_of_headers_are_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """64 MiB of fat binaries of size 0, or of empty entries: the walk stops at 65,536
    (MAX_HEADERS) of each, not at the 4 million headers (2 million entries) they hold."""
    zero = _fat(b"", 16, 0) * ((64 << 20) // 16)
    entry = bytearray(32)
    struct.pack_into("<HHIQ", entry, 0, 2, 0x101, 32, 0)
    struct.pack_into("<I", entry, 28, 90)
    empties = bytes(entry) * ((64 << 20) // 32)
    bound = 2 * fatbin.MAX_HEADERS + 100  # an entry is 2 reads; the ELF's headers, a few
    assert fatbin.MAX_HEADERS == 65_536
    for blob in (zero, _fat(empties) + empties):
        reads = _fat_reads(monkeypatch, bound)
        assert cubins_for_arch(_host_elf(blob), "sm_90") == []
        assert fatbin.MAX_HEADERS <= reads[0] <= bound


@pytest.mark.slow  # seconds under tracemalloc; test_millions_of_headers_are_not_walked is fast
def test_millions_of_attribute_records_are_refused() -> None:
    from shmem_cli.trace.kernel.cubin import _kernel_attributes

    body = struct.pack("<BBH", 3, 0x37, 0) * (4 << 20)  # 16 MiB of 4-byte records
    tracemalloc.start()
    try:
        with pytest.raises(ShmemError, match="holds more than 1,048,576 attribute records"):
            _kernel_attributes(body, "k.cubin")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20  # read one record at a time


@needs_nvdisasm
def test_a_big_cubin_is_disassembled_only_where_the_kernel_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past WHOLE_CODE bytes of code, nvdisasm goes through the traced kernel's section
    only (-fun: a cubin of 64 MiB of other code took it about 40 s); the trace is the same."""
    from shmem_cli.cuda import toolchain
    from shmem_cli.trace.kernel import cubin as cubins
    from shmem_cli.trace.pipeline import TraceRequest, trace_file

    request = TraceRequest(CUBIN, kernel="trivial", block=(64, 1, 1))
    whole = trace_file(request).to_json()
    calls: list[tuple[int, ...]] = []
    disassemble = toolchain.disassemble

    def recorded(path: Path, **kwargs: Any) -> str:
        calls.append(tuple(kwargs.get("functions", ())))
        return disassemble(path, **kwargs)

    monkeypatch.setattr(toolchain, "disassemble", recorded)
    monkeypatch.setattr(cubins, "WHOLE_CODE", 1024)
    assert trace_file(request).to_json() == whole
    assert calls[-1] == (30,)  # _Z7trivialPi's symbol, as readelf -s shows the kept cubin
    assert cubins.read_cubin(CUBIN).code_bytes > 1024
    monkeypatch.setattr(cubins, "MAX_KERNEL_CODE", 64)
    with pytest.raises(ShmemError, match=r"kernel trivial has \d+ bytes of code .* at most 0 MiB"):
        trace_file(request)
