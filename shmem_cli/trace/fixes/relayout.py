"""What a traced instruction would cost if its array were laid out differently.

A :class:`Change` maps a byte offset inside an array to its new offset: row padding
(``pitch`` bytes a row, ``pad_bytes`` more after each) or an XOR swizzle
(:class:`~shmem_cli.swizzle.Swizzle`). It is applied to the traced lane addresses of
every instruction that touches the array, and each instruction is costed again through
the cost door (:func:`shmem_cli.analysis.cost.batch_stats`).

A vector access (``LDS.64``, ``LDS.128``, ``STS.64``, ``STS.128``) exists only while
ptxas can prove its address aligned to its width. ptxas merges the scalar PTX loads
and stores itself (the PTX of a vectorized SGEMM has only ``ld.shared.f32``), from
the addresses it can prove, so a change that breaks the alignment changes the
instructions. Compiling padded variants of the project's kernels
(tests/data/trace/fixes) shows what it emits instead:

* when the instruction's offset within its alignment is the same in every execution
  (the instruction sits in an unrolled loop, at a fixed row), ptxas covers the bytes
  with the fewest naturally aligned accesses: a 16-byte load 4 bytes past a 16-byte
  boundary becomes an ``LDS.128`` from the boundary (reading 4 bytes it does not
  need, inside the array) and an ``LDS``; 8 bytes past it, two ``LDS.64``; 12 bytes
  past it, an ``LDS`` and an ``LDS.128``. Stores never write bytes they were not
  given: they are covered exactly;
* when the offset varies between executions (a rolled loop over rows of an odd
  pitch), the access is split into pieces of the alignment every execution has: an
  ``LDS.128`` into four ``LDS`` (4-byte alignment) or two ``LDS.64`` (8-byte);
* a swizzle that moves bytes inside the vector's width (its base below the width)
  splits it into the pieces that stay contiguous.

The costs here are those of the split accesses, never of the vector access kept.
ldmatrix/stmatrix rows and cp.async copies cannot be split: a change that misaligns
them is refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from ...analysis.cost import batch_stats
from ...hardware import ops
from ...hardware.arch import ArchProfile
from ...hardware.swizzle import Swizzle
from ...plumbing.frozen import frozen
from .arrays import SharedArray

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..requests import InstructionRecords

I64: TypeAlias = "npt.NDArray[np.int64]"

BANK_LINE = 128  # bytes of one row of the 32 banks: offsets equal mod this share banks


@frozen
class Change:
    """A new layout of one array: rows padded, or the offsets swizzled."""

    kind: str  # "pad" or "swizzle"
    pitch: int = 0  # pad: bytes of a row as it is now
    pad_bytes: int = 0
    swizzle: Swizzle | None = None

    def offset(self, rel: I64) -> I64:
        """The new byte offset of each old offset ``rel`` inside the array."""
        if self.kind == "pad":
            return (rel // self.pitch) * (self.pitch + self.pad_bytes) + rel % self.pitch
        assert self.swizzle is not None
        return self.swizzle.apply(rel)

    def new_offset(self, array: SharedArray) -> int:
        """Where the array starts after the change. A swizzle applied to the index keeps
        its bank pattern from an array start aligned to its period or to the banks' 128
        bytes, whichever is less (TMA itself wants more: 1024 bytes for 128B)."""
        if self.kind == "swizzle" and self.swizzle is not None:
            period = min(self.swizzle.period, BANK_LINE)
            return -(-array.offset // period) * period
        return array.offset

    def extra_bytes(self, array: SharedArray) -> int:
        """Shared memory the change costs: the padding, or a swizzle's alignment gap."""
        if self.kind == "pad":
            return (array.size // self.pitch) * self.pad_bytes
        return self.new_offset(array) - array.offset


@frozen
class Piece:
    """One access of a split: ``size`` bytes at ``offset`` from the lane's own address."""

    offset: int
    size: int


@frozen
class MovedCost:
    """One instruction under a change: what it becomes and what that costs."""

    requests: int
    wavefronts: int
    pieces: tuple[int, ...]  # widths of the accesses it becomes (one entry: not split)
    split: bool  # a vector access the change breaks up
    refused: str | None = None  # why the change cannot apply to this instruction

    def becomes(self, opcode: str) -> str:
        """``LDS.128 -> LDS.128 + LDS`` in words (the opcode as the trace names it)."""
        stem = opcode.split(".")[0]
        names = [stem if w == 4 else f"{stem}.{w * 8}" for w in self.pieces]
        return " + ".join(names)


@lru_cache(maxsize=256)
def cover(residue: int, width: int, *, exact: bool) -> tuple[Piece, ...]:
    """The fewest naturally aligned accesses of at most ``width`` bytes that read bytes
    ``residue .. residue + width - 1`` (offsets relative to the lane's address); among
    those, the fewest bytes. ``exact`` (stores): no byte outside that range."""
    end = residue + width
    best: dict[int, tuple[int, int, tuple[Piece, ...]]] = {}

    def walk(p: int) -> tuple[int, int, tuple[Piece, ...]]:
        if p >= end:
            return (0, 0, ())
        if p in best:
            return best[p]
        options = []
        size = 4
        while size <= width:
            start = p - p % size
            if (start == p or not exact) and (not exact or start + size <= end):
                count, read, rest = walk(start + size)
                options.append((count + 1, read + size, (Piece(start - residue, size), *rest)))
            size *= 2
        best[p] = min(options, key=lambda o: (o[0], o[1])) if options else (99, 0, ())
        return best[p]

    return walk(residue)[2]


def _wavefronts(
    rec: InstructionRecords,
    addr: I64,
    active: npt.NDArray[np.bool_],
    size: int,
    arch: ArchProfile,
) -> int:
    """The instruction's requests at the addresses ``addr``, ``size`` bytes per lane, costed
    through the cost door (the engine, or cp.async's rule with its global side)."""
    batch = dataclasses.replace(rec.batch(arch), addr=addr, active=active)
    stats = batch_stats(batch, dataclasses.replace(rec.kind, size=size), arch)
    return int(stats.wavefronts.sum())


def cost_moved(
    rec: InstructionRecords, array: SharedArray, change: Change, arch: ArchProfile
) -> MovedCost:
    """The instruction's requests with the array laid out by ``change``."""
    addr, active = rec.rows(arch)
    n = len(addr)
    width = rec.kind.size
    base = change.new_offset(array)
    rel = np.where(active, addr - array.offset, 0)
    new = np.where(active, base + change.offset(rel), 0)
    op = ops.get(rec.kind.op)
    if not op.lane_addressed:
        return MovedCost(n, 0, (width,), False, refused=f"its {op.name} traffic is not moved")
    vector = op.splits and width > 4
    whole = op.matrix or op.copy  # ldmatrix/stmatrix rows and cp.async copies never split
    if not (vector or whole) or n == 0:
        return MovedCost(n, _wavefronts(rec, new, active, width, arch) if n else 0, (width,), False)
    on = new[active]
    contiguous = all(
        np.array_equal(base + change.offset(rel[active] + t), on + t) for t in range(4, width, 4)
    )
    aligned = width
    while aligned > 4 and np.any(on % aligned):
        aligned //= 2
    if contiguous and aligned == width:
        return MovedCost(n, _wavefronts(rec, new, active, width, arch), (width,), False)
    if whole:
        what = "its 16-byte rows" if op.matrix else f"its {width}-byte copies"
        return MovedCost(n, 0, (width,), True, refused=f"misaligns {what}")
    if contiguous:
        residues = np.unique(on % width)
        pieces: Sequence[Piece]
        if len(residues) == 1:
            # stores never write bytes they were not given
            pieces = cover(int(residues[0]), width, exact=op.verb != "reads")
            low = int(on.min()) + min(p.offset for p in pieces)
            high = int(on.max()) + max(p.offset + p.size for p in pieces)
            if low < base or high > base + array.size + change.extra_bytes(array):
                pieces = cover(int(residues[0]), width, exact=True)
        else:
            pieces = [Piece(k, aligned) for k in range(0, width, aligned)]
    else:
        piece = width
        while piece > 4 and not _holds(change, rel[active], on, base, piece, width):
            piece //= 2
        pieces = [Piece(k, piece) for k in range(0, width, piece)]
    wavefronts = 0
    for p in pieces:
        if contiguous:
            moved = np.where(active, new + p.offset, 0)
        else:
            moved = np.where(active, base + change.offset(rel + p.offset), 0)
        wavefronts += _wavefronts(rec, moved, active, p.size, arch)
    return MovedCost(n * len(pieces), wavefronts, tuple(p.size for p in pieces), True)


def _holds(change: Change, rel: I64, on: I64, base: int, piece: int, width: int) -> bool:
    """Whether every ``piece``-byte part of each lane's access stays contiguous and
    aligned to ``piece`` under the change."""
    for k in range(0, width, piece):
        start = base + change.offset(rel + k)
        if np.any(start % piece):
            return False
        for t in range(4, piece, 4):
            if not np.array_equal(base + change.offset(rel + k + t), start + t):
                return False
    del on
    return True
