"""``__constant__`` memory of a launch: the cubin's banks as the driver loads them, and the
values a host program sets by name.

A cubin keeps each bank of user constants in a section ``.nv.constantN`` (N the bank, 3 for
``__constant__`` variables on sm_90; ``.nv.constantN.<kernel>`` for one kernel's own), its
bytes the variables' initial values, and every ``__constant__`` variable as a symbol in that
section (offset and size). Loading the module, the driver copies each section into its bank;
``cudaMemcpyToSymbol`` then overwrites one variable. :func:`read_constants` does the first,
:func:`set_constants` the second from ``--const NAME=VALUE`` texts:

* ``NAME=1,2,3`` (or ``NAME=TYPE:1,2,3``): the variable's first elements, in the element type
  of its declaration in the source (``__constant__ float table[64]``) or the ``TYPE:`` given
  (``float``, ``double``, ``half``, ``int``, ``unsigned``, ``int8_t``..``uint64_t``, ...);
  without either, integers fill 4-byte ints and other numbers 4-byte floats;
* ``NAME=@FILE`` (raw bytes, or a ``.npy`` array's data): the variable's first bytes.

A variable whose bytes are all zero in the cubin (no initialiser, or one of zeros: the cubin
does not tell them apart) and that the launch does not set is *unset*: it reads as zero, as on
the device, and a value read from it is marked inexact (a request whose address depends on it
is counted in ``inexact_requests``), and the report names the variable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path

from ...cuda.launch.c_types import scalar_of
from ...cuda.launch.values import (
    LaunchError,
    element_type,
    is_integer,
    table_fields,
    value_bytes,
)
from ...plumbing.bounded_read import read_bounded
from ...plumbing.errors import shorten
from ...plumbing.frozen import frozen
from .binary_formats.elf import SHT_NOBITS, Elf
from .buffers import read_buffer
from .cubin import MAX_CUBIN_BYTES
from .externals import (
    GlobalSlot,
    code_data,
    external_slots,
    function_slots,
    global_slots,
    place,
)

#: a constant bank is 64 KiB on every GPU
BANK_BYTES = 64 << 10
_SECTION = re.compile(r"\.nv\.constant([1-9][0-9]?)(?:\.(.+))?\Z")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_:]*\Z")
_DECLARED = re.compile(
    r"__constant__\s+(?:__device__\s+)?(?:static\s+)?(?:const\s+)?"
    r"((?:(?:unsigned|signed|long|short)\s+)*[A-Za-z_][A-Za-z0-9_:]*)\s+"
    r"([A-Za-z_][A-Za-z0-9_]*)\s*[\[=;{]"
)


@frozen
class ConstSymbol:
    """A ``__constant__`` variable: its bank, byte offset in it and size."""

    name: str
    bank: int
    offset: int
    size: int


@frozen
class Constants:
    """The constant banks (other than 0) of a launch and what is known of their variables."""

    banks: Mapping[int, bytes] = field(default_factory=dict)
    symbols: tuple[ConstSymbol, ...] = ()
    unset: frozenset[str] = frozenset()  # variables neither initialised nor set
    given: tuple[tuple[str, str], ...] = ()  # (name, value as given) set by the launch
    types: Mapping[str, str] = field(default_factory=dict)  # declared element types
    # the address given to each function outside the cubin (printf's vprintf) -> its name
    externals: Mapping[int, str] = field(default_factory=dict)
    # the bank slots that hold addresses in the module's global sections, and those sections
    # (bytes, or a size of zeros): placed in the launch's global memory (externals.link_globals)
    global_slots: tuple[GlobalSlot, ...] = ()
    global_sections: Mapping[str, bytes | int] = field(default_factory=dict)
    # the module's global data whose address the code takes (a -G build's): each symbol's
    # section of global_sections and offset there
    code_symbols: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    # the slots of those sections the loader fills with a function's address (a virtual
    # table's entries): (section, offset, function, addend)
    function_slots: tuple[tuple[str, int, str, int], ...] = ()

    def symbol_at(self, bank: int, offset: int) -> ConstSymbol | None:
        for s in self.symbols:
            if s.bank == bank and s.offset <= offset < s.offset + s.size:
                return s
        return None

    def unset_spans(self) -> dict[int, list[tuple[int, int, str]]]:
        """Per bank, (start, end, name) of every unset variable."""
        out: dict[int, list[tuple[int, int, str]]] = {}
        for s in self.symbols:
            if s.name in self.unset:
                out.setdefault(s.bank, []).append((s.offset, s.offset + s.size, s.name))
        return out


def read_constants(path: str | Path, kernel: str) -> Constants:
    """The constant banks the driver loads for ``kernel`` (its mangled name) from the cubin
    at ``path``, with their variables."""
    data = read_bounded(path, MAX_CUBIN_BYTES, what="cubin", code="invalid-kernel")
    elf = Elf(data, str(path))
    banks: dict[int, bytes] = {}
    bank_of: dict[int, int] = {}
    for index, s in enumerate(elf.sections):
        m = _SECTION.match(s.name)
        if m is None or (m.group(2) is not None and m.group(2) != kernel):
            continue
        bank = int(m.group(1))
        if s.size > BANK_BYTES:
            raise LaunchError(
                f"the cubin's constant bank {bank} ({s.name}) has {s.size:,} bytes; a bank "
                f"holds {BANK_BYTES:,}"
            )
        body = bytes(s.size) if s.type == SHT_NOBITS else elf.body(s)
        old = banks.get(bank, b"")
        banks[bank] = bytes(a | b for a, b in zip(*_pad(old, body), strict=True))
        bank_of[index] = bank
    symbols: list[ConstSymbol] = []
    for name, value, size, shndx in elf.objects(set(bank_of)) if bank_of else ():
        bank = bank_of[shndx]
        if size and value + size <= len(banks[bank]):
            symbols.append(ConstSymbol(name, bank, value, size))
    unset = frozenset(
        s.name for s in symbols if not any(banks[s.bank][s.offset : s.offset + s.size])
    )
    externals = place(banks, external_slots(elf, kernel))
    slots, sections = global_slots(elf, kernel)
    code_symbols, code_sections = code_data(elf, kernel)
    sections = {**code_sections, **sections}
    return Constants(
        banks=banks,
        symbols=tuple(symbols),
        unset=unset,
        externals=externals,
        global_slots=tuple(slots),
        global_sections=sections,
        code_symbols=code_symbols,
        function_slots=tuple(function_slots(elf, sections)),
    )


def _pad(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    n = max(len(a), len(b))
    return a.ljust(n, b"\0"), b.ljust(n, b"\0")


def declared_types(texts: Iterable[str]) -> dict[str, str]:
    """``__constant__`` variable name -> its element type, as the sources declare them."""
    out: dict[str, str] = {}
    for text in texts:
        if "__constant__" not in text:
            continue
        for m in _DECLARED.finditer(text):
            out.setdefault(m.group(2), " ".join(m.group(1).split()))
    return out


def set_constants(
    constants: Constants, texts: Sequence[str], *, types: Mapping[str, str] | None = None
) -> Constants:
    """``constants`` with the ``--const NAME=VALUE`` texts written into their variables."""
    types = dict(types or constants.types)
    banks = {k: bytearray(v) for k, v in constants.banks.items()}
    unset = set(constants.unset)
    given: list[tuple[str, str]] = []
    seen: set[str] = set()
    for text in texts:
        name, sep, value = text.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not _NAME.match(name) or not value:
            raise LaunchError(
                f"--const expects NAME=VALUE (a __constant__ variable's name), got "
                f"{shorten(text)!r}"
            )
        symbol = _find(constants, name)
        if symbol.name in seen:
            raise LaunchError(f"--const {name} is given twice")
        seen.add(symbol.name)
        data = _value(symbol, value, types.get(symbol.name))
        start = symbol.offset
        banks[symbol.bank][start : start + len(data)] = data
        unset.discard(symbol.name)
        given.append((symbol.name, value))
    return replace(
        constants,
        banks={k: bytes(v) for k, v in banks.items()},
        unset=frozenset(unset),
        given=(*constants.given, *given),
        types=types,
    )


def _find(constants: Constants, name: str) -> ConstSymbol:
    for s in constants.symbols:
        if s.name == name or s.name.rsplit("::", 1)[-1] == name:
            return s
    known = shorten(", ".join(s.name for s in constants.symbols), 200)
    raise LaunchError(
        f"--const {shorten(name)}: the kernel's cubin has no __constant__ variable of that name"
        + (f" (it has: {known})" if known else " (it has none)")
    )


def _value(symbol: ConstSymbol, value: str, declared: str | None) -> bytes:
    where = f"--const {symbol.name}"
    if value.startswith("@"):
        data = read_buffer(value[1:], where, limit=BANK_BYTES)
        if len(data) > symbol.size:
            raise LaunchError(
                f"{where}: {shorten(value[1:])} holds {len(data):,} bytes; the variable has "
                f"{symbol.size:,}"
            )
        return data
    out = typed_values(value, where, declared)
    if len(out) > symbol.size:
        raise LaunchError(
            f"{where}: {value.count(',') + 1} value(s) take {len(out):,} bytes; the variable "
            f"has {symbol.size:,}"
        )
    return out


def typed_values(value: str, where: str, declared: str | None = None) -> bytes:
    """The bytes of ``TYPE:v,v,...`` (or ``v,v,...`` in the ``declared`` C type; without
    either, integers as 4-byte ints and other numbers as 4-byte floats), at most
    ``MAX_CONST_VALUES`` values (:func:`table_fields`): ``--const`` and ``--memory`` values."""
    type_name, colon, numbers = value.partition(":")
    if colon:
        scalar: tuple[str, int] | None = element_type(type_name, where)
    else:
        numbers = value
        scalar = scalar_of(declared) if declared else None
    fields = table_fields(numbers, where)
    return b"".join(_element(f, scalar, f"{where} value {i}") for i, f in enumerate(fields))


def _element(text: str, scalar: tuple[str, int] | None, where: str) -> bytes:
    """One value, as a by-value parameter of its C type takes it (:func:`value_bytes`: a float
    for an integer type refused, 0 or 1 for a bool, a bfloat16's 16 bits); of no type known,
    an integer as an ``int`` and any other number as a ``float``."""
    ctype, size = scalar or (("int", 4) if is_integer(text) else ("float", 4))
    return value_bytes(text, size, where, ctype)
