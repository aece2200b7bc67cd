"""Rows whose user line the line table cannot tell from a sibling call's are marked.

The kernel (tests/data/trace/inline_siblings/two_copies.cu) calls one library copy
(``include/tiles/copy.h``: copy -> atom -> unpack -> ldmatrix) twice, at line 16 for ``a``
and at line 17 for ``b`` (256 elements, 0x200 bytes, further on). Its cubin's line table,
as ``nvdisasm -gi`` prints it, places all four ``LDSM`` at line 16, though the two that
read through ``R3`` (``[R3+0x200]``, ``[R3+0x600]``) are ``b``'s: a ``.loc`` names only its
immediate caller by file, line and column, and ptxas took the first call's chain. Line 17 is
in the table's rows, which nvdisasm does not print (the innermost line did not change).
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain
from shmem_cli.cuda.inline_siblings import sibling_lines
from shmem_cli.cuda.sass import parse, source_lines
from shmem_cli.trace.kernel import line_table
from shmem_cli.trace.kernel.binary_formats.elf import Elf
from shmem_cli.trace.kernel.line_table import line_rows

from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm

HERE = TRACE_DATA / "inline_siblings"
CUBIN = HERE / "two_copies.sm_90.cubin"
KERNEL = "_Z10two_copiesPj"


def _short(loc: tuple[str, int]) -> tuple[str, int]:
    return Path(loc[0]).name, loc[1]


def _user(file: str) -> bool:
    return "/include/" not in file


def test_the_line_table_rows_hold_the_second_call() -> None:
    links = {(_short(a), _short(b)) for a, b in line_rows(CUBIN, KERNEL).links}
    # copy() (copy.h:25) is inlined at both calls; atom's line 21 at copy's 25, and so on
    assert (("copy.h", 25), ("two_copies.cu", 16)) in links
    assert (("copy.h", 25), ("two_copies.cu", 17)) in links
    assert (("copy.h", 11), ("copy.h", 17)) in links
    assert (("copy.h", 17), ("copy.h", 21)) in links
    assert (("copy.h", 21), ("copy.h", 25)) in links


def test_no_table_no_links(tmp_path: Path) -> None:
    junk = tmp_path / "junk.cubin"
    junk.write_bytes(b"\x7fELF not really")
    assert line_rows(junk, KERNEL).links == ()
    assert line_rows(tmp_path / "missing.cubin", KERNEL).links == ()


def _unrelocated(cubin: Path) -> bytearray:
    """``cubin``'s bytes with its ``.debug_line`` relocations made another section type (so
    none names a kernel)."""
    data = bytearray(cubin.read_bytes())
    elf = Elf(bytes(data), str(cubin))
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    index = {s.name: k for k, s in enumerate(elf.sections)}
    struct.pack_into("<I", data, shoff + 64 * index[".rela.debug_line"] + 4, 1)  # PROGBITS
    return data


def _with_line_program(rows: int, version: int = 2) -> bytes:
    """The kept cubin with its ``.debug_line`` replaced by one unit of ``rows`` rows, each
    inlined into the first (its relocations made another type: the kernel is the cubin's only
    code, so every sequence is read)."""
    data = _unrelocated(CUBIN)
    elf = Elf(bytes(data), str(CUBIN))
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    index = {s.name: k for k, s in enumerate(elf.sections)}
    # DWARF 2 header: min length 1, (4: max ops 1), is_stmt 1, line base -5, range 14, opcode
    # base 13
    ops = bytes([1]) if version >= 4 else b""
    lengths = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
    header = bytes([1]) + ops + bytes([1, 0xFB, 14, 13]) + lengths + b"\0a.cu\0\0\0\0\0"
    program = bytes([0, 3, 0x90, 1, 0]) + bytes([0x13]) * rows  # caller: row 1; line += 1
    unit = struct.pack("<HI", version, len(header)) + header + program
    at = len(data)
    data += struct.pack("<I", len(unit)) + unit
    section = shoff + 64 * index[".debug_line"]
    struct.pack_into("<QQ", data, section + 24, at, 4 + len(unit))  # sh_offset, sh_size
    return bytes(data)


def test_a_line_table_past_its_bound_is_not_read(tmp_path: Path) -> None:
    # each row is held until its sequence ends: 8 MiB of one-byte rows (the bound was 8 MiB)
    # took 15 s and 1.7 GB; the largest table of 1,189 real cubins is 31 KB
    small, large = tmp_path / "small.cubin", tmp_path / "large.cubin"
    small.write_bytes(_with_line_program(1000))
    assert (("a.cu", 3), ("a.cu", 2)) in line_rows(small, KERNEL).links  # line 1 + 1 per row
    large.write_bytes(_with_line_program(line_table.MAX_TABLE_BYTES))
    assert line_rows(large, KERNEL).links == ()
    assert line_table.MAX_TABLE_BYTES <= 1 << 20


@pytest.mark.parametrize("version", [1, 5, 0xFFFF])
def test_a_line_table_of_another_dwarf_version_is_refused(tmp_path: Path, version: int) -> None:
    # DWARF 5's header has an address size and entry formats where 2-4 have the minimum
    # instruction length and the folder list: read as 2-4, its bytes were taken for rows
    for good in (2, 3, 4):
        (tmp_path / "good.cubin").write_bytes(_with_line_program(3, good))
        assert (("a.cu", 3), ("a.cu", 2)) in line_rows(tmp_path / "good.cubin", KERNEL).links
    (tmp_path / "other.cubin").write_bytes(_with_line_program(3, version))
    assert line_rows(tmp_path / "other.cubin", KERNEL).links == ()


TWO = HERE / "two_kernels.sm_90.cubin"  # first() calls the copy at line 12, second() at 21


def _callers_of_copy(cubin: Path, kernel: str) -> set[int]:
    return {b[1] for a, b in line_rows(cubin, kernel).links if _short(a) == ("copy.h", 25)}


def test_each_kernel_reads_its_own_sequence() -> None:
    assert _callers_of_copy(TWO, "_Z5firstPj") == {12}
    assert _callers_of_copy(TWO, "_Z6secondPj") == {21}


def test_unnamed_sequences_of_a_cubin_of_two_kernels_give_no_links(tmp_path: Path) -> None:
    # every sequence's address is 0, an offset in its own code section: without the
    # relocations naming them, first()'s links held second()'s call at line 21 too
    bare = tmp_path / "bare.cubin"
    bare.write_bytes(_unrelocated(TWO))
    assert line_rows(bare, "_Z5firstPj").links == ()
    assert line_rows(bare, "_Z6secondPj").links == ()
    one = tmp_path / "one.cubin"  # a cubin whose only code is the kernel's: its sequences
    one.write_bytes(_unrelocated(CUBIN))
    assert set(line_rows(one, KERNEL).links) == set(line_rows(CUBIN, KERNEL).links) != set()


@needs_nvdisasm
def test_each_ldmatrix_is_marked_with_the_sibling_line() -> None:
    (fn,) = parse(toolchain.disassemble(CUBIN))
    lines = source_lines(fn, _user)
    ldsm = [i for i in fn.instructions if i.opcode == "LDSM"]
    assert [i.text.split()[-1] for i in ldsm] == [
        "[R20]",
        "[R3+0x200]",
        "[R3+0x600]",
        "[R20+0x400]",
    ]
    # what nvdisasm prints: every one at line 16, line 17 never named
    assert {_short(lines[i.pc]) for i in ldsm} == {("two_copies.cu", 16)}
    assert all(loc[1] != 17 for i in fn.instructions for loc in i.locations if _user(loc[0]))
    # from nvdisasm's chains alone the second call is invisible: nothing is marked
    assert sibling_lines(fn, lines, _user) == {}
    found = sibling_lines(fn, lines, _user, line_rows(CUBIN, KERNEL).links)
    assert {i.pc for i in ldsm} <= set(found)
    # every row the table places at line 16 through copy.h's lines (the addresses too)
    assert {pc: [_short(s) for s in sib] for pc, sib in found.items()} == {
        pc: [("two_copies.cu", 17)]
        for pc, where in lines.items()
        if _short(where) == ("two_copies.cu", 16) and len(fn.instructions[pc // 16].locations) > 2
    }


SASS = """\t.section\t.text.k,"ax",@progbits
\t//## File "/p/k.cu", line 5
        /*0000*/                   LDS R0, [R1] ;
