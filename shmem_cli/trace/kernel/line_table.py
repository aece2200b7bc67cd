"""The caller links and source files of a cubin's line table (``.debug_line``), from its bytes.

ptxas writes a location inlined into another as a row with an NVIDIA extended opcode
(``DW_LNE`` 0x90) naming the row of its caller (rows count from 1 in their sequence, a
function's code) and the function's name (an offset into ``.debug_str``). ``nvdisasm -gi``
prints a row only where the innermost line changes, so where two calls run through the same
library line the second call's rows (and with them its line) may never be printed: the
``ldmatrix`` of the project's tests/data/trace/inline_siblings kernel's second copy is listed
at the first copy's line. :func:`line_rows` reads every row of a kernel's sequences and
returns each (location, its caller's location) pair they hold, for
:mod:`shmem_cli.cuda.inline_siblings`. A table this reader does not follow (64-bit DWARF, a
cut or malformed program, a DWARF version other than 2 to 4) gives no links or those read
before it: the report then says only what nvdisasm prints and those. Which sequence is the
kernel's only the table's relocations say (each sequence's address is 0, an offset in its own
code section): where none names the kernel, the table of a cubin with another code section
gives no links, as another kernel's calls of the same library line would be taken for its.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ...plumbing.bounded_read import read_bounded
from ...plumbing.errors import ShmemError
from ...plumbing.frozen import frozen
from .binary_formats.elf import Elf
from .cubin import MAX_CUBIN_BYTES

Location = tuple[str, int]
_NV_CONTEXT = 0x90  # NVIDIA's extended opcode: the caller's row and the function's name
_SET_ADDRESS, _END_SEQUENCE = 2, 1
_SET_ADDRESS_BYTES = 11  # 0, its length, the sub-opcode, an 8-byte address
#: a larger table is not read (a CUTLASS 3.x GEMM's is 23 KB, the largest of 1,189 cubins
#: 31 KB): its kernel's report says only what nvdisasm prints. Each row is held until its
#: sequence ends: 1 MiB of one-byte rows costs 1.2 s and 360 MB (8 MiB: 15 s, 1.7 GB)
MAX_TABLE_BYTES = 1 << 20


class _Cut(Exception):
    """The line program ends or says something this reader does not follow."""


class _Bytes:
    def __init__(self, data: bytes, at: int, end: int) -> None:
        self.data, self.at, self.end = data, at, end

    def byte(self) -> int:
        if self.at >= self.end:
            raise _Cut
        self.at += 1
        return self.data[self.at - 1]

    def unpack(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self.at + size > self.end:
            raise _Cut
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return int(value)

    def uleb(self, signed: bool = False) -> int:
        value = shift = 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            shift += 7
            if shift > 70:
                raise _Cut
            if b < 0x80:
                return value - (1 << shift) if signed and b & 0x40 else value

    def string(self) -> str:
        stop = self.data.find(b"\0", self.at, self.end)
        if stop < 0:
            raise _Cut
        text = self.data[self.at : stop].decode("utf-8", "replace")
        self.at = stop + 1
        return text


#: a row of a line program: its address, location, its caller's index in the unit's rows
#: (-1: none) and whether its sequence is the kernel's
_Row = tuple[int, Location, int, bool]


@frozen
class LineRows:
    """What the rows of a kernel's ``.debug_line`` say that ``nvdisasm -gi`` may not print."""

    #: (location, its caller's location) of every inlined row, each pair once
    links: tuple[tuple[Location, Location], ...] = ()
    #: (address, location, its immediate caller's location or None) of each of the kernel's
    #: rows, by address (rows at one address in table order: the last one holds)
    rows: tuple[tuple[int, Location, Location | None], ...] = ()

    def at(self, pc: int) -> tuple[Location, Location | None] | None:
        """The innermost location of the row that holds ``pc`` and its immediate caller (the
        one its ``.loc`` names, exact: nvdisasm prints a row only where the innermost line
        changes, so the next call of a helper's line is listed with the first one's caller)."""
        k = bisect.bisect_right(self.rows, pc, key=lambda row: row[0])
        return None if k == 0 else self.rows[k - 1][1:]


