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

Memory the launch did not describe (the device pointers of a real run, given in a parameter
block with ``--params``) behaves like untouched device memory: an access outside the
synthetic window (below :data:`GLOBAL_BASE` or past the buffers) gets a *shadow* region of
the arena, made on first touch in :data:`SEGMENT` steps (adjacent regions are merged, their
written pages copied), so reads see what the kernel wrote there and zeros elsewhere.
:meth:`GlobalMemory.untouched_taint` says which lanes read bytes of a shadow never written:
their values are not the real run's, and the memory ops mark them inexact. Addresses below
:data:`NULL_PAGE` (a null pointer) and above :data:`MAX_ADDRESS` stay errors, and so does an
overrun of a described buffer.
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
MAX_WRITTEN_BYTES = 256 << 20
_SMALL = 1 << 20  # arenas below this are plain arrays
# Linux's MAP_NORESERVE where Python (before 3.12) does not name it: pages not counted against
# the overcommit limit until written
_NORESERVE = {"x86_64": 0x4000, "aarch64": 0x4000, "arm64": 0x4000}


#: shadow regions of undescribed memory grow in steps of this many bytes
SEGMENT = 64 << 10
#: addresses below this are a null pointer, not memory
NULL_PAGE = 1 << 16
#: no device address is this large (49-bit virtual addresses)
MAX_ADDRESS = 1 << 49
#: the most undescribed address space the shadows may cover
MAX_SHADOW_BYTES = 16 << 30
#: a value read from global memory carries this taint bit, and its buffer's
TAINT_GLOBAL = 1
#: buffer taint bits 3..7 (bit 1: inexact, bit 2: differs between blocks, state.py): the
#: k-th buffer has bit ``BUFFER_SHIFT + min(k, BUFFER_GROUPS - 1)``
BUFFER_SHIFT = 3
BUFFER_GROUPS = 5


def buffer_bit(k: int) -> int:
    """The taint bit of the launch's ``k``-th buffer (the last group's past the fourth)."""
    return 1 << (BUFFER_SHIFT + min(k, BUFFER_GROUPS - 1))


