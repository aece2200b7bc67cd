"""Global memory of a traced launch: named buffers at synthetic device addresses.

The buffers lie in one byte arena (``data``, a NumPy array the memory ops index directly;
:mod:`.arena.pages`), one after the other. Their device addresses are spread wider than their
arena offsets: :data:`ADDRESS_GAP` (64 GiB) of unmapped addresses lies before each buffer, so
that an overrun or underrun (a wrong 32-bit index, a stride past the end) is caught and named,
never read from or written into the next buffer. The arena is reserved, not allocated: a page
becomes real only when something is written to it, and a page never written reads as zeros.
A zero-filled 4 GiB buffer, or a tensor map over 4 GiB, costs nothing until the kernel
writes to it.

What becomes real is bounded: the bytes given from files and the pages the kernel writes
(counted in 4 KiB pages by :meth:`GlobalMemory.store_offsets`, which every op that writes
global memory calls) may not pass :data:`MAX_WRITTEN_BYTES`; past it the trace stops with an
error at the instruction.

Memory the launch did not describe (the device pointers of a real run, given in a parameter
block with ``--params``) behaves like untouched device memory: an access outside the
synthetic window (below :data:`GLOBAL_BASE` or past the buffers) gets a *shadow* region of
the arena, made on first touch in :data:`SEGMENT` steps and merged with the regions it
touches (:mod:`.arena.shadows`: in slots with room to grow, so that memory touched in order
costs linear time), so reads see what the kernel wrote there and zeros elsewhere.
:meth:`GlobalMemory.untouched_taint` says which lanes read bytes of a shadow never written:
their values are not the real run's, and the memory ops mark them inexact. Addresses below
:data:`NULL_PAGE` (a null pointer) and above :data:`MAX_ADDRESS` stay errors, and so does an
overrun of a described buffer.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ...cuda.sass import Instruction
from .arena.pages import MAX_WRITTEN_BYTES as MAX_WRITTEN_BYTES
from .arena.pages import PAGE as PAGE
from .arena.pages import Buffer as Buffer
from .arena.shadows import MAX_SHADOW_BYTES as MAX_SHADOW_BYTES
from .arena.shadows import SEGMENT as SEGMENT
from .arena.shadows import ShadowArena
from .trace_error import TraceError

if TYPE_CHECKING:
    import numpy.typing as npt

#: where the launch's own buffers lie: 2^47, above every address a host process maps on
#: x86-64 (user space ends at 0x7fff_ffff_ffff), so that no device pointer of a real run
#: (``--params``, ``--memory``; cudaMalloc hands out 0x7fxx_xxxx_xxxx there, lower as a
#: process allocates more) falls among them; an aarch64 host's top-down allocations would
#: have to take 128 TiB to come down to it
GLOBAL_BASE = 0x8000_0000_0000
GLOBAL_ALIGN = 256
GLOBAL_GAP = 4096  # bytes of the arena between buffers (no address reaches them)
#: unmapped device addresses before each buffer: a 32-bit index of 16-byte elements reaches
#: 64 GiB from its base, so an access off a buffer by any such index lands in no other buffer
ADDRESS_GAP = 1 << 36
#: where the buffers' addresses stop being spread (2^46 bytes from :data:`GLOBAL_BASE`: more
#: than 1,000 buffers): past it a buffer follows the last one by :data:`GLOBAL_GAP`, so that
#: the synthetic addresses stay below the generic window of shared memory (2^48, state.py)
SPREAD_WINDOW = 1 << 46
#: accesses kept while a spin is proven (:attr:`GlobalMemory.spin_reads`; past it: many, unnamed)
READ_LOG = 256
#: addresses below this are a null pointer, not memory
NULL_PAGE = 1 << 16
#: no device address is this large (49-bit virtual addresses)
MAX_ADDRESS = 1 << 49
#: a value read from global memory carries this taint bit, and its buffer's
TAINT_GLOBAL = 1
#: buffer taint bits 3..7 (bit 1: inexact, bit 2: differs between blocks, state.py): the
#: k-th buffer the kernel reads from has bit ``BUFFER_SHIFT + min(k, BUFFER_GROUPS - 1)``
BUFFER_SHIFT = 3
BUFFER_GROUPS = 5


#: a null address's likely causes where no global data led to it
_NOT_GIVEN = (
    "a null pointer, or a pointer parameter that was not given: --arg NAME=@FILE, or --params @FILE"
)


def buffer_bit(k: int) -> int:
    """The taint bit of the ``k``-th buffer read from (the last group's past the fourth)."""
    return 1 << (BUFFER_SHIFT + min(k, BUFFER_GROUPS - 1))


class Filler(Protocol):
    """Bytes that write themselves where they go (a launch's large file: read straight into
    the arena, never held apart: :class:`..kernel.param_block.Handover`)."""

    @property
    def size(self) -> int: ...

    def into(self, out: npt.NDArray[np.uint8]) -> None: ...


def _size(content: bytes | Filler) -> int:
    return len(content) if isinstance(content, bytes) else content.size


def _put(out: npt.NDArray[np.uint8], content: bytes | Filler) -> None:
    if isinstance(content, bytes):
        out[:] = np.frombuffer(content, dtype=np.uint8)
    else:
        content.into(out)


class GlobalMemory(ShadowArena):
    """Global memory: named buffers at synthetic device addresses, one lazily real arena."""

    def __init__(self, max_written: int = MAX_WRITTEN_BYTES) -> None:
        super().__init__(max_written)
        self.buffers: list[Buffer] = []
        self._starts: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._ends: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._bases: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # arena offsets
        self._arena_starts: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        # the starts, ends and arena offsets as lists (a warp's lanes looked up at once: offsets)
        self._lists: tuple[list[int], list[int], list[int]] = ([], [], [])
        self._every: list[Buffer] = []
        self._arena_taint: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)
        self._taint_after: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)
        # each buffer's taint bit, given on the kernel's first read from it (0: never read), so
        # that the buffers past the fourth that share the last bit are only ones read from;
        # by the count of arena starts at or below an offset: the buffer there, if it has none
        self._bit: list[int] = []
        self._unread_after: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._unread = False  # some buffer has no bit yet
        self.untouched = True  # undescribed memory allowed at all
        self._window = 0  # the end of the last buffer's addresses, from GLOBAL_BASE
        self.epoch = 0  # writes so far (an atomic: those that changed a word)
        # while a spin is being proven (sync/parking.py): the accesses made, at most READ_LOG
        self.spin_reads: list[tuple[npt.NDArray[np.int64], int, Instruction]] | None = None

    def add_buffer(
        self,
        content: bytes | int | Filler,
        name: str,
        size: int | None = None,
        *,
        made: str | None = None,
    ) -> int:
        """A new buffer of ``content`` (bytes, a size to zero-fill, or a :class:`Filler`),
        ``size`` bytes long when given (zeros after the content); its device address.
        ``made``: shmem made it up for a pointer not given, and this ``--arg`` key gives it
        (an overrun's error says how to give the launch's size)."""
        given = content if isinstance(content, int) else _size(content)
        size = given if size is None else max(size, given)
        offset = -(-(self._used + GLOBAL_GAP) // GLOBAL_ALIGN) * GLOBAL_ALIGN
        gap = ADDRESS_GAP if self._window + ADDRESS_GAP + size <= SPREAD_WINDOW else GLOBAL_GAP
        at = -(-(self._window + gap) // GLOBAL_ALIGN) * GLOBAL_ALIGN  # from GLOBAL_BASE
        self._make_room(offset + max(size, 1))
        if not isinstance(content, int) and given:
            _put(self.data[offset : offset + given], content)
            self._mark(np.arange(offset // PAGE, (offset + given - 1) // PAGE + 1), None)
        self._used = offset + max(size, 1)
        self._window = at + max(size, 1)
        buf = Buffer(name, GLOBAL_BASE + at, size, offset, made=made)
        self.buffers.append(buf)
        self._bit.append(0)
        self._index()
        return buf.address

    @property
    def window_end(self) -> int:
        """The end of the synthetic addresses: the last buffer's end and the unmapped
        :data:`ADDRESS_GAP` after it (an access there is an overrun, never memory)."""
        return GLOBAL_BASE + self._window + ADDRESS_GAP if self._window else GLOBAL_BASE

    def _index(self) -> None:
        every = sorted([*self.buffers, *self.shadows], key=lambda b: b.address)
        self._every = every  # the buffers and shadows by address (:meth:`holder`)
        self._starts = np.array([b.address for b in every], dtype=np.int64)
        self._ends = np.array([b.address + b.size for b in every], dtype=np.int64)
        self._bases = np.array([b.offset for b in every], dtype=np.int64)
        # arena offset -> taint of what is read there: global, and the buffer's group bit
        taints = [(b, k, TAINT_GLOBAL | self._bit[k]) for k, b in enumerate(self.buffers)]
        taints += [(s, -1, TAINT_GLOBAL) for s in self.shadows]  # undescribed: no buffer's bit
        taints.sort(key=lambda bt: bt[0].offset)
        self._arena_starts = np.array([b.offset for b, _, _ in taints], dtype=np.int64)
        self._arena_taint = np.array([t for _, _, t in taints], dtype=np.uint8)
        # by the count of arena starts at or below an offset: the taint of the last of them
        self._taint_after = np.concatenate([self._arena_taint[:1], self._arena_taint])
        unread = [k if k >= 0 and not self._bit[k] else -1 for _, k, _ in taints]
        self._unread_after = np.array([-1, *unread], dtype=np.int64)
        self._unread = any(k >= 0 for k in unread)
        self._lists = (self._starts.tolist(), self._ends.tolist(), self._bases.tolist())

    def read_taint(self, off: npt.NDArray[np.int64], width: int) -> Any:
        """Per lane, the taint of ``width`` bytes read at arena offsets ``off``: global
        data, its buffer's bit (state.py), and inexact where a shadow byte was never
        written (:meth:`untouched_taint`)."""
        off = np.asarray(off, dtype=np.int64)
        if len(self._arena_starts) == 0:
            return np.uint8(TAINT_GLOBAL) | self.untouched_taint(off, width)
        k = self._arena_starts.searchsorted(off, side="right")  # (1 + the buffer's, or 0)
        if self._unread:
            self._first_reads(self._unread_after[k])
        return self._taint_after[k] | self.untouched_taint(off, width)

    def _first_reads(self, read: npt.NDArray[np.int64]) -> None:
        """Give each buffer of ``read`` (buffer indices, -1 none) read for the first time the
        next taint bit, in the order the buffers were added."""
        new = np.unique(read[read >= 0])
        if not len(new):
            return
        given = sum(1 for b in self._bit if b)
        for k in new.tolist():
            self._bit[k] = buffer_bit(given)
            given += 1
        self._index()

    def taint_sources(self, taint: int) -> list[tuple[str, ...]]:
        """The buffers whose data a taint byte says was read: one tuple of names per
        buffer bit set (several names for the last group, which every buffer read from
        past the fourth shares), in the order the bits were given."""
        out: list[tuple[str, ...]] = []
        for g in range(BUFFER_GROUPS):
            if taint & buffer_bit(g):
                pairs = zip(self.buffers, self._bit, strict=True)
                names = [b.name for b, bit in pairs if bit == buffer_bit(g)]
                if names:
                    out.append(tuple(names))
        return out

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def read(self, name: str) -> bytes:
        """The current content of a buffer."""
        b = self.buffer(name)
        return self.data[b.offset : b.offset + b.size].tobytes()

    def c_string(self, address: int, limit: int) -> bytes | None:
        """The bytes at ``address`` up to the first NUL, at most ``limit`` of them, where a
        buffer or shadow holds that address (None: none does); never makes a shadow."""
        held = self.holder(address)
        if held is None:
            return None
        start = held.offset + (address - held.address)
        raw = self.data[start : min(held.offset + held.size, start + limit)].tobytes()
        return raw.split(b"\0", 1)[0]

    def offsets(
        self, addr: npt.NDArray[np.int64], width: int, ins: Instruction, taint: Any = None
    ) -> npt.NDArray[np.int64]:
        """Arena offsets of device addresses; an address outside every buffer is undescribed
        memory (a shadow region is made for it), or an error when it cannot be memory
        (``taint``: the addresses' taint, per lane or one for all, which names where a
        pointer read from memory came from)."""
        addr = np.asarray(addr, dtype=np.int64)
        if self.spin_reads is not None and len(self.spin_reads) < READ_LOG:
            self.spin_reads.append((addr.copy(), width, ins))
        if addr.size:  # every lane in one buffer (a warp's usual access): one look-up
            starts, ends, bases = self._lists
            lo, hi = int(addr.min()), int(addr.max())
            one = bisect_right(starts, lo) - 1  # np.searchsorted(side="right") - 1, monotonic
            if one >= 0 and bisect_right(starts, hi) - 1 == one and hi + width <= ends[one]:
                found: npt.NDArray[np.int64] = addr + (bases[one] - starts[one])
                return found
        k, bad = self._find(addr, width)
        if np.count_nonzero(bad):
            lanes = np.broadcast_to(0 if taint is None else taint, addr.shape)[bad]
            t = int(np.bitwise_or.reduce(lanes.astype(np.int64)))
            self._shadow(addr[bad], width, ins, t)
            k, bad = self._find(addr, width)
        off: npt.NDArray[np.int64] = self._bases[k] + (addr - self._starts[k])
        return off

    def _find(
        self, addr: npt.NDArray[np.int64], width: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
        if len(self._starts) == 0:
            return np.zeros(addr.shape, dtype=np.intp), np.ones(addr.shape, dtype=bool)
        k = np.searchsorted(self._starts, addr, side="right") - 1
        at = np.maximum(k, 0)
        bad = (k < 0) | (addr + width > self._ends[at])
        return at, bad

    def holder(self, at: int) -> Buffer | None:
        """The buffer or shadow region holding device address ``at`` (None: neither), by
        the look-up :meth:`offsets` makes."""
        k, bad = self._find(np.array([at], dtype=np.int64), 1)
        return None if bad[0] else self._every[int(k[0])]

    def _shadow(
        self, addr: npt.NDArray[np.int64], width: int, ins: Instruction, taint: int = 0
    ) -> None:
        """Shadow regions for undescribed addresses (or the error they are)."""
        a = int(addr.min())
        window = addr >= GLOBAL_BASE
        window &= addr < self.window_end
        if window.any() or not self.untouched:
            a = int(addr[window][0]) if window.any() else a
            near, advised = self._describe(a) if self.buffers else (": no buffers exist", False)
            raise TraceError(
                f"global access of {width} bytes at 0x{a % (1 << 64):x} is outside every "
                f"buffer{near}",
                ins,
                gives_data=advised,
            )
        if a < NULL_PAGE or int(addr.max()) + width > MAX_ADDRESS:
            a = a if a < NULL_PAGE else int(addr.max())
            raise TraceError(
                f"global access at 0x{a % (1 << 64):x}: not a device address ("
                + (
                    self._loaded_pointer(taint)
                    if taint & TAINT_GLOBAL and 0 <= a < NULL_PAGE
                    else _NOT_GIVEN
                )
                + ")",
                ins,
                gives_data=True,
            )
        self._cover(addr, width, ins)
        self._index()

    def preload(self, address: int, content: bytes | Filler, what: str) -> None:
        """Bytes a host program wrote to undescribed memory before the launch (``--memory``):
        they land in a shadow region at their real ``address``, marked written, so reads see
        them as exact values. Refused (``what`` names the option) inside the synthetic
        window or a buffer of the launch; where a device address can be at all is
        :func:`..kernel.param_block.read_memory`'s check, made when the option is read."""
        from ...cuda.launch.values import LaunchError

        nbytes = _size(content)
        end = address + nbytes
        assert address >= NULL_PAGE and end <= MAX_ADDRESS, "read_memory checks the range"
        if self._window and address < self.window_end and end > GLOBAL_BASE:
            raise LaunchError(
                f"{what}: 0x{address:x}..0x{end:x} overlaps the synthetic addresses "
                f"(0x{GLOBAL_BASE:x}..0x{self.window_end:x}) where shmem places "
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
        _put(self.data[at : at + nbytes], content)
        self._mark_set_span(at, at + nbytes)
        self._mark(np.arange(at // PAGE, (at + nbytes - 1) // PAGE + 1), None)

    def _loaded_pointer(self, taint: int) -> str:
        """Where a null address computed from global data came from, and what to give: a
        pointer the kernel read from memory (a pointer array's entry), zero in a buffer shmem
        zero-filled for a pointer parameter not given (those named first)."""
        read = [b for b, bit in zip(self.buffers, self._bit, strict=True) if taint & bit]
        made = [b.made for b in read if b.made]
        if made:
            whose = f"the zero-filled buffer of {', '.join(made)} (not given)"
            give = " or ".join(f"--arg {m}=@FILE" for m in made)
        else:
            whose = f"the buffer of {', '.join(b.name for b in read)}" if read else "memory"
            give = "--arg NAME=@FILE"
        return (
            f"null, from data read from {whose}: a pointer array's entry? give it with device "
            f"addresses, {give}, and their memory, --memory ADDR=@FILE"
        )

    def store_offsets(
        self,
        addr: npt.NDArray[np.int64],
        width: int,
        ins: Instruction,
        *,
        counted: bool = True,
        taint: Any = None,
    ) -> npt.NDArray[np.int64]:
        """:meth:`offsets` for a write of ``width`` bytes at each address: the pages written
        become real, and more of them than :attr:`max_written` stop the trace. The write
        counts in :attr:`epoch` unless ``counted`` is false (an atomic counts its own, where
        it changed a word)."""
        off = self.offsets(addr, width, ins, taint)
        self.epoch += counted
        if self._set is not None:  # undescribed bytes written: they read back as written
            self._mark_set((off[..., None] + np.arange(width)).ravel())
        if width <= PAGE:
            pages = np.concatenate([off // PAGE, (off + width - 1) // PAGE])
        else:
            pages = np.concatenate([np.arange(o // PAGE, (o + width - 1) // PAGE + 1) for o in off])
        self._mark(pages, ins)
        return off

    def _describe(self, a: int) -> tuple[str, bool]:
        """The buffer an address outside every buffer is nearest to: the one it lies past
        (an overrun, the usual case), else the closest; for a buffer shmem made up, how to
        give the launch's real size (then True: the text says how to give the data)."""
        past = [b for b in self.buffers if b.address + b.size <= a]
        if past:
            near = max(past, key=lambda b: b.address + b.size)
            gap = a - near.address - near.size
            where = f"{gap:,} bytes past its end" if gap else "just past its end"
        else:
            near = min(self.buffers, key=lambda b: b.address - a)
            where = f"{near.address - a:,} bytes before its start"
        at = f"0x{near.address:x}, {near.size:,} bytes"
        text = f" (nearest buffer '{near.name}' at {at}: {where})"
        if near.made is not None:
            text += (
                f"; '{near.name}' is a zero-filled buffer of --buffer-size bytes, made because the "
                "launch gave no data for it: give the launch's real sizes with --buffer-size "
                f"BYTES, or the data with --arg {near.made}=@FILE"
            )
        return text, near.made is not None
