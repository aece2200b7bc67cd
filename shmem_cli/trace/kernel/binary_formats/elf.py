"""The sections and symbols of a 64-bit little-endian ELF file (a cubin), read with the
standard library from bytes already read whole: every offset, count and name checked against
the bytes there are, so that a file that claims more than it holds is "not a valid cubin"
(a located :class:`ShmemError`), never a traceback. A relocatable CUDA object is refused with
what to trace instead."""

from __future__ import annotations

import struct
from collections.abc import Callable
from itertools import pairwise

from ....plumbing.errors import ShmemError, shorten
from ....plumbing.frozen import frozen

EM_CUDA = 190
SHT_SYMTAB = 2
SHT_STRTAB = 3
ET_REL = 1  # e_type of a relocatable object
SHT_NOBITS = 8
SHT_RELA, SHT_REL = 4, 9
STT_FUNC = 2
STO_CUDA_ENTRY = 0x10
SHF_EXECINSTR = 0x4
#: the most entry functions (kernels) a cubin may declare: each is read, demangled and kept
#: (2 million in a 64 MiB cubin held 1.9 GB for 40 s)
MAX_ENTRIES = 1 << 16
#: the names of ptxas 13's second copies of sections for sm_100 on ("Mercury")
MERCURY = ".nv.merc."


@frozen
class Section:
    name: str
    type: int
    offset: int
    size: int
    link: int
    flags: int = 0


@frozen
class Entry:
    """An entry function's symbol: its name, section index, index in the symbol table, value
    (its start within the section) and size."""

    name: str
    shndx: int
    symbol: int
    value: int
    size: int


