"""A grid alike but for its edges: the blocks a narrowed proof leaves to run, and what the
first block counted, to be counted again for each block it stands for.

Where a guard on the block index holds block (0,0,0)'s outcome only up to some index along
an axis (a bounds check that the last blocks of a row cut: :mod:`.affine`), the blocks at or
below the box of those indices on every axis take all the first block's decisions and make
its requests; the others, the edges, run (:func:`edge_blocks`). The first block's share of
every count (:class:`FirstCounts`, taken right after it ran) is then added once for each
other block of the box.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ...requests import Recorder

#: a grid past this many blocks is not enumerated for its edges (it runs as before)
MOST_BLOCKS = 1 << 24


@dataclass(frozen=True)
class FirstCounts:
    """What the first block counted, and how many more blocks it stands for."""

    extra: int  # the blocks of the box besides the first
    executed: int  # its thread-instructions
    records: dict[int, tuple[int, int]]  # instruction index -> (requests, warps predicated off)
    unmodelled: dict[int, int] = field(default_factory=dict)  # index -> warp executions
    sectors: dict[int, int] = field(default_factory=dict)  # index -> dsmem sectors
    cas_failed: dict[int, int] = field(default_factory=dict)  # index -> failed CAS lanes

    def plus(self, counts: dict[Any, int], first: dict[Any, int]) -> dict[Any, int]:
        """``counts`` with the first block's ``first`` added for each block it stands for."""
        out = dict(counts)
        for key, n in first.items():
            out[key] = out.get(key, 0) + self.extra * n
        return out


def first_counts(
    extra: int,
    executed: int,
    recorder: Recorder,
    unmodelled: dict[int, int],
    sectors: dict[int, int],
    cas_failed: dict[int, int],
) -> FirstCounts:
    """The counts of the run so far (the first block alone), kept apart."""
    records = {i: (rec.n, rec.predicated_off) for i, rec in recorder.by_index.items()}
    return FirstCounts(extra, executed, records, dict(unmodelled), dict(sectors), dict(cas_failed))


def edge_blocks(grid: tuple[int, int, int], box: Any) -> tuple[list[int], int] | None:
    """(the blocks outside ``box`` in launch order, the blocks inside it) of a grid whose
    blocks with every index at or below ``box`` behave as the first; None where the box
    holds the first block alone or the grid is too large to list."""
    gx, gy, gz = grid
    if gx * gy * gz > MOST_BLOCKS or not np.any(box):
        return None
    inside = int(np.prod(np.asarray(box, dtype=np.int64) + 1))
    linear = np.arange(gx * gy * gz, dtype=np.int64)
    x, y, z = linear % gx, (linear // gx) % gy, linear // (gx * gy)
    out = (x > box[0]) | (y > box[1]) | (z > box[2])
    return [int(k) for k in np.flatnonzero(out)], inside
