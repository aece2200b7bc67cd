"""Global memory's byte arena: reserved, not allocated, its pages counted as they are written.

The arena (``data``) is anonymous memory mapped without reserve, so a page becomes real only
when something is written to it and a page never written reads as zeros. Which 4 KiB pages
were written is kept (``_written``), and their bytes (:attr:`PageArena.written_bytes`) may
not pass :attr:`PageArena.max_written`. Growing the arena copies only the real pages, and
moving a range (:meth:`PageArena._move`) copies its real pages and gives the old ones back
(``MADV_DONTNEED``, or zeros where there is no such call), so what is counted is real memory,
each page once. ``_set`` (made with the first shadow region, :mod:`.shadows`) marks the bytes
of undescribed memory that were written; it grows and moves with the arena.
"""

from __future__ import annotations

import mmap
import platform
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..trace_error import TraceError

if TYPE_CHECKING:
    import numpy.typing as npt

    from ....cuda.sass import Instruction

PAGE = 4096
#: pages that may become real: file contents plus what the kernel writes
MAX_WRITTEN_BYTES = 256 << 20
_SMALL = 1 << 20  # arenas below this are plain arrays
# Linux's MAP_NORESERVE where Python (before 3.12) does not name it: pages not counted against
# the overcommit limit until written
_NORESERVE = {"x86_64": 0x4000, "aarch64": 0x4000, "arm64": 0x4000}


@dataclass
class Slot:
    """Arena room for a shadow region: ``capacity`` bytes from arena ``offset`` stand for the
    addresses from ``address`` (the region's valid part lies inside, room on both sides)."""

    address: int
    offset: int
    capacity: int


@dataclass
class Buffer:
    name: str
    address: int
    size: int
    offset: int  # inside the arena
    shadow: bool = False  # undescribed memory, made on first touch
    slot: Slot | None = None  # a shadow's room in the arena


def anonymous(size: int) -> tuple[npt.NDArray[np.uint8], Any]:
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


def _runs(pages: npt.NDArray[np.intp]) -> list[tuple[int, int]]:
    """Sorted page numbers as half-open runs of consecutive pages."""
    if not len(pages):
        return []
    cut = np.flatnonzero(np.diff(pages) != 1) + 1
    firsts, lasts = pages[np.r_[0, cut]], pages[np.r_[cut - 1, len(pages) - 1]]
    return [(int(a), int(b) + 1) for a, b in zip(firsts, lasts, strict=True)]


def _zero(data: npt.NDArray[np.uint8], mapping: Any, lo: int, hi: int) -> None:
    """Bytes [lo, hi) of an arena read as zeros again, their pages given back if it can."""
    if mapping is not None and lo % mmap.PAGESIZE == 0 and hi % mmap.PAGESIZE == 0:
        try:
            mapping.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        except (AttributeError, OSError, ValueError):
            pass
        else:
            return
    data[lo:hi] = 0  # pages already real: zeros cost nothing more


class PageArena:
    """The arena's bytes, which of its pages are real, and ``_used``: the bytes laid out."""

    def __init__(self, max_written: int = MAX_WRITTEN_BYTES) -> None:
        self.data: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)
        self._mapping: Any = None
        self._used = 0  # arena bytes laid out so far
        self._written: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)  # per page
        self.written_bytes = 0  # real pages, in bytes
        self.max_written = max_written
        self._set: npt.NDArray[np.uint8] | None = None  # 1 where a shadow byte was written
        self._set_mapping: Any = None

    @property
    def reserved_bytes(self) -> int:
        """The arena's bytes laid out for buffers and shadow slots (address space, not RSS)."""
        return self._used

    def _make_room(self, need: int) -> None:
        """Grow the arena to at least ``need`` bytes, copying only the pages that are real."""
        if need <= len(self.data):
            return
        size = -(-max(need, 2 * len(self.data)) // PAGE) * PAGE
        data, mapping = anonymous(size)
        written = np.zeros(size // PAGE, dtype=bool)
        pages = np.flatnonzero(self._written)
        if len(pages):
            old = self.data[: len(self._written) * PAGE].reshape(-1, PAGE)
            data[: len(old) * PAGE].reshape(-1, PAGE)[pages] = old[pages]
            written[pages] = True
        if self._set is not None:
            marks, self._set_mapping = anonymous(size)
            if len(pages):
                old = self._set[: len(self._written) * PAGE].reshape(-1, PAGE)
                marks[: len(old) * PAGE].reshape(-1, PAGE)[pages] = old[pages]
            self._set = marks
        self.data, self._mapping, self._written = data, mapping, written

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

    def _move(self, src: int, dst: int, size: int) -> None:
        """The real pages of arena bytes [src, src + size) copied to ``dst`` (bytes and
        ``_set`` marks; page-aligned, the target never written) and given back at ``src``:
        the count of real pages stays as it was."""
        first, count = src // PAGE, size // PAGE
        shift = (dst - src) // PAGE
        for a, b in _runs(np.flatnonzero(self._written[first : first + count]) + first):
            lo, hi = a * PAGE, b * PAGE
            self.data[lo + dst - src : hi + dst - src] = self.data[lo:hi]
            if self._set is not None:
                self._set[lo + dst - src : hi + dst - src] = self._set[lo:hi]
            fresh = (b - a) - int(np.count_nonzero(self._written[a + shift : b + shift]))
            self._written[a + shift : b + shift] = True
            self._release(a, b)
            self.written_bytes += fresh * PAGE

    def _release(self, a: int, b: int) -> None:
        """Pages [a, b), all real, given back: they read as zeros again and are not counted."""
        _zero(self.data, self._mapping, a * PAGE, b * PAGE)
        if self._set is not None:
            _zero(self._set, self._set_mapping, a * PAGE, b * PAGE)
        self._written[a:b] = False
        self.written_bytes -= (b - a) * PAGE