class Elf:
    """The sections and symbols of a 64-bit little-endian ELF file, bounds-checked."""

    def __init__(self, data: bytes, path: str) -> None:
        self.data = data
        self.path = path
        if len(data) < 64 or data[:4] != b"\x7fELF":
            self._fail("not an ELF file")
        if data[4] != 2 or data[5] != 1:
            self._fail("not a 64-bit little-endian ELF file")
        self.abi_version = data[8]  # e_ident[EI_ABIVERSION]: 7 or 8 (elf_arch)
        (self.machine,) = struct.unpack_from("<H", data, 18)
        (self.flags,) = struct.unpack_from("<I", data, 0x30)
        if struct.unpack_from("<H", data, 16)[0] == ET_REL and self.machine == EM_CUDA:
            raise ShmemError(
                "a relocatable cubin (built with -rdc=true or -dc): the device link fills in its "
                "addresses; trace the linked executable (its fat binary holds the linked cubin) "
                "or build the cubin without -rdc",
                path=path,
                code="invalid-kernel",
            )
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        if shentsize != 64 or shoff + shnum * 64 > len(data) or shstrndx >= shnum:
            self._fail("its section table is cut off or malformed")
        raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * 64) for i in range(shnum)]
        # the bytes of all names read: a name's search costs its length, and names that overlap
        # (every symbol at the same long string) must not add up to more than twice the file
        self._name_budget = 2 * len(data) + (1 << 20)
        names = raw[shstrndx]
        self.sections = [
            Section(self._string(names[4], names[5], r[0]), r[1], r[4], r[5], r[6], r[2])
            for r in raw
        ]
        for i, s in enumerate(self.sections):
            if s.type != SHT_NOBITS and s.offset + s.size > len(data):
                said = s.name or f"{i} (it has no name)"  # was "section  runs past"
                self._fail(f"section {said} runs past the end of the file")
        self._check_disjoint()
        self.by_name = self._by_name()

    def _by_name(self) -> dict[str, Section]:
        """The sections by name, each name once, else "not a valid cubin": a kernel's code,
        attributes, shared memory and constants are found by name (``.text.<kernel>``,
        ``.nv.info.<kernel>``, ...) here and in nvdisasm's listing, and of two sections of a
        name each reader took its own (``--kernel spin`` traced trivial's code, its section
        renamed ``.text._Z4spinPi``). No linker writes two (none of 467 real cubins)."""
        out: dict[str, Section] = {}
        for k, section in enumerate(self.sections):
            if section.name and out.setdefault(section.name, section) is not section:
                first = self.sections.index(out[section.name])
                self._fail(
                    f"sections {first} and {k} are both named {shorten(section.name)}, which "
                    "no linker writes: rebuild it"
                )
        return out

    def _check_disjoint(self) -> None:
        """Refuse sections whose bytes overlap (no linker writes them, but for the copies
        below; 394 cubins of CUDA 12 and 13 for sm_90 and earlier, Triton's and executables'
        hold none): every reader that walks a section's records (symbols, relocations,
        constant banks, attributes) then costs at most the file twice, where 65,000 section
        headers naming one symbol table cost each a walk of it. String tables may be shared
        (one table for section and symbol names): a name is read from one by its index
        alone, its bytes counted by the names' own bound. For sm_100 on, ptxas 13 writes a
        ``.nv.merc.`` copy of a section over its very bytes (``.nv.merc.nv.constant.user``
        as ``.nv.constant3``): one such copy of a section is let be."""
        kept = [
            (k, s)
            for k, s in enumerate(self.sections)
            if s.type not in (SHT_NOBITS, SHT_STRTAB) and s.size
        ]
        originals = {(s.offset, s.size) for _k, s in kept if not s.name.startswith(MERCURY)}
        copied: set[tuple[int, int]] = set()
        spans = []
        for k, s in kept:
            span = (s.offset, s.size)
            if s.name.startswith(MERCURY) and span in originals and span not in copied:
                copied.add(span)
                continue
            spans.append((s.offset, s.offset + s.size, k))
        spans.sort()
        for (_start, end, a), (start, _end, b) in pairwise(spans):
            if start < end:
                first, second = self.sections[a].name, self.sections[b].name
                self._fail(
                    f"sections {shorten(first)} and {shorten(second)} overlap (at byte "
                    f"{start:#x}), which no linker writes: rebuild the cubin"
                )

    def _fail(self, why: str) -> None:
        raise ShmemError(f"not a valid cubin: {why}", path=self.path, code="invalid-kernel")

    def _string(self, table_offset: int, table_size: int, index: int) -> str:
        if index >= table_size or table_offset + table_size > len(self.data):
            self._fail("a name points outside its string table")
        start = table_offset + index
        end = self.data.find(b"\0", start, table_offset + table_size)
        if end < 0:
            self._fail("an unterminated name in a string table")
        self._name_budget -= end - start
        if self._name_budget < 0:
            self._fail("its names add up to more than twice its size (names that overlap)")
        return self.data[start:end].decode("utf-8", errors="replace")

    def body(self, section: Section) -> bytes:
        return self.data[section.offset : section.offset + section.size]

    def symbol_table(self, relocations: Section) -> Section:
        """The symbol table a relocation section names (not one: "not a valid cubin")."""
        symbols = self.sections[relocations.link] if relocations.link < len(self.sections) else None
        if symbols is None or symbols.type != SHT_SYMTAB:
            self._fail(f"{relocations.name} names no symbol table")
        assert symbols is not None
        return symbols

    def check_function_addresses(self) -> None:
        """Refuse a relocation that writes an address outside the code of the function it
        names (before nvdisasm reads them: its time grows with the distance, over a minute
        for 2^32 bytes, hours for 2^40)."""
        tables: dict[int, dict[int, tuple[int, int]]] = {}  # symbol index -> addends allowed
        for s in self.sections:
            if s.type != SHT_RELA:
                continue
            symbols = self.symbol_table(s)
            if s.link not in tables:
                table = self.body(symbols)[: symbols.size // 24 * 24]
                functions = tables[s.link] = {}
                for k, (_n, info, _o, shndx, value, _z) in enumerate(
                    struct.iter_unpack("<IBBHQQ", table)
                ):
                    if info & 0xF == STT_FUNC:
                        end = self.sections[shndx].size if 0 < shndx < len(self.sections) else 0
                        functions[k] = (-value, end - value)
            functions = tables[s.link]
            for offset, info, addend in struct.iter_unpack(
                "<QQq", self.body(s)[: s.size // 24 * 24]
            ):
                allowed = functions.get(info >> 32)
                if allowed is not None and not allowed[0] <= addend <= allowed[1]:
                    self._fail(
                        f"a relocation of {s.name} (at 0x{offset:x}) writes an address "
                        f"{addend:+#x} bytes from a function's start, outside its code"
                    )

    def objects(self, sections: set[int]) -> list[tuple[str, int, int, int]]:
        """(name, value, size, section index) of every symbol defined in one of
        ``sections`` (only their names are read)."""
        out = []
        for s in self.sections:
            if s.type != SHT_SYMTAB or s.link >= len(self.sections):
                continue
            strings = self.sections[s.link]
            for k in range(s.size // 24):
                name, _i, _o, shndx, value, size = struct.unpack_from(
                    "<IBBHQQ", self.data, s.offset + k * 24
                )
                if shndx in sections:
                    text = self._string(strings.offset, strings.size, name)
                    out.append((text, value, size, shndx))
        return out

    def entries(self) -> list[Entry]:
        """Every entry function (``__global__`` kernel); only their names are read, so a
        symbol table of millions of other symbols costs no strings."""
        out: list[Entry] = []
        for s in self.sections:
            if s.type != SHT_SYMTAB:
                continue
            if s.link >= len(self.sections):
                self._fail("the symbol table names no string table")
            strings = self.sections[s.link]
            for k in range(s.size // 24):
                name, info, other, shndx, value, size = struct.unpack_from(
                    "<IBBHQQ", self.data, s.offset + k * 24
                )
                if info & 0xF == STT_FUNC and other & STO_CUDA_ENTRY:
                    if len(out) == MAX_ENTRIES:
                        self._fail(
                            f"it declares more than {MAX_ENTRIES:,} kernels (entry functions), "
                            "the most shmem reads from one cubin: build the kernels to trace "
                            "into a cubin of their own"
                        )
                    text = self._string(strings.offset, strings.size, name)
                    out.append(Entry(text, shndx, k, value, size))
        return out

    def code_of(self, entry: Entry) -> Section:
        """The code section of ``entry``, where the driver starts it (the symbol's value within
        its section): from its first byte, its symbol's size inside it, as every compiler
        writes it (1,046 kernels of 467 real cubins), else "not a valid cubin". Shmem reads a
        kernel's SASS by its section's name, from byte 0, so a symbol moved into its code
        would be traced from code the driver does not run (one at byte 0x100 was traced from
        byte 0)."""
        name, shndx = shorten(entry.name), entry.shndx
        code = self.sections[shndx] if 0 < shndx < len(self.sections) else None
        if code is None or code.type == SHT_NOBITS or not code.flags & SHF_EXECINSTR:
            where = f"section {shndx}" + (f" ({shorten(code.name)})" if code else "")
            self._fail(f"kernel {name} is in {where}, which holds no code: rebuild it")
        assert code is not None
        own = self.by_name.get(f".text.{entry.name}")
        if own is not None and own is not code:
            self._fail(
                f"kernel {name} is in section {shndx} ({shorten(code.name)}), not in its own "
                f"code, .text.{name}, where a compiler puts it (and where its listing is "
                "read): rebuild it"
            )
        if entry.value != 0:
            self._fail(
                f"kernel {name} starts {entry.value:#x} bytes into its code "
                f"({shorten(code.name)}), where the driver would start it, and a compiler "
                "always starts a kernel at byte 0 of its section: rebuild it"
            )
        if entry.size > code.size:
            self._fail(
                f"kernel {name}'s symbol claims {entry.size:,} bytes of code, more than its "
                f"section {shorten(code.name)} holds ({code.size:,}): rebuild it"
            )
        return code

    def relocation_count(self, relocations: Section, patched: str) -> int:
        """The relocations in ``relocations``, which patch the section ``patched``: at most
        one per 4-byte word of it (an address, or its halves), else "not a valid cubin"
        (2.6 million over one constant bank's 8 bytes were each read, named and kept: 462
        MiB, 19 s); none where that section is not there (nothing to patch)."""
        target = self.by_name.get(patched)
        if target is None:
            return 0
        count = relocations.size // (24 if relocations.type == SHT_RELA else 16)
        if count > target.size // 4:
            self._fail(
                f"{relocations.name} holds {count:,} relocations, more than the "
                f"{target.size // 4:,} 4-byte words of {patched} they patch"
            )
        return count

    def relocated(
        self, section: str, wanted: Callable[[int, int], bool]
    ) -> list[tuple[int, str, int, int, int, int]]:
        """(offset, name, symbol index, section index, value, addend) of each relocation of the
        section ``section`` (its ``.rela``/``.rel`` sections) whose symbol's type and section
        index are ``wanted`` (only their names are read)."""
        out: list[tuple[int, str, int, int, int, int]] = []
        for kind, size in ((SHT_RELA, 24), (SHT_REL, 16)):
            s = self.by_name.get(f".{'rela' if size == 24 else 'rel'}{section}")
            if s is None or s.type != kind:
                continue
            symbols = self.symbol_table(s)
            if symbols.link >= len(self.sections):
                self._fail("the symbol table names no string table")
            strings = self.sections[symbols.link]
            for k in range(self.relocation_count(s, section)):
                offset, info = struct.unpack_from("<QQ", self.data, s.offset + k * size)
                addend = (
                    struct.unpack_from("<q", self.data, s.offset + k * 24 + 16)[0]
                    if size == 24
                    else 0
                )
                index = info >> 32
                if (index + 1) * 24 > symbols.size:
                    self._fail(f"a relocation of {s.name} names no symbol")
                name, sym_info, _o, shndx, value = struct.unpack_from(
                    "<IBBHQ", self.data, symbols.offset + index * 24
                )
                if wanted(sym_info & 0xF, shndx):
                    text = self._string(strings.offset, strings.size, name)
                    out.append((offset, text, index, shndx, value, addend))
        return out

    def code_symbols(
        self, function: str, wanted: Callable[[int, int], bool]
    ) -> list[tuple[str, int, int, int]]:
        """(name, symbol index, section index, value) of each symbol the relocations of
        ``function``'s code name (what it calls, the data whose address it takes) whose type
        and section index are ``wanted``, each once."""
        found = self.relocated(f".text.{function}", wanted)
        unique = {index: (name, index, shndx, value) for _, name, index, shndx, value, _a in found}
        return list(unique.values())

    def called(self, function: str) -> list[tuple[str, int]]:
        """(name, symbol index) of each other function defined here that the relocations of
        ``function``'s code name: the functions it calls (a ``-G`` build's ``CALL.ABS``)."""
        found = self.code_symbols(function, lambda kind, shndx: kind == STT_FUNC and shndx != 0)
        return [(name, index) for name, index, _s, _v in found if name != function]

    def reached(self, function: str) -> list[tuple[str, int]]:
        """:meth:`called` of ``function``, of those, ...: every function it may run."""
        seen, todo, out = {function}, [function], []
        while todo:
            for name, index in self.called(todo.pop()):
                if name not in seen:
                    seen.add(name)
                    todo.append(name)
                    out.append((name, index))
        return out
