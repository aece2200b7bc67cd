"""Global memory's byte arena: reserved, not allocated, its pages counted as they are written.

The arena (``data``) is anonymous memory mapped without reserve, so a page becomes real only
when something is written to it and a page never written reads as zeros. Which 4 KiB pages
were written is kept (``_written``), and their bytes (:attr:`PageArena.written_bytes`) may
not pass :attr:`PageArena.max_written`. Growing the arena copies only the real pages, and
moving a range (:meth:`PageArena._move`) copies its real pages and gives the old ones back
(``MADV_DONTNEED``, or zeros where there is no such call), so what is counted is real memory,
each page once. ``_set`` (made with the first shadow region, :mod:`.shadows`) marks the bytes
of undescribed memory that were written, one bit a byte (an eighth of the real pages, not as
many again); it grows and moves with the arena. Growing and moving go 16 MiB at a time, each
piece given back as soon as it is copied, so that the arena's real pages are held about once,
never twice.
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
_COPY_PAGES = 4096  # a growing arena's real pages are copied 16 MiB of the arena at a time
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
    #: a buffer shmem zero-filled for a pointer the launch did not give: the --arg key that gives it
    made: str | None = None


def anonymous(size: int) -> tuple[npt.NDArray[np.uint8], Any]:
    """``size`` zero bytes whose pages are allocated as they are written (and its mapping)."""
    if size < _SMALL:
        return np.zeros(size, dtype=np.uint8), None
    flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20)
    flags |= getattr(mmap, "MAP_NORESERVE", _NORESERVE.get(platform.machine(), 0))
    try:
        mapping = mmap.mmap(-1, size, flags=flags)
    except OSError as exc:  # ENOMEM: more address space than a limit allows (ulimit -v)
        raise _no_room(size, exc.strerror or str(exc)) from None
    except (ValueError, TypeError, AttributeError):  # no anonymous mmap: calloc's zeros
        try:
            return np.zeros(size, dtype=np.uint8), None
        except MemoryError:
            raise _no_room(size, "out of memory") from None
    return np.frombuffer(mapping, dtype=np.uint8), mapping


def _no_room(size: int, why: str) -> TraceError:
    return TraceError(
        f"cannot reserve {size / (1 << 30):.1f} GiB of address space for the launch's global "
        f"memory ({why}): only the pages written become real, but the address space must "
        "exist; shmem runs under a lower memory limit (ulimit -v): raise it, or give smaller "
        "buffers (--buffer-size)",
        gives_data=True,
    )


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


def _copy_pages(
    old: npt.NDArray[np.uint8], mapping: Any, new: npt.NDArray[np.uint8], pages: Any, unit: int
) -> None:
    """The real ``pages`` (sorted, within :data:`_COPY_PAGES` of each other; ``unit`` bytes
    each) of ``old`` copied into ``new`` and given back in ``old``."""
    lo, hi = int(pages[0]), int(pages[-1]) + 1
    src = old[lo * unit : hi * unit].reshape(-1, unit)
    new[lo * unit : hi * unit].reshape(-1, unit)[pages - lo] = src[pages - lo]
    _zero(old, mapping, lo * unit, hi * unit)


class PageArena:
    """The arena's bytes, which of its pages are real, and ``_used``: the bytes laid out."""

    def __init__(self, max_written: int = MAX_WRITTEN_BYTES) -> None:
        self.data: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)
        self._mapping: Any = None
        self._used = 0  # arena bytes laid out so far
        self._written: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)  # per page
        self.written_bytes = 0  # real pages, in bytes
        self.max_written = max_written
        #: while set (``[lo, hi)``, a grid's probe): widened to every page made real since
        self.span: list[int] | None = None
        # bit k of byte i: arena byte 8i + k is a shadow byte written
        self._set: npt.NDArray[np.uint8] | None = None
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
        written[pages] = True
        marks, marks_mapping = anonymous(size // 8) if self._set is not None else (None, None)
        for chunk in np.split(pages, np.flatnonzero(np.diff(pages // _COPY_PAGES)) + 1):
            if len(chunk):  # copied a chunk at a time, the old pages given back as they go
                _copy_pages(self.data, self._mapping, data, chunk, PAGE)
                if marks is not None and self._set is not None:
                    _copy_pages(self._set, self._set_mapping, marks, chunk, PAGE // 8)
        if marks is not None:
            self._set, self._set_mapping = marks, marks_mapping
        self.data, self._mapping, self._written = data, mapping, written

    def _mark(self, pages: npt.NDArray[np.int64], ins: Instruction | None) -> None:
        """Pages written (repeats allowed): those new become real, counted."""
        new = pages[~self._written[pages]]
        if not len(new):
            return
        lo, hi = int(new.min()), int(new.max()) + 1
        if self.span is not None:
            self.span[:] = min(self.span[0], lo), max(self.span[1], hi)
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
            for c in range(a, b, _COPY_PAGES):  # a chunk at a time: given back as it goes
                self._move_run(c, min(b, c + _COPY_PAGES), shift)

    def _move_run(self, a: int, b: int, shift: int) -> None:
        """Real pages [a, b) moved ``shift`` pages on (to pages never written)."""
        lo, hi, by = a * PAGE, b * PAGE, shift * PAGE
        self.data[lo + by : hi + by] = self.data[lo:hi]
        if self._set is not None:
            self._set[(lo + by) // 8 : (hi + by) // 8] = self._set[lo // 8 : hi // 8]
        fresh = (b - a) - int(np.count_nonzero(self._written[a + shift : b + shift]))
        self._written[a + shift : b + shift] = True
        self._release(a, b)
        self.written_bytes += fresh * PAGE

    def _release(self, a: int, b: int) -> None:
        """Pages [a, b), all real, given back: they read as zeros again and are not counted."""
        _zero(self.data, self._mapping, a * PAGE, b * PAGE)
        if self._set is not None:
            _zero(self._set, self._set_mapping, a * PAGE // 8, b * PAGE // 8)
        self._written[a:b] = False
        self.written_bytes -= (b - a) * PAGE

    def _new_marks(self) -> None:
        """``_set``, all clear, for the arena as it is (with the first shadow region)."""
        if self._set is None:
            self._set, self._set_mapping = anonymous(len(self.data) // 8)

    def _mark_set(self, off: npt.NDArray[np.int64]) -> None:
        """Arena bytes at ``off`` (repeats allowed) marked written."""
        assert self._set is not None
        np.bitwise_or.at(self._set, off >> 3, (1 << (off & 7)).astype(np.uint8))

    def _mark_set_span(self, lo: int, hi: int) -> None:
        """Arena bytes [lo, hi) marked written."""
        assert self._set is not None
        whole_lo, whole_hi = -(-lo // 8), hi // 8
        if whole_lo < whole_hi:
            self._set[whole_lo:whole_hi] = 0xFF
        ends = np.arange(lo, min(hi, whole_lo * 8), dtype=np.int64)
        tail = np.arange(max(whole_hi, whole_lo) * 8, hi, dtype=np.int64)
        self._mark_set(np.concatenate([ends, tail]))

    def _is_set(self, off: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Per arena byte at ``off``: whether it was marked written."""
        assert self._set is not None
        bits: npt.NDArray[np.bool_] = ((self._set[off >> 3] >> (off & 7)) & 1).astype(bool)
        return bits