\t//## File "/p/include/lib.h", line 3 inlined at "/p/k.cu", line 7
\t//## File "/p/k.cu", line 7
        /*0010*/                   LDS R2, [R1] ;
\t//## File "/p/include/lib.h", line 3 inlined at "/p/k.cu", line 8
\t//## File "/p/k.cu", line 8
        /*0020*/                   LDS R3, [R1] ;
\t//## File "/p/include/lib.h", line 2 inlined at "/p/include/lib.h", line 4
\t//## File "/p/include/lib.h", line 4 inlined at "/p/include/lib.h", line 9
\t//## File "/p/include/lib.h", line 9 inlined at "/p/k.cu", line 20
\t//## File "/p/k.cu", line 20
        /*0030*/                   LDS R4, [R1] ;
\t//## File "/p/include/lib.h", line 6 inlined at "/p/include/lib.h", line 12
\t//## File "/p/include/lib.h", line 12 inlined at "/p/k.cu", line 30
\t//## File "/p/k.cu", line 30
        /*0040*/                   LDS R5, [R1] ;
"""


def test_only_a_caller_found_by_location_alone_is_in_doubt() -> None:
    """Hand-made chains: the user's own line (0x0) and a library line called straight from
    the user's lines (0x10, 0x20: its .loc names that line) are exact; 0x30 runs through
    lib.h:4, whose caller lib.h:9 is inlined at lines 20 and 21 (the second link, a row
    nvdisasm left out): in doubt; 0x40's library lines have one user caller: exact."""
    (fn,) = parse(SASS)
    lines = source_lines(fn, _user)
    assert lines == {
        0x0: ("/p/k.cu", 5),
        0x10: ("/p/k.cu", 7),
        0x20: ("/p/k.cu", 8),
        0x30: ("/p/k.cu", 20),
        0x40: ("/p/k.cu", 30),
    }
    links = [(("/p/include/lib.h", 9), ("/p/k.cu", 21))]
    assert sibling_lines(fn, lines, _user, links) == {0x30: (("/p/k.cu", 21),)}
    # a caller's link to lib.h:12 from line 31 puts 0x40 in doubt too
    more = [*links, (("/p/include/lib.h", 12), ("/p/k.cu", 31))]
    assert sibling_lines(fn, lines, _user, more)[0x40] == (("/p/k.cu", 31),)