@dataclass
class Buffer:
    name: str
    address: int
    size: int
    offset: int  # inside the arena
    shadow: bool = False  # undescribed memory, made on first touch


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
        self._bases: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # arena offsets
        self._arena_starts: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._arena_taint: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)
        # undescribed memory: allowed at all, its regions, which of its bytes were written
        self.untouched = True
        self._window = 0  # the synthetic addresses in use, from GLOBAL_BASE
        self.shadows: list[Buffer] = []
        self._set: npt.NDArray[np.uint8] | None = None  # 1 where a shadow byte was written
        self._set_mapping: Any = None
        self.untouched_reads = 0  # lanes that read never-written undescribed bytes
        self.first_untouched: int | None = None  # the first such address
        self.epoch = 0  # writes so far (an atomic: those that changed a word)

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
        self._window = offset + max(size, 1) + GLOBAL_GAP  # the synthetic addresses in use
        buf = Buffer(name, GLOBAL_BASE + offset, size, offset)
        self.buffers.append(buf)
        self._index()
        return buf.address

    def _index(self) -> None:
        every = sorted([*self.buffers, *self.shadows], key=lambda b: b.address)
        self._starts = np.array([b.address for b in every], dtype=np.int64)
        self._ends = np.array([b.address + b.size for b in every], dtype=np.int64)
        self._bases = np.array([b.offset for b in every], dtype=np.int64)
        # arena offset -> taint of what is read there: global, and the buffer's group bit
        placed = sorted([*self.buffers, *self.shadows], key=lambda b: b.offset)
        self._arena_starts = np.array([b.offset for b in placed], dtype=np.int64)
        self._arena_taint = np.array([self._buffer_taint(b) for b in placed], dtype=np.uint8)

    def _buffer_taint(self, buf: Buffer) -> int:
        if buf.shadow:
            return TAINT_GLOBAL  # undescribed memory: no buffer of the launch
        return TAINT_GLOBAL | buffer_bit(self.buffers.index(buf))

    def read_taint(self, off: npt.NDArray[np.int64], width: int) -> Any:
        """Per lane, the taint of ``width`` bytes read at arena offsets ``off``: global
        data, its buffer's bit (state.py), and inexact where a shadow byte was never
        written (:meth:`untouched_taint`)."""
        off = np.asarray(off, dtype=np.int64)
        if len(self._arena_starts) == 0:
            return np.uint8(TAINT_GLOBAL) | self.untouched_taint(off, width)
        k = np.maximum(np.searchsorted(self._arena_starts, off, side="right") - 1, 0)
        return self._arena_taint[k] | self.untouched_taint(off, width)

    def taint_sources(self, taint: int) -> list[tuple[str, ...]]:
        """The buffers whose data a taint byte says was read: one tuple of names per
        buffer bit set (several names for the last group, which every buffer past the
        fourth shares), in the order the buffers were added."""
        out: list[tuple[str, ...]] = []
        for g in range(BUFFER_GROUPS):
            if taint & buffer_bit(g):
                names = [
                    b.name for k, b in enumerate(self.buffers) if buffer_bit(k) == buffer_bit(g)
                ]
                if names:
                    out.append(tuple(names))
        return out

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
        if self._set is not None:
            marks, self._set_mapping = _arena(size)
            if len(pages):
                old = self._set[: len(self._written) * PAGE].reshape(-1, PAGE)
                marks[: len(old) * PAGE].reshape(-1, PAGE)[pages] = old[pages]
            self._set = marks
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
        """Arena offsets of device addresses; an address outside every buffer is undescribed
        memory (a shadow region is made for it), or an error when it cannot be memory."""
        addr = np.asarray(addr, dtype=np.int64)
        k, bad = self._find(addr, width)
        if bad.any():
            self._shadow(addr[bad], width, ins)
            k, bad = self._find(addr, width)
        off: npt.NDArray[np.int64] = self._bases[k] + (addr - self._starts[k])
        return off

    def _find(
        self, addr: npt.NDArray[np.int64], width: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
        if len(self._starts) == 0:
            return np.zeros(addr.shape, dtype=np.intp), np.ones(addr.shape, dtype=bool)
        k = np.searchsorted(self._starts, addr, side="right") - 1
        bad = (k < 0) | (addr + width > self._ends[np.maximum(k, 0)])
        return np.maximum(k, 0), bad

    def _shadow(self, addr: npt.NDArray[np.int64], width: int, ins: Instruction) -> None:
        """Shadow regions for undescribed addresses (or the error they are)."""
        a = int(addr.min())
        window = addr >= GLOBAL_BASE
        window &= addr < GLOBAL_BASE + self._window
        if window.any() or not self.untouched:
            a = int(addr[window][0]) if window.any() else a
            near = f" ({self._describe(a)})" if self.buffers else ": no buffers exist"
            raise TraceError(
                f"global access of {width} bytes at 0x{a % (1 << 64):x} is outside every "
                f"buffer{near}",
                ins,
            )
        if a < NULL_PAGE or int(addr.max()) + width > MAX_ADDRESS:
            a = a if a < NULL_PAGE else int(addr.max())
            raise TraceError(
                f"global access at 0x{a % (1 << 64):x}: not a device address (a null pointer, "
                "or a pointer parameter that was not given: --arg NAME=@FILE, or --params @FILE)",
                ins,
            )
        lo = addr.ravel() // SEGMENT * SEGMENT
        hi = ((addr.ravel() + width - 1) // SEGMENT + 1) * SEGMENT
        pairs = np.unique(np.stack([lo, hi], axis=1), axis=0)
        for start, end in _merged([(int(a0), int(a1)) for a0, a1 in pairs]):
            self._make_shadow(start, end, ins)
        self._index()

    def _make_shadow(self, start: int, end: int, ins: Instruction | None) -> None:
        """One shadow over [start, end), merged with those it overlaps or touches."""
        old = [s for s in self.shadows if s.address <= end and start <= s.address + s.size]
        start = min([start, *(s.address for s in old)])
        end = max([end, *(s.address + s.size for s in old)])
        covered = sum(s.size for s in self.shadows if s not in old) + (end - start)
        if covered > MAX_SHADOW_BYTES:
            raise TraceError(
                f"the kernel touched more than {MAX_SHADOW_BYTES >> 30} GiB of global memory the "
                "launch did not describe; give its buffers (--arg NAME=@FILE)",
                ins,
            )
        offset = -(-self._used // SEGMENT) * SEGMENT
        self._make_room(offset + (end - start))
        if self._set is None:
            self._set, self._set_mapping = _arena(len(self.data))
        for s in old:  # carry over what was written (real pages only)
            first, count = s.offset // PAGE, s.size // PAGE
            pages = np.flatnonzero(self._written[first : first + count])
            dst = offset + (s.address - start)
            for p in pages.tolist():
                src = s.offset + p * PAGE
                at = dst + p * PAGE
                self.data[at : at + PAGE] = self.data[src : src + PAGE]
                self._set[at : at + PAGE] = self._set[src : src + PAGE]
                self._mark(np.array([at // PAGE]), ins)
        self._used = offset + (end - start)
        self.shadows = [s for s in self.shadows if s not in old]
        self.shadows.append(Buffer(f"0x{start:x}", start, end - start, offset, shadow=True))

    def preload(self, address: int, content: bytes, what: str) -> None:
        """Bytes a host program wrote to undescribed memory before the launch (``--memory``):
        they land in a shadow region at their real ``address``, marked written, so reads see
        them as exact values. Refused (``what`` names the option) inside the synthetic
        window or a buffer of the launch, or where no device address can be."""
        from ...cuda.launch_values import LaunchError

        end = address + len(content)
        if address < NULL_PAGE or end > MAX_ADDRESS:
            raise LaunchError(
                f"{what}: 0x{address:x}..0x{end:x} is not device memory (addresses from "
                f"0x{NULL_PAGE:x} up to 2^49)"
            )
        if self._window and address < GLOBAL_BASE + self._window and end > GLOBAL_BASE:
            raise LaunchError(
                f"{what}: 0x{address:x}..0x{end:x} overlaps the synthetic addresses "
                f"(0x{GLOBAL_BASE:x}..0x{GLOBAL_BASE + self._window:x}) where shmem places "
                "this launch's own buffers (--arg @FILE, zero-filled pointers, tensor maps, "
                "__device__ variables); give the pointers that lead there with --params "
                "instead of --arg, so that shmem makes no buffer for them"
            )
        lo = address // SEGMENT * SEGMENT
        hi = (end + SEGMENT - 1) // SEGMENT * SEGMENT
        self._make_shadow(lo, hi, None)
        self._index()
        shadow = next(s for s in self.shadows if s.address <= address and end <= s.address + s.size)
        at = shadow.offset + address - shadow.address
        self.data[at : at + len(content)] = np.frombuffer(content, dtype=np.uint8)
        assert self._set is not None  # made with the shadow
        self._set[at : at + len(content)] = 1
        self._mark(np.arange(at // PAGE, (at + len(content) - 1) // PAGE + 1), None)

    def untouched_taint(self, off: npt.NDArray[np.int64], width: int) -> Any:
        """Per lane: TAINT_UNKNOWN (2) where the read of ``width`` bytes at arena offsets
        ``off`` touches a shadow byte never written, else 0 (a scalar without shadows)."""
        if self._set is None or not self.shadows:
            return np.uint8(0)
        off = np.asarray(off, dtype=np.int64)
        starts = np.array([s.offset for s in self.shadows], dtype=np.int64)
        order = np.argsort(starts)
        starts = starts[order]
        ends = starts + np.array([self.shadows[i].size for i in order], dtype=np.int64)
        k = np.maximum(np.searchsorted(starts, off, side="right") - 1, 0)
        inside = (off >= starts[k]) & (off < ends[k])
        if not inside.any():
            return np.uint8(0)
        idx = off[..., None] + np.arange(width)
        fresh = inside & (self._set[idx] == 0).any(axis=-1)
        count = int(np.count_nonzero(fresh))
        if count:
            self.untouched_reads += count
            if self.first_untouched is None:
                j = int(np.flatnonzero(fresh.ravel())[0])
                self.first_untouched = self._address_of(int(off.ravel()[j]))
        return np.where(fresh, 2, 0).astype(np.uint8)

    def _address_of(self, off: int) -> int:
        for s in self.shadows:
            if s.offset <= off < s.offset + s.size:
                return s.address + off - s.offset
        return off

    def store_offsets(
        self, addr: npt.NDArray[np.int64], width: int, ins: Instruction, *, counted: bool = True
    ) -> npt.NDArray[np.int64]:
        """:meth:`offsets` for a write of ``width`` bytes at each address: the pages written
        become real, and more of them than :attr:`max_written` stop the trace. The write
        counts in :attr:`epoch` unless ``counted`` is false (an atomic counts its own, where
        it changed a word)."""
        off = self.offsets(addr, width, ins)
        self.epoch += counted
        if self._set is not None:  # undescribed bytes written: they read back as written
            self._set[(off[..., None] + np.arange(width)).ravel()] = 1
        if width <= PAGE:
            pages = np.concatenate([off // PAGE, (off + width - 1) // PAGE])
        else:
            pages = np.concatenate([np.arange(o // PAGE, (o + width - 1) // PAGE + 1) for o in off])
        self._mark(pages, ins)
        return off

    def _mark(self, pages: npt.NDArray[np.int64], ins: Instruction | None) -> None:
        """Pages written (repeats allowed): those new become real, counted."""
        new = pages[~self._written[pages]]
        if not len(new):
            return
        lo, hi = int(new.min()), int(new.max()) + 1
        before = int(np.count_nonzero(self._written[lo:hi]))
        self._written[new] = True
        self.written_bytes += (int(np.count_nonzero(self._written[lo:hi])) - before) * PAGE
        if self.written_bytes > self.max_written:
            raise TraceError(
                f"the launch made more than {self.max_written >> 20} MiB of global memory real "
                "(buffer files and the pages the kernel wrote); shmem keeps at most that much: "
                "trace fewer blocks (a smaller --grid) or give smaller buffers",
                ins,
            )

    def shadow_summary(self) -> tuple[str, ...]:
        """The undescribed regions touched, as ``0x7f43..00 (64 KiB)``."""
        return tuple(f"0x{s.address:x} ({s.size >> 10:,} KiB)" for s in self.shadows)

    def _describe(self, a: int) -> str:
        near = min(self.buffers, key=lambda b: min(abs(a - b.address), abs(a - b.address - b.size)))
        return f"nearest buffer '{near.name}' at 0x{near.address:x}, {near.size} bytes"


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted half-open spans with those that overlap or touch joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
