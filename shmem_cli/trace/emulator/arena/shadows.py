"""Shadow regions: global memory the launch did not describe, made on first touch.

An access outside every buffer (a real pointer of a ``--params`` block, a ``--memory`` range)
gets a region of the arena in :data:`SEGMENT` steps; a region that overlaps or touches others
is merged with them, so that an access across their seam reads contiguous arena bytes. Each
region lives in a :class:`.pages.Slot`: a fresh one's slot is just its span (a region touched
once costs no more address space than before), and a region that grows keeps its slot where
the merged span fits it, the other regions' written pages copied in and their old pages given
back. Where it does not fit, the merged region moves to a new slot with room of its own span
on either side, so a region growing one way (a kernel writing or reading through an output in
order, up or down, or many adjacent ``--memory`` ranges) moves only when its span has about
doubled: each written page is copied a bounded number of times on average, the real pages
are counted once, and the slots laid out stay within a small multiple of the span covered.
What the regions cover together is bounded by :data:`MAX_SHADOW_BYTES`.

``_set`` marks the bytes written, so that :meth:`ShadowArena.untouched_taint` can say which
lanes read undescribed bytes never written: their values are not the real run's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..trace_error import TraceError
from .pages import MAX_WRITTEN_BYTES, Buffer, PageArena, Slot

if TYPE_CHECKING:
    import numpy.typing as npt

    from ....cuda.sass import Instruction

#: shadow regions of undescribed memory grow in steps of this many bytes
SEGMENT = 64 << 10
#: the most undescribed address space the shadows may cover
MAX_SHADOW_BYTES = 16 << 30


class ShadowArena(PageArena):
    """The page arena with the shadow regions of undescribed memory placed in it."""

    def __init__(self, max_written: int = MAX_WRITTEN_BYTES) -> None:
        super().__init__(max_written)
        self.shadows: list[Buffer] = []
        self.untouched_reads = 0  # lanes that read never-written undescribed bytes
        self.first_untouched: int | None = None  # the first such address

    def _cover(self, addr: npt.NDArray[np.int64], width: int, ins: Instruction) -> None:
        """Shadow regions over the segments that accesses of ``width`` bytes touch."""
        lo = addr.ravel() // SEGMENT * SEGMENT
        hi = ((addr.ravel() + width - 1) // SEGMENT + 1) * SEGMENT
        pairs = np.unique(np.stack([lo, hi], axis=1), axis=0)
        for start, end in _merged([(int(a0), int(a1)) for a0, a1 in pairs]):
            self._make_shadow(start, end, ins)

    def _make_shadow(self, start: int, end: int, ins: Instruction | None) -> None:
        """One shadow over [start, end) (segment-aligned), merged with those it overlaps or
        touches."""
        old = [s for s in self.shadows if s.address <= end and start <= s.address + s.size]
        start = min([start, *(s.address for s in old)])
        end = max([end, *(s.address + s.size for s in old)])
        covered = sum(s.size for s in self.shadows if s not in old) + (end - start)
        if covered > MAX_SHADOW_BYTES:
            raise TraceError(
                f"the kernel touched more than {MAX_SHADOW_BYTES >> 30} GiB of global memory the "
                "launch did not describe; give its buffers (--arg NAME=@FILE)",
                ins,
                gives_data=True,
            )
        fits = [s for s in old if s.slot and _inside(s.slot, start, end)]
        host = max(fits, key=lambda s: s.size) if fits else None
        room = min(end - start, MAX_SHADOW_BYTES - covered) if old else 0
        slot = host.slot if host and host.slot else self._new_slot(start, end, room)
        self._new_marks()
        for s in old:  # carry over what was written (real pages only), give the old back
            if s is not host:
                self._move(s.offset, slot.offset + s.address - slot.address, s.size)
        offset = slot.offset + start - slot.address
        self.shadows = [s for s in self.shadows if s not in old]
        self.shadows.append(Buffer(f"0x{start:x}", start, end - start, offset, True, slot))

    def _new_slot(self, start: int, end: int, room: int) -> Slot:
        """Arena room for [start, end) and ``room`` bytes on either side, at the end of the
        arena (a fresh region gets none; one that grew its span again, but no more than the
        shadows may still grow)."""
        offset = -(-self._used // SEGMENT) * SEGMENT
        capacity = end - start + 2 * room
        self._make_room(offset + capacity)
        self._used = offset + capacity
        return Slot(start - room, offset, capacity)

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
        fresh = inside & ~self._is_set(idx).all(axis=-1)
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

    def shadow_summary(self) -> tuple[str, ...]:
        """The undescribed regions touched, as ``0x7f43..00 (64 KiB)``."""
        return tuple(f"0x{s.address:x} ({s.size >> 10:,} KiB)" for s in self.shadows)


def _inside(slot: Slot, start: int, end: int) -> bool:
    return slot.address <= start and end <= slot.address + slot.capacity


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted half-open spans with those that overlap or touch joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
