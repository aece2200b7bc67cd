"""Global memory of a traced launch: named buffers at synthetic device addresses.

The buffers lie in one byte arena (``data``, a NumPy array the memory ops index directly),
one after the other with an unmapped gap between them so that an overrun is caught. The arena
is reserved, not allocated: it is anonymous memory mapped without reserve, so a page becomes
real only when something is written to it, and a page never written reads as zeros. A
zero-filled 4 GiB buffer, or a tensor map over 4 GiB, costs nothing until the kernel writes
to it.

What becomes real is bounded: the bytes given from files and the pages the kernel writes
(counted in 4 KiB pages by :meth:`GlobalMemory.store_offsets`, which every op that writes
global memory calls) may not pass :data:`MAX_WRITTEN_BYTES`; past it the trace stops with an
error at the instruction.
"""

from __future__ import annotations

import mmap
import platform
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...cuda.sass import Instruction
from .trace_error import TraceError

if TYPE_CHECKING:
    import numpy.typing as npt

GLOBAL_BASE = 0x7F00_0000_0000
GLOBAL_ALIGN = 256
GLOBAL_GAP = 4096  # unmapped bytes between buffers, so overruns are caught
PAGE = 4096
#: pages that may become real: file contents plus what the kernel writes
MAX_WRITTEN_BYTES = 512 << 20
_SMALL = 1 << 20  # arenas below this are plain arrays
# Linux's MAP_NORESERVE where Python (before 3.12) does not name it: pages not counted against
# the overcommit limit until written
_NORESERVE = {"x86_64": 0x4000, "aarch64": 0x4000, "arm64": 0x4000}


@dataclass
class Buffer:
    name: str
    address: int
    size: int
    offset: int  # inside the arena


def _arena(size: int) -> tuple[npt.NDArray[np.uint8], Any]:
    """``size`` zero bytes whose pages are allocated as they are written (and its mapping)."""
    if size < _SMALL:
        return np.zeros(size, dtype=np.uint8), None
    flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20)
    flags |= getattr(mmap, "MAP_NORESERVE", _NORESERVE.get(platform.machine(), 0))
    try:
        mapping = mmap.mmap(-1, size, flags=flags)
    except (OSError, ValueError, TypeError, AttributeError):
        return np.zeros(size, dtype=np.uint8), None  # no anonymous mmap: calloc's zeros
    return np.frombuffer(mapping, dtype=np.uint8), mapping


class GlobalMemory:
    """Global memory: named buffers at synthetic device addresses, one lazily real arena."""

    def __init__(self, max_written: int = MAX_WRITTEN_BYTES) -> None:
        self.buffers: list[Buffer] = []
        self.data: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)
        self._mapping: Any = None
        self._used = 0  # arena bytes laid out so far
        self._written: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)  # per page
        self.written_bytes = 0  # real pages, in bytes
        self.max_written = max_written
        self._starts: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._ends: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)

    def add_buffer(self, content: bytes | int, name: str, size: int | None = None) -> int:
        """A new buffer of ``content`` (bytes, or a size to zero-fill), ``size`` bytes long
        when given (zeros after the content); its device address."""
        given = content if isinstance(content, int) else len(content)
        size = given if size is None else max(size, given)
        offset = -(-(self._used + GLOBAL_GAP) // GLOBAL_ALIGN) * GLOBAL_ALIGN
        self._make_room(offset + max(size, 1))
        if not isinstance(content, int) and given:
            self.data[offset : offset + given] = np.frombuffer(content, dtype=np.uint8)
            self._mark(np.arange(offset // PAGE, (offset + given - 1) // PAGE + 1), None)
        self._used = offset + max(size, 1)
        buf = Buffer(name, GLOBAL_BASE + offset, size, offset)
        self.buffers.append(buf)
        self._starts = np.array([b.address for b in self.buffers], dtype=np.int64)
        self._ends = np.array([b.address + b.size for b in self.buffers], dtype=np.int64)
        return buf.address

    def _make_room(self, need: int) -> None:
        """Grow the arena to at least ``need`` bytes, copying only the pages that are real."""
        if need <= len(self.data):
            return
        size = -(-max(need, 2 * len(self.data)) // PAGE) * PAGE
        data, mapping = _arena(size)
        written = np.zeros(size // PAGE, dtype=bool)
        pages = np.flatnonzero(self._written)
        if len(pages):
            old = self.data[: len(self._written) * PAGE].reshape(-1, PAGE)
            data[: len(old) * PAGE].reshape(-1, PAGE)[pages] = old[pages]
            written[pages] = True
        self.data, self._mapping, self._written = data, mapping, written

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def read(self, name: str) -> bytes:
        """The current content of a buffer."""
        b = self.buffer(name)
        return self.data[b.offset : b.offset + b.size].tobytes()

    def offsets(
        self, addr: npt.NDArray[np.int64], width: int, ins: Instruction
    ) -> npt.NDArray[np.int64]:
        """Arena offsets of device addresses; an address outside every buffer is an error."""
        if len(self._starts) == 0:
            raise TraceError(f"global address 0x{int(addr.flat[0]):x}: no buffers exist", ins)
        k = np.searchsorted(self._starts, addr, side="right") - 1
        bad = (k < 0) | (addr + width > self._ends[np.maximum(k, 0)])
        if bad.any():
            a = int(addr[bad][0])
            raise TraceError(
                f"global access of {width} bytes at 0x{a:x} is outside every buffer "
                f"({self._describe(a)})",
                ins,
            )
        base: npt.NDArray[np.int64] = addr - GLOBAL_BASE
        return base

    def store_offsets(
        self, addr: npt.NDArray[np.int64], width: int, ins: Instruction
    ) -> npt.NDArray[np.int64]:
        """:meth:`offsets` for a write of ``width`` bytes at each address: the pages written
        become real, and more of them than :attr:`max_written` stop the trace."""
        off = self.offsets(addr, width, ins)
        if width <= PAGE:
            pages = np.unique(np.concatenate([off // PAGE, (off + width - 1) // PAGE]))
        else:
            pages = np.unique(
                np.concatenate([np.arange(o // PAGE, (o + width - 1) // PAGE + 1) for o in off])
            )
        self._mark(pages, ins)
        return off

    def _mark(self, pages: npt.NDArray[np.int64], ins: Instruction | None) -> None:
        new = pages[~self._written[pages]]
        if not len(new):
            return
        self._written[new] = True
        self.written_bytes += len(new) * PAGE
        if self.written_bytes > self.max_written:
            raise TraceError(
                f"the launch made more than {self.max_written >> 20} MiB of global memory real "
                "(buffer files and the pages the kernel wrote); shmem keeps at most that much: "
                "trace fewer blocks (a smaller --grid) or give smaller buffers",
                ins,
            )

    def _describe(self, a: int) -> str:
        near = min(self.buffers, key=lambda b: min(abs(a - b.address), abs(a - b.address - b.size)))
        return f"nearest buffer '{near.name}' at 0x{near.address:x}, {near.size} bytes"
