"""What the driver links into a module's constant banks: the addresses of functions outside
the cubin that its code calls (``printf``'s ``vprintf``, a failed ``assert()``'s
``__assertfail``) and of the module's own global variables (``__device__`` data, and the
tables of the CUDA math library: double ``sin``/``cos`` read ``__cudart_sin_cos_coeffs``).

nvcc does not link them into the cubin: the kernel loads the function's address from a
constant bank (``LDC.64 R10, c[0x4][R10]``) and calls through the register
(``CALL.ABS.NOINC R10``). The bank's bytes there are zero in the file; a relocation of the
bank's section against the undefined symbol tells the driver to write the address when it
loads the module. :func:`external_slots` reads those relocations, and :func:`place` writes
an address of its own for each function into the banks, so the emulator can tell which
function a call goes to (:data:`EXTERNAL_BASE`: far above any global memory it maps).
A slot whose relocation names a symbol of the module's global sections (``.nv.global.init``,
initialised; ``.nv.global``, zeros) gets the address that section is given in the launch's
global memory (:func:`link_globals`), so a load through it reads the module's bytes.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterator, Mapping

from ...plumbing.frozen import frozen
from .binary_formats.elf import SHT_NOBITS, SHT_REL, SHT_RELA, STT_FUNC, Elf, Section

#: where the addresses given to external functions start, 16 bytes apart
EXTERNAL_BASE = 0xFFFF_FF00_0000_0000
#: the most external functions given an address
MAX_EXTERNALS = 4096

#: the relocation that writes a symbol's 64-bit address (R_CUDA_64)
_R_CUDA_64 = 2
_SECTION = re.compile(r"\.rela?\.nv\.constant([1-9][0-9]?)(?:\.(.+))?\Z")


@frozen
class ExternalSlot:
    """The 8 bytes of a constant bank that the driver fills with a function's address."""

    bank: int
    offset: int
    name: str


@frozen
class GlobalSlot:
    """The 8 bytes of a constant bank that the driver fills with the address of a byte of
    one of the module's global sections: that section's name and the byte's offset in it."""

    bank: int
    offset: int
    section: str
    at: int


#: the module's global sections: initialised data, and zeros
GLOBAL_SECTIONS = (".nv.global.init", ".nv.global")
#: the most bytes a module's global sections may claim
MAX_GLOBAL_BYTES = 1 << 32


@frozen
class _Relocation:
    bank: int
    offset: int  # of the slot in the bank
    name: str  # the symbol's
    section: int  # the symbol's section index (0: undefined)
    at: int  # the symbol's value plus the addend


def _relocations(elf: Elf, kernel: str) -> Iterator[_Relocation]:
    """Every 64-bit address relocation of the constant banks ``kernel`` (its mangled name)
    sees."""
    for s in elf.sections:
        m = _SECTION.match(s.name)
        if m is None or s.type not in (SHT_RELA, SHT_REL):
            continue
        if m.group(2) is not None and m.group(2) != kernel:
            continue
        symbols = elf.symbol_table(s)
        strings = elf.sections[symbols.link] if symbols.link < len(elf.sections) else None
        size = 24 if s.type == SHT_RELA else 16
        for k in range(elf.relocation_count(s, s.name[s.name.index(".nv.") :])):
            offset, info = struct.unpack_from("<QQ", elf.data, s.offset + k * size)
            addend = (
                struct.unpack_from("<q", elf.data, s.offset + k * 24 + 16)[0] if size == 24 else 0
            )
            index, kind = info >> 32, info & 0xFFFF_FFFF
            if kind != _R_CUDA_64 or (index + 1) * 24 > symbols.size:
                continue
            name, _info, _other, shndx, value = struct.unpack_from(
                "<IBBHQ", elf.data, symbols.offset + index * 24
            )
            text = elf._string(strings.offset, strings.size, name) if name and strings else ""
            yield _Relocation(int(m.group(1)), offset, text, shndx, value + addend)


def external_slots(elf: Elf, kernel: str) -> list[ExternalSlot]:
    """The slots of the constant banks ``kernel`` (its mangled name) sees that hold the
    address of a function the cubin does not define."""
    out: list[ExternalSlot] = []
    for r in _relocations(elf, kernel):
        if r.section == 0 and r.name:  # undefined: the driver links it in
            out.append(ExternalSlot(r.bank, r.offset, r.name))
            if len(out) > MAX_EXTERNALS:
                elf._fail(f"it calls more than {MAX_EXTERNALS} functions outside it")
    return out


