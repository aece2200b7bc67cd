"""Values put at a byte offset inside a parameter: ``--arg KEY+OFFSET=VALUE``.

A struct passed by value may hold what ``a,b,c`` numbers cannot give: a device pointer (a
CuTe ``Tensor``'s gmem pointer, after its layout; the operands of a CUTLASS ``Params`` block
read with ``--params``) or a ``CUtensorMap``. ``KEY+OFFSET`` names byte OFFSET (decimal or
``0x``) of the parameter KEY, and the value written there is

* ``@FILE`` (raw bytes, or a ``.npy`` array's data): an 8-byte pointer to a new global
  buffer holding the file's bytes; ``zeros:BYTES`` one to a zero-filled buffer of that
  size. OFFSET is a multiple of 8;
* ``NUMBER[:WIDTH]``: a number in WIDTH bytes (1, 2, 4 or 8; default 4, an ``int``), a
  float as ``half``, ``float`` or ``double`` by that width. OFFSET is a multiple of WIDTH;
* ``tensormap:...`` (:mod:`.tensormap`): the 128 bytes of a map. OFFSET is a multiple of 64
  (the map's alignment in the parameter space). ``KEY=tensormap:...`` is the same at 0.

The value goes over the parameter's bytes wherever those come from (its ``--arg KEY=``
value, the ``--params`` block, else zeros); two values of one parameter may not share a
byte. Every error is a :class:`LaunchError` that says which ``--arg`` and how to mend it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...cuda.launch import tensormap, values
from ...cuda.launch.files import MAX_FILE_BYTES
from ...cuda.launch.values import LaunchError
from ...cuda.launch.zeros import ZEROS
from ...plumbing.errors import shorten
from ...plumbing.frozen import frozen
from .buffers import buffer_source, read_buffer
from .param_block import Handover
from .params import Param, resolve_key

POINTER_BYTES = 8


@frozen
class TensorMapArg:
    """A tensor map put into a parameter at ``offset``; its global memory is ``data``
    (None: zero-filled) and its address is set when the buffer exists."""

    param: Param
    offset: int
    map: tensormap.TensorMap
    data: bytes | None
    source: str  # the file, or "zero-filled"
    key: str = ""  # the --arg key as given ("" where a dumped map was decoded)

    @property
    def size(self) -> int:
        return tensormap.BYTES

    def describe(self) -> str:
        mem = f"@{self.source}" if self.data is not None else "zero-filled"
        at = f" at +{self.offset}" if self.offset else ""
        return f"tensor map{at}: {tensormap.describe(self.map)}, over {mem} memory"


@frozen
class FieldArg:
    """A number (``data``), or a pointer to a new global buffer of ``buffer_size`` bytes
    (``data`` empty; ``held``: the file's bytes, None: zero-filled), at ``offset`` in the
    parameter."""

    param: Param
    offset: int
    key: str  # the --arg key as given, for errors
    text: str  # the value as given
    data: bytes = b""
    buffer_size: int = 0
    held: Handover | None = None
    source: str = "zero-filled"  # a pointer's file

    @property
    def is_pointer(self) -> bool:
        return not self.data

    @property
    def size(self) -> int:
        return len(self.data) or POINTER_BYTES

    @property
    def file_bytes(self) -> int:
        """Bytes of a buffer file this field reads (0: none)."""
        return self.held.size if self.held is not None else 0

    @property
    def buffer_name(self) -> str:
        """The name of its buffer in the emulator's memory (and in overrun errors)."""
        return f"{self.param.name or f'param{self.param.ordinal}'}+{self.offset}"

    def describe(self) -> str:
        if not self.is_pointer:
            return f"+{self.offset}: {self.text} ({self.size} B)"
        what = f"@{self.source}" if self.held is not None else "a zero-filled buffer"
        return f"+{self.offset}: pointer to {what} ({self.buffer_size:,} B)"


def has_offset(key: str) -> bool:
    """Whether ``--arg KEY=`` names a place inside a parameter (``KEY+OFFSET``)."""
    return "+" in key


def field_arg(key: str, value: str, params: Sequence[Param]) -> TensorMapArg | FieldArg:
    """``--arg KEY[+OFFSET]=VALUE`` read and placed (without ``+OFFSET``: a tensor map)."""
    name, plus, off_text = key.partition("+")
    param = resolve_key(name, params)
    where = f"--arg {shorten(key.strip())}"
    offset = values.field_offset(off_text, where) if plus else 0
    if value.startswith(tensormap.PREFIX):
        _place(param, offset, tensormap.BYTES, 64, where, "a tensor map")
        try:
            spec = tensormap.parse_spec(value)
        except tensormap.TensorMapError as exc:
            raise LaunchError(f"{where}: {exc.message}") from None
        data = read_file("@" + spec.data, where) if spec.data else None
        source = spec.data or "zero-filled"
        return TensorMapArg(param, offset, spec.map, data, source, key.strip())
    if value.startswith("@"):
        _place(param, offset, POINTER_BYTES, POINTER_BYTES, where, "a pointer")
        held = Handover(buffer_source(value[1:], where))  # a large file: read later, in place
        if held.size == 0:
            raise LaunchError(f"{where}: {shorten(value[1:], 200)} holds no bytes")
        return FieldArg(param, offset, key.strip(), value, b"", held.size, held, value[1:])
    if value.lower().startswith(ZEROS):
        _place(param, offset, POINTER_BYTES, POINTER_BYTES, where, "a pointer")
        size = values.zeros_bytes(value[len(ZEROS) :], where)
        return FieldArg(param, offset, key.strip(), value, b"", size)
    data = values.field_number(value, where)
    _place(param, offset, len(data), len(data), where, f"a {len(data)}-byte number")
    return FieldArg(param, offset, key.strip(), value, data)


def read_file(text: str, where: str) -> bytes:
    """The content of ``@FILE`` (raw bytes, or a ``.npy`` array's data): :mod:`.buffers`."""
    return read_buffer(text[1:], where)


def check_overlaps(fields: Sequence[TensorMapArg | FieldArg]) -> None:
    """No two values given at offsets of one parameter share a byte."""
    spans = sorted(fields, key=lambda f: (f.param.ordinal, f.offset))
    for a, b in zip(spans, spans[1:], strict=False):
        if a.param.ordinal == b.param.ordinal and b.offset < a.offset + a.size:
            first, second = (f.key or f.param.label for f in (a, b))
            raise LaunchError(
                f"--arg {shorten(first)} (bytes {a.offset}-{a.offset + a.size - 1}) and "
                f"--arg {shorten(second)} (bytes {b.offset}-{b.offset + b.size - 1}) of "
                f"parameter {a.param.label} overlap: give each byte once"
            )


def file_total(fields: Sequence[FieldArg], others: int = 0) -> int:
    """Bytes of the buffer files the fields read with ``others`` (the launch's other
    buffer files), refused past :data:`MAX_FILE_BYTES`."""
    total = others + sum(f.file_bytes for f in fields)
    if total > MAX_FILE_BYTES:
        raise LaunchError(
            f"the buffer files of the launch hold {total:,} bytes in all; the most is "
            f"{MAX_FILE_BYTES >> 20} MiB (give smaller files, or zero-filled buffers)"
        )
    return total


def _place(param: Param, offset: int, size: int, align: int, where: str, what: str) -> None:
    """``size`` bytes at ``offset``, a multiple of ``align``, inside ``param``."""
    if offset % align:
        below = offset - offset % align
        raise LaunchError(
            f"{where}: {what} goes at an offset that is a multiple of {align}; "
            f"+{offset} is not (+{below} or +{below + align}?)"
        )
    if offset + size > param.size:
        raise LaunchError(
            f"{where}: {what} ({size} bytes) at +{offset} ends past parameter {param.label}, "
            f"which has {param.size} bytes (--list-params shows each size)"
        )
