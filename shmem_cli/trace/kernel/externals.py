"""Functions outside a cubin that its code calls: ``printf``'s ``vprintf``, a failed
``assert()``'s ``__assertfail``.

nvcc does not link them into the cubin: the kernel loads the function's address from a
constant bank (``LDC.64 R10, c[0x4][R10]``) and calls through the register
(``CALL.ABS.NOINC R10``). The bank's bytes there are zero in the file; a relocation of the
bank's section against the undefined symbol tells the driver to write the address when it
loads the module. :func:`external_slots` reads those relocations, and :func:`place` writes
an address of its own for each function into the banks, so the emulator can tell which
function a call goes to (:data:`EXTERNAL_BASE`: far above any global memory it maps).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from .elf import Elf

#: where the addresses given to external functions start, 16 bytes apart
EXTERNAL_BASE = 0xFFFF_FF00_0000_0000
#: the most external functions given an address
MAX_EXTERNALS = 4096
SHT_RELA, SHT_REL = 4, 9
#: the relocation that writes a symbol's 64-bit address (R_CUDA_64)
_R_CUDA_64 = 2
_SECTION = re.compile(r"\.rela?\.nv\.constant([1-9][0-9]?)(?:\.(.+))?\Z")


@dataclass(frozen=True)
class ExternalSlot:
    """The 8 bytes of a constant bank that the driver fills with a function's address."""

    bank: int
    offset: int
    name: str


def external_slots(elf: Elf, kernel: str) -> list[ExternalSlot]:
    """The slots of the constant banks ``kernel`` (its mangled name) sees that hold the
    address of a function the cubin does not define."""
    out: list[ExternalSlot] = []
    for s in elf.sections:
        m = _SECTION.match(s.name)
        if m is None or s.type not in (SHT_RELA, SHT_REL) or s.link >= len(elf.sections):
            continue
        if m.group(2) is not None and m.group(2) != kernel:
            continue
        symbols = elf.sections[s.link]
        size = 24 if s.type == SHT_RELA else 16
        for k in range(s.size // size):
            offset, info = struct.unpack_from("<QQ", elf.data, s.offset + k * size)
            index, kind = info >> 32, info & 0xFFFF_FFFF
            if kind != _R_CUDA_64 or (index + 1) * 24 > symbols.size:
                continue
            name, _info, _other, shndx = struct.unpack_from(
                "<IBBH", elf.data, symbols.offset + index * 24
            )
            if shndx == 0 and name:  # undefined: the driver links it in
                text = elf._string(elf.sections[symbols.link].offset,
                                   elf.sections[symbols.link].size, name)  # fmt: skip
                out.append(ExternalSlot(int(m.group(1)), offset, text))
                if len(out) > MAX_EXTERNALS:
                    elf._fail(f"it calls more than {MAX_EXTERNALS} functions outside it")
    return out


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