@pytest.mark.slow  # two nvcc builds
@needs_nvcc
def test_the_report_marks_the_row_and_says_which_lines(tmp_path: Path) -> None:
    shutil.copytree(HERE, tmp_path / "proj", ignore=shutil.ignore_patterns("*.cubin"))
    (tmp_path / "proj" / ".git").mkdir()  # the source tree
    src = tmp_path / "proj" / "two_copies.cu"
    args = ["trace", str(src), "-b", "32", f"--nvcc-arg=-I{tmp_path / 'proj' / 'include'}"]
    res = CliRunner().invoke(main, [*args, "--format", "json", "--no-tables"])
    assert res.exit_code == 0, res.output
    accesses = json.loads(res.output)["files"][0]["kernels"][0]["accesses"]
    ldsm = [a for a in accesses if a["opcode"].startswith("LDSM")]
    assert len(ldsm) == 4
    for a in ldsm:
        assert (Path(a["file"]).name, a["line"]) == ("two_copies.cu", 16)
        assert [(Path(o["file"]).name, o["line"]) for o in a["also"]] == [("two_copies.cu", 17)]
    assert all(a["also"] == [] for a in accesses if a["op"] == "store")
    text = CliRunner().invoke(main, args).output
    assert "two_copies.cu:16? < copy.h:11" in text
    assert "two_copies.cu:16? may be line 17" in text


@needs_nvdisasm
def test_the_per_line_table_keeps_the_mark_of_an_unsure_line() -> None:
    # the kept cubin (built with the library's -I): the four LDSM rows read
    # two_copies.cu:16?, and so must their line's total, which read two_copies.cu:16 as if
    # the line table were sure of it
    res = CliRunner().invoke(main, ["trace", str(HERE / "two_copies.sm_90.cubin"), "-b", "32"])
    assert res.exit_code == 0, res.output
    per_line = res.output.split("per source line\n")[1].split("\n\n")[0].splitlines()
    assert [ln.split()[0] for ln in per_line[1:]] == [
        "two_copies.cu:10",
        "two_copies.cu:11",
        "two_copies.cu:16?",
    ]
