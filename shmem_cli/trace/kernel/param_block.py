"""What a host program gave a launch, read back from its dumps: the kernel's whole parameter
block (``--params @FILE``) and the device memory it wrote before the launch (``--memory``).

CUTLASS, CuTe and FlashAttention kernels take one ``Params`` struct by value, holding the
device pointers of the real run, sizes, strides and (Hopper) the TMA descriptors. The host
program that launches the kernel can write those bytes to a file (``fwrite(&params,
sizeof(params), 1, f)`` just before the launch; docs/recipes.md); ``--params @FILE`` gives
them back to the traced launch unchanged, so no field layout has to be known. The pointers
point into global memory the launch did not describe, which the emulator treats as untouched
device memory (:mod:`..emulator.global_memory`).

:func:`tensor_maps_in` finds the ``CUtensorMap``\\ s inside the block: 128 bytes at a
multiple of 64 that decode as a tiled map and hold its own box size where the driver writes
it. They are listed in the report; the emulator reads them from the parameter space as the
TMA instructions do.

Grouped and pointer-array GEMMs read their problem sizes and operand pointers from device
memory the host filled (``cudaMemcpy``) before the launch: the parameter block holds only a
pointer to it. :func:`read_memory` reads ``--memory ADDR=@FILE`` (the bytes, as the host wrote
them) and ``ADDR=TYPE:v,v,...`` (values typed in), at the real device address ``ADDR``; the
emulator puts them into its undescribed memory as written bytes
(:meth:`..emulator.global_memory.GlobalMemory.preload`), so the kernel reads exact values.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Callable, Sequence
from typing import Any

from ...cuda.launch import tensormap, values
from ...cuda.launch.files import MAX_FILE_BYTES
from ...cuda.launch.values import MAX_MEMORY_RANGES, LaunchError
from ...plumbing.errors import shorten
from ...plumbing.frozen import frozen
from ..emulator.global_memory import MAX_ADDRESS, NULL_PAGE
from .buffers import FileBytes, buffer_source, read_buffer

#: bytes a ``--params`` file may hold beyond the kernel's parameter block
PARAMS_SLACK = 1 << 16
#: the largest ``--params`` file of any kernel: CUDA's largest parameter block (32,764
#: bytes, whose first parameter lies at most 128 bytes in) and the slack
MAX_PARAMS_FILE = 32_764 + 128 + PARAMS_SLACK


def read_param_block(
    text: str, size: int, kernel: str, first: int = 0, ends: Sequence[int] = ()
) -> tuple[bytes, int]:
    """The ``size`` bytes of ``--params @FILE`` (raw bytes, or a ``.npy`` array's data) and
    where the file's bytes end in the block.

    ``first`` is where the kernel's first parameter starts in the block: a struct holding
    TMA descriptors is placed at a 64- or 128-byte aligned address, so the block may begin
    with a gap the host never wrote. A file of ``size - first`` bytes (``sizeof`` of the
    struct, what a host program dumps) is placed at ``first``. A file that ends where one of
    ``ends`` (each parameter's end in the block) does holds the leading parameters only (a
    ``Params`` struct dumped for ``kernel(params, nsplits)``): the rest of the block is zeros
    here, and the caller has ``--arg`` give the parameters past it."""
    if not text.startswith("@"):
        raise LaunchError(
            f"--params expects @FILE (the bytes of the parameter block), got {shorten(text)!r}"
        )
    try:  # a regular file far past the block (a .npy's header aside) is said by its size
        too_big = os.path.isfile(text[1:]) and os.path.getsize(text[1:]) > size + PARAMS_SLACK
    except (OSError, ValueError):
        too_big = False
    data = b"" if too_big else read_buffer(text[1:], "--params", limit=max(size, 1) + PARAMS_SLACK)
    if len(data) == size:
        return data, size
    if first and len(data) == size - first:
        return bytes(first) + data, size
    for start in sorted({first, 0}):
        if start + len(data) in ends and start + len(data) < size:
            block = bytes(start) + data
            return block + bytes(size - len(block)), len(block)
    also = f" ({size - first:,} from its first parameter on)" if first else ""
    held = os.path.getsize(text[1:]) if too_big else len(data)
    raise LaunchError(
        f"--params {shorten(text[1:])}: {held:,} bytes; {kernel}'s parameter block is "
        f"{size:,} bytes{also} (write sizeof() of the struct it takes, or each argument in "
        "turn at its offset: --list-params; a file that ends where a parameter ends gives the "
        "leading ones, --arg the rest)"
    )


def tensor_maps_in(block: bytes, base: int = 0) -> list[tuple[int, tensormap.TensorMap]]:
    """(offset, map) of every tensor map the driver made inside a parameter block whose
    first byte is at ``base`` in the constant bank (maps are 64-byte aligned there)."""
    out = []
    for at in range((-base) % 64, len(block) - tensormap.BYTES + 1, 64):
        raw = block[at : at + tensormap.BYTES]
        try:
            tm = tensormap.decode(raw)
            if tm is None or tm.address == 0 or tm.address % 16:
                continue
            tm.check()
        except (tensormap.TensorMapError, ValueError, KeyError):
            continue
        (box_bytes,) = struct.unpack_from("<I", raw, 64)
        if box_bytes == tm.box_bytes:
            out.append((at, tm))
    return out


class Handover:
    """Bytes for a launch (an ``--memory`` range, an ``--arg @FILE`` buffer), held only
    until the emulator's memory takes them (:meth:`into`): from then on nothing of the
    launch plan refers to them, so a 128 MiB file is held once (the arena's copy), not
    twice, for the rest of the trace; a large file (:class:`.buffers.FileBytes`) is not even
    read before, but straight into the arena (docs/robustness.md: the 1 GiB peak)."""

    __slots__ = ("_data", "size")

    def __init__(self, data: bytes | FileBytes) -> None:
        self._data: bytes | FileBytes | None = data
        self.size = data.size if isinstance(data, FileBytes) else len(data)

    def _held(self) -> bytes | FileBytes:
        assert self._data is not None, "the bytes were handed over to the emulator's memory"
        return self._data

    @property
    def data(self) -> bytes:
        """The bytes, while not yet handed over (a large file's read now)."""
        held = self._held()
        return held.read() if isinstance(held, FileBytes) else held

    @property
    def taken(self) -> bool:
        return self._data is None

    def take(self) -> bytes:
        """The bytes, handed over once: this holder keeps no reference to them."""
        data = self.data
        self._data = None
        return data

    def into(self, out: Any) -> None:
        """Write the bytes into ``out`` (``size`` bytes of the emulator's memory), handed
        over once: a large file's are read straight there, never held apart."""
        held, self._data = self._held(), None
        if isinstance(held, FileBytes):
            held.into(out)
        else:
            memoryview(out).cast("B")[:] = held


@frozen
class MemoryRange:
    """Bytes of device memory the host wrote before the launch, at their real address
    (``held`` until the emulator's memory takes them, :meth:`Handover.into`; ``size``
    stays)."""

    address: int
    held: Handover
    source: str  # the file, or the values as typed

    @property
    def size(self) -> int:
        return self.held.size

    @property
    def data(self) -> bytes:
        return self.held.data

    @property
    def end(self) -> int:
        return self.address + self.size


@frozen
class MemoryBytes:
    """A range given as bytes held in memory (``shmem_cli.trace(memory={address: ...})``)
    instead of an ``--memory`` text: no file between. ``size`` is known before ``load``
    copies the bytes, so :func:`read_memory` checks the range and the bound first."""

    address: int  # any int: read_memory says whether it is device memory
    size: int
    load: Callable[[], bytes]  # the ``size`` bytes
    source: str  # what the report says they are, e.g. "bytes", "NumPy int32 array"


def read_memory(texts: Sequence[str | MemoryBytes], used: int = 0) -> tuple[MemoryRange, ...]:
    """The ``--memory ADDR=@FILE`` / ``ADDR=TYPE:v,...`` ranges (or :class:`MemoryBytes`,
    named ``memory[ADDR]`` in errors), sorted by address; their bytes and the ``used`` bytes
    of the launch's other files at most :data:`MAX_FILE_BYTES`, no two overlapping. Where a
    range may lie (not in the launch's own buffers) is the emulator's check
    (:meth:`..emulator.global_memory.GlobalMemory.preload`)."""
    if len(texts) > MAX_MEMORY_RANGES:
        raise LaunchError(
            f"{len(texts):,} device memory ranges are given (--memory); the most is "
            f"{MAX_MEMORY_RANGES}: {values.JOIN_RANGES}"
        )
    out: list[tuple[MemoryRange, str]] = []  # each range with the option or key that gave it
    for text in texts:
        if isinstance(text, MemoryBytes):
            address, where, source = text.address, f"memory[{text.address:#x}]", text.source
            _check_range(address, text.size, where, source, used + text.size)
            held = Handover(text.load())
        else:
            address, where, source, data = _read_text(text)
            held = Handover(data)
            _check_range(address, held.size, where, source, used + held.size)
        used += held.size
        out.append((MemoryRange(address, held, source), where))
    out.sort(key=lambda r: r[0].address)
    for (a, a_where), (b, b_where) in zip(out, out[1:], strict=False):
        if b.address < a.end:
            raise LaunchError(
                f"{a_where} ({a.size:,} B, to 0x{a.end:x}) and {b_where} overlap; "
                "give each byte once"
            )
    return tuple(r for r, _ in out)


def _read_text(text: str) -> tuple[int, str, str, bytes | FileBytes]:
    """One ``--memory`` text: its address, its name in errors, its source and its bytes."""
    from .constants import typed_values

    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key or not value:
        raise LaunchError(
            "--memory expects ADDR=@FILE or ADDR=TYPE:v,v,... (ADDR: the device address "
            f"the host program's cudaMalloc returned, 0x... or decimal), got {shorten(text)!r}"
        )
    address = _address(key)
    where = f"--memory 0x{address:x}"
    if value.startswith("@"):
        return address, where, shorten(value[1:], 200), buffer_source(value[1:], where)
    return address, where, shorten(value, 60), typed_values(value, where)


def _check_range(address: int, size: int, where: str, source: str, used: int) -> None:
    """A range of ``size`` bytes at ``address``: some bytes, in device memory, and the launch's
    data (``used`` bytes with these) within :data:`MAX_FILE_BYTES`."""
    if size <= 0:
        raise LaunchError(f"{where}: {source} holds no bytes")
    if address < NULL_PAGE or address + size > MAX_ADDRESS:
        raise LaunchError(
            f"{where}: {address:#x}..{address + size:#x} is not device memory (a "
            f"device address is at least 0x{NULL_PAGE:x}, and the range ends by 2^49)"
        )
    if used > MAX_FILE_BYTES:
        raise LaunchError(
            f"{where}: the --memory and --arg @FILE data of the launch is {used:,} bytes in "
            f"all; the most is {MAX_FILE_BYTES >> 20} MiB (give the part the kernel reads)"
        )


def _address(text: str) -> int:
    """A device address: ``0x7f1234000000`` (``_`` between digits allowed) or decimal (a
    leading 0 too: ``int(text, 0)`` refused ``00007f...`` printed with a width), in ASCII
    digits, as any launch integer (:func:`...cuda.launch.values.integer`)."""
    joined = text.replace("_", "") if re.fullmatch(r"[0-9A-Za-z]+(_[0-9A-Za-z]+)*", text) else ""
    found = values.integer(joined) if joined[:1] not in ("+", "-") else None
    address = found if found is not None else -1
    if address < 0:
        raise LaunchError(
            f"--memory {shorten(text)}=...: ADDR must be a device address, 0x... or decimal "
            "(as the host program printed cudaMalloc's pointer with %p)"
        )
    return address
