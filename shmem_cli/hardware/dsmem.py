"""What distributed shared memory traffic costs on the H200: 32-byte sectors over the
crossbar, not wavefronts (docs/hardware-model.md, 9d; tests/data/trace/cluster and
tests/data/trace/dsmrule).

A remote access (another CTA's shared memory in the cluster) has no shared-memory
wavefronts. Per warp request it moves, counted per destination CTA and 32-byte sector:

* a load: one sector per distinct sector its lanes read;
* a store: one per sector written, two where the bytes it writes in a sector neither lie
  within one of its two 16-byte halves nor fill the sector from at most 16 lanes (whatever
  the gaps, the access width or the lanes' order: a sector filled by 17 or more lanes, as
  32 one-byte stores, moves two);
* an atomic (or a reduction, 32- or 64-bit, compare-and-swap too): two per sector and
  lane on its busiest word (lanes on one word are served one after another; lanes on
  different words of a sector together).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arch import SM90


def sectors(warps: Any, at: Any, width: int, op: str) -> int:
    """The sectors the lanes of ``warps`` (each lane's warp) moved at byte offsets ``at``
    (each lane's, ``width`` bytes; offsets that name the destination CTA too: each CTA's
    memory at its own offsets), for ``op`` ``ld``, ``st`` or ``atom``."""
    size = SM90.dsmem_sector_bytes
    warps = np.asarray(warps, dtype=np.int64)
    at = np.asarray(at, dtype=np.int64)
    if not len(at):
        return 0
    sector = at // size
    if op == "ld":
        return len(np.unique(np.stack([warps, sector]), axis=1).T)
    if op == "atom":
        keys, counts = np.unique(np.stack([warps, sector, at]), axis=1, return_counts=True)
        busiest: dict[tuple[int, int], int] = {}
        for (w, s, _), n in zip(keys.T.tolist(), counts.tolist(), strict=True):
            busiest[(w, s)] = max(busiest.get((w, s), 0), n)
        return 2 * sum(busiest.values())
    return _store_sectors(warps, at, width)


def _store_sectors(warps: Any, at: Any, width: int) -> int:
    """A store's sectors: per warp and sector, 1 where the bytes written lie within one
    half of it, or fill it from at most ``dsmem_store_full_lanes`` lanes, else 2."""
    size, half = SM90.dsmem_sector_bytes, SM90.dsmem_store_half_bytes
    written = (at[:, None] + np.arange(width)[None, :]).ravel()
    owner = np.repeat(warps, width)
    sector = written // size
    lane_sector = at // size  # a store never crosses a sector (aligned accesses)
    total = 0
    for w, s in np.unique(np.stack([owner, sector]), axis=1).T.tolist():
        mine = (owner == w) & (sector == s)
        bytes_ = np.unique(written[mine])
        one_half = len(np.unique(bytes_ // half)) == 1
        writers = int(np.count_nonzero((warps == w) & (lane_sector == s)))
        full = len(bytes_) == size and writers <= SM90.dsmem_store_full_lanes
        total += 1 if one_half or full else 2
    return total