def line_rows(path: str | Path, function: str) -> LineRows:
    """The inlined rows of the sequences of the cubin's ``.debug_line`` that hold
    ``function``'s code (mangled; the sequences are told apart by the table's relocations:
    where they name none, all sequences where ``function``'s is the cubin's only code
    section, else none); nothing where the table cannot be read."""
    try:
        elf = Elf(read_bounded(path, MAX_CUBIN_BYTES, what="cubin", code="invalid-kernel"), "")
        section = elf.by_name.get(".debug_line")
        if (
            section is None
            or section.size > MAX_TABLE_BYTES
            or _relocations(elf) > (section.size // _SET_ADDRESS_BYTES)
        ):
            return LineRows()
        body = elf.body(section)
        named = {
            offset: name for offset, name, *_ in elf.relocated(".debug_line", lambda k, s: True)
        }
    except ShmemError:  # an unreadable table only means no links
        return LineRows()
    mine = {function, f".text.{function}"}
    keep: Callable[[int], bool] | None = None
    if mine & set(named.values()):
        keep = lambda at: named.get(at) in mine  # noqa: E731
    elif [name for name in elf.by_name if name.startswith(".text.")] != [f".text.{function}"]:
        # every sequence's DW_LNE_set_address is 0 (an offset in its own section, which only
        # the relocation names): unnamed, another function's sequence cannot be told apart
        return LineRows()
    links: dict[tuple[Location, Location], None] = {}
    held: list[tuple[int, Location, Location | None]] = []
    try:
        for start, end in _units(body):
            rows = _unit(body, start, end, keep)
            for address, where, caller, kept in rows:
                up = rows[caller][1] if 0 <= caller < len(rows) else None
                if kept and up is not None:
                    links.setdefault((where, up), None)
                if kept:
                    held.append((address, where, up))
    except _Cut:
        pass
    held.sort(key=lambda row: row[0])  # stable: rows at one address keep the table's order
    return LineRows(tuple(links), tuple(held))


def source_files(path: str | Path) -> tuple[str, ...]:
    """The source files the headers of the cubin's ``.debug_line`` units name, each once
    (none where it has no table, or one this reader does not follow)."""
    try:
        elf = Elf(read_bounded(path, MAX_CUBIN_BYTES, what="cubin", code="invalid-kernel"), "")
        section = elf.by_name.get(".debug_line")
        if section is None or section.size > MAX_TABLE_BYTES:
            return ()
        body = elf.body(section)
    except ShmemError:
        return ()
    found: dict[str, None] = {}
    try:
        for start, end in _units(body):
            found.update(dict.fromkeys(_header(_Bytes(body, start, end))[5][1:]))
    except _Cut:
        pass
    return tuple(found)


def _units(body: bytes) -> Iterator[tuple[int, int]]:
    """Where each unit of a 32-bit DWARF ``.debug_line`` body lies (its start past the length
    word, its end), up to the first unit that is 64-bit or runs past the body."""
    at = 0
    while at + 4 <= len(body):
        length = struct.unpack_from("<I", body, at)[0]
        if length >= 0xFFFFFFF0 or at + 4 + length > len(body):
            return
        yield at + 4, at + 4 + length
        at += 4 + length


def _relocations(elf: Elf) -> int:
    """The relocations of ``.debug_line``: one a ``DW_LNE_set_address`` (each sequence's
    start), so at most one per :data:`_SET_ADDRESS_BYTES` of the table; more are not read
    (2.6 million naming one symbol held 609 MiB for 11 s)."""
    out = 0
    for name, size in ((".rela.debug_line", 24), (".rel.debug_line", 16)):
        section = elf.by_name.get(name)
        out += section.size // size if section is not None else 0
    return out


def _header(r: _Bytes) -> tuple[int, int, int, int, list[int], list[str]]:
    """A unit's header: its minimum instruction length, line base and range, opcode base,
    standard opcodes' operand counts and file names (index 0 empty); ``r`` is left at the
    unit's line program."""
    version = r.unpack("<H")
    if not 2 <= version <= 4:  # DWARF 5's header differs (address size, entry formats)
        raise _Cut
    header = r.unpack("<I")
    program = r.at + header
    step = r.byte()  # minimum instruction length
    if version >= 4:
        r.byte()  # maximum operations per instruction
    r.byte()  # default_is_stmt
    line_base = struct.unpack("b", bytes((r.byte(),)))[0]
    line_range, opcode_base = r.byte(), r.byte()
    if line_range == 0 or opcode_base == 0:
        raise _Cut
    lengths = [r.byte() for _ in range(opcode_base - 1)]
    folders = [""]
    while (name := r.string()) != "":
        folders.append(name)
    files = [""]
    while (name := r.string()) != "":
        folder = r.uleb()
        r.uleb(), r.uleb()  # time, length
        base = folders[folder] if folder < len(folders) else ""
        files.append(f"{base}/{name}" if base and not name.startswith("/") else name)
    r.at = program
    return step, line_base, line_range, opcode_base, lengths, files


def _unit(data: bytes, start: int, end: int, keep: Callable[[int], bool] | None) -> list[_Row]:
    """The rows of one unit's program (``keep(offset)``: whether the sequence whose
    DW_LNE_set_address operand lies at that offset is the kernel's; None: every one), each
    with its caller's index in the list (-1: none)."""
    r = _Bytes(data, start, end)
    step, line_base, line_range, opcode_base, lengths, files = _header(r)
    rows: list[_Row] = []
    file, line, context, kept, address = 1, 1, 0, keep is None, 0
    first = 0  # the index of the sequence's first row: contexts count from it

    def row() -> None:
        where = (files[file] if 0 < file < len(files) else "", line)
        rows.append((address, where, first + context - 1 if context else -1, kept))

    while r.at < end:
        op = r.byte()
        if op >= opcode_base:
            adjusted = op - opcode_base
            address += adjusted // line_range * step
            line += line_base + adjusted % line_range
            row()
        elif op == 0:
            size = r.uleb()
            stop = r.at + size
            if size == 0 or stop > end:
                raise _Cut
            sub = r.byte()
            if sub == _NV_CONTEXT:
                context = r.uleb()
                r.uleb()  # the function's name
            elif sub == _SET_ADDRESS:
                kept = keep is None or keep(r.at)
                address = r.unpack("<Q") if size == 9 else 0
            elif sub == _END_SEQUENCE:
                file, line, context, first, address = 1, 1, 0, len(rows), 0
            r.at = stop
        elif op == 1:  # copy
            row()
        elif op == 2:  # advance_pc
            address += r.uleb() * step
        elif op == 3:  # advance_line
            line += r.uleb(signed=True)
        elif op == 4:  # set_file
            file = r.uleb()
        elif op == 8:  # const_add_pc
            address += (255 - opcode_base) // line_range * step
        elif op == 9:  # fixed_advance_pc
            address += r.unpack("<H")
        else:  # the flags do not matter here; skip the operands
            for _ in range(lengths[op - 1] if op - 1 < len(lengths) else 0):
                r.uleb()
    return rows


def own_spans(rows: LineRows) -> tuple[tuple[str, int, int], ...]:
    """The lines a kernel's own code spans, per file (file, first, last): of its rows not
    inlined into it (ptxas places the first at the ``__global__`` line, the last at the
    closing brace), for telling which kernel a compiler's warning is about."""
    spans: dict[str, tuple[int, int]] = {}
    for _, (file, line), up in rows.rows:
        if up is None and line > 0:
            lo, hi = spans.get(file, (line, line))
            spans[file] = (min(lo, line), max(hi, line))
    return tuple((file, lo, hi) for file, (lo, hi) in spans.items())


def kernel_spans(
    kernels: Sequence[tuple[str | Path, str]], function: str
) -> tuple[tuple[tuple[str, int, int], ...], tuple[tuple[str, int, int], ...]]:
    """The own lines (:func:`own_spans`) of ``function`` and those of the build's other
    ``kernels`` (each a cubin's path and a mangled name), for telling which kernel a
    compiler's warning is about (:func:`...cuda.nvcc_messages.kernel_front`)."""
    mine: tuple[tuple[str, int, int], ...] = ()
    others: tuple[tuple[str, int, int], ...] = ()
    for path, name in kernels:
        spans = own_spans(line_rows(path, name))
        if name == function:
            mine = spans
        else:
            others += spans
    return mine, others
