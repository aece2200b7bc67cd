"""What distributed shared memory traffic costs on the H200: 32-byte sectors over the
crossbar, not wavefronts (docs/hardware-model.md, 9d; tests/data/trace/cluster).

A remote access (another CTA's shared memory in the cluster) has no shared-memory
wavefronts. Per warp request it moves:

* a load: one sector per distinct 32-byte sector its lanes read;
* a store: one per distinct sector written, two where the bytes it writes in a sector are
  not one run (lanes on every other word);
* an atomic (or a reduction): two per sector and lane on its busiest word (lanes on one
  word are served one after another; lanes on different words of a sector together).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arch import SM90


def sectors(warps: Any, at: Any, width: int, op: str) -> int:
    """The sectors the lanes of ``warps`` (each lane's warp) moved at byte offsets ``at``
    (each lane's, ``width`` bytes), for ``op`` ``ld``, ``st`` or ``atom``."""
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
    total = 0
    for w, s in np.unique(np.stack([warps, sector]), axis=1).T.tolist():
        mine = (warps == w) & (sector == s)
        written = np.unique((at[mine][:, None] + np.arange(width)[None, :]).ravel())
        total += 1 if int(written[-1] - written[0]) + 1 == len(written) else 2
    return total