def global_slots(elf: Elf, kernel: str) -> tuple[list[GlobalSlot], dict[str, bytes | int]]:
    """The slots of the banks ``kernel`` sees that hold an address in the module's global
    sections, and those sections (their bytes, or the size of their zeros)."""
    slots: list[GlobalSlot] = []
    sections: dict[str, bytes | int] = {}
    for r in _relocations(elf, kernel):
        if not 0 < r.section < len(elf.sections):
            continue
        sec = elf.sections[r.section]
        if sec.name not in GLOBAL_SECTIONS:
            continue
        if sec.name not in sections:  # once: a copy a slot was hours (8,000 slots, 40 MiB)
            sections[sec.name] = _global_data(elf, sec)
        slots.append(GlobalSlot(r.bank, r.offset, sec.name, r.at))
    return slots, sections


def _global_data(elf: Elf, sec: Section) -> bytes | int:
    """A global section's bytes, or the size of its zeros; at most :data:`MAX_GLOBAL_BYTES`
    (the launch's global memory reserves it, real only where written)."""
    if sec.size > MAX_GLOBAL_BYTES:
        elf._fail(
            f"section {sec.name} claims {sec.size:,} bytes; a module's global data is at most "
            f"{MAX_GLOBAL_BYTES >> 30} GiB"
        )
    return sec.size if sec.type == SHT_NOBITS else elf.body(sec)


def code_data(elf: Elf, kernel: str) -> tuple[dict[str, tuple[str, int]], dict[str, bytes | int]]:
    """The module's global data whose address the code ``kernel`` runs takes (``MOV R6,
    32@lo(sym)``: a -G build's objects of CUB's functions, in ``.nv.global``): each symbol's
    section and offset there, and those sections (their bytes, or the size of their
    zeros)."""
    index = {i: s for i, s in enumerate(elf.sections) if s.name in GLOBAL_SECTIONS}
    symbols: dict[str, tuple[str, int]] = {}
    sections: dict[str, bytes | int] = {}
    for function in [kernel, *(name for name, _ in elf.reached(kernel))]:
        for name, _i, shndx, value in elf.code_symbols(function, lambda _k, i: i in index):
            sec = index[shndx]
            if sec.name not in sections:
                sections[sec.name] = _global_data(elf, sec)
            symbols[name] = (sec.name, value)
    return symbols, sections


def function_slots(elf: Elf, sections: Mapping[str, object]) -> list[tuple[str, int, str, int]]:
    """The 8 bytes of the global ``sections`` that the loader fills with the address of a
    function of the cubin plus an addend (a virtual table's entries): (section, offset,
    function, addend)."""

    def function(kind: int, shndx: int) -> bool:
        return kind == STT_FUNC and shndx != 0

    found = ((sec, elf.relocated(sec, function)) for sec in sections)
    return [(sec, at, name, addend) for sec, slots in found for at, name, *_, addend in slots]


def link_globals(
    banks: dict[int, bytes],
    slots: tuple[GlobalSlot, ...],
    sections: Mapping[str, bytes | int],
    add_buffer: Callable[[bytes | int, str], int],
) -> dict[str, int]:
    """Give each global section a buffer (``add_buffer(content, name) -> address``) and write
    the addresses into its slots of ``banks`` (in place), as the driver does at load; the
    address of each section."""
    base = {name: add_buffer(data, f"the module's {name}") for name, data in sections.items()}
    edited: dict[int, bytearray] = {}  # each bank copied once, not once a slot
    for slot in slots:
        if slot.bank not in edited:
            edited[slot.bank] = bytearray(banks.get(slot.bank, b""))
        body = edited[slot.bank]
        if slot.offset + 8 <= len(body):
            address = (base[slot.section] + slot.at) % (1 << 64)  # the loader's 64-bit sum
            body[slot.offset : slot.offset + 8] = address.to_bytes(8, "little")
    banks.update((bank, bytes(body)) for bank, body in edited.items() if body)
    return base


def place(banks: dict[int, bytes], slots: list[ExternalSlot]) -> dict[int, str]:
    """Write an address of shmem's own for each function into its slots of ``banks`` (in
    place); address -> function name."""
    address: dict[str, int] = {}
    for slot in slots:
        body = bytearray(banks.get(slot.bank, b""))
        if slot.offset + 8 > len(body):  # not in the bank the cubin declares: never read
            continue
        at = address.setdefault(slot.name, EXTERNAL_BASE + 16 * len(address))
        body[slot.offset : slot.offset + 8] = at.to_bytes(8, "little")
        banks[slot.bank] = bytes(body)
    return {at: name for name, at in address.items()}
