"""Pair merge (docs/hardware-model.md section 3): which requests of an 8- or 16-byte load
have phases twice as wide.

A request merges when lane n and lane n^d give the same address wherever both are
active, for some d of the profile's ``pair_merge_distances``, bank conflicts or not: the
wavefronts Nsight Compute counts per op (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld``)
on 1,549 measured launches (tests/data/trace/pairs3 to pairs8). Its per-instruction source
counters count an ``LDS.64`` whose merged phase asks a bank for two words as its unmerged
half-warps instead (docs/hardware-model.md section 3); shmem does not model those counters
(tests/reference.py's ``asks_twice`` states that rule for tests/test_trace_pairs.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from .arch import ArchProfile

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

__all__ = ["merged_rows"]


def merged_rows(addr: I64, active: B8, size: int, op: str, arch: ArchProfile) -> B8:
    """Rows (R,) whose phases merge: twice as many lanes each."""
    rows = addr.shape[0]
    merged = np.zeros(rows, dtype=bool)
    if op not in arch.pair_merge_ops or size <= arch.bank_bytes:
        return merged
    for distance in arch.pair_merge_distances:
        merged |= _lanes_pair_up(addr, active, distance)
    return merged


def _lanes_pair_up(addr: I64, active: B8, distance: int) -> B8:
    """Rows where lane n and lane n^distance give the same address wherever both are active."""
    # most rows already differ in lanes 0 and 0^distance: check the others in full
    pairs: B8 = (addr[:, 0] == addr[:, distance]) | ~(active[:, 0] & active[:, distance])
    rows = np.flatnonzero(pairs)
    if len(rows):
        # view the lanes as (pairs, 2, distance): [:, :, 0] holds lane n, [:, :, 1] lane n^distance
        shape = (len(rows), -1, 2, distance)
        a, on = addr[rows].reshape(shape), active[rows].reshape(shape)
        same = (a[:, :, 0] == a[:, :, 1]) | ~(on[:, :, 0] & on[:, :, 1])
        pairs[rows] = same.all(axis=(1, 2))
    return pairs
