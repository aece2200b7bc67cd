"""Pair merge (docs/hardware-model.md section 3): which requests of an 8- or 16-byte load
have phases twice as wide.

A request merges when lane n and lane n^d give the same address wherever both are
active, for some d of the profile's ``pair_merge_distances``, bank conflicts or not: the
wavefronts Nsight Compute counts per op (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld``)
on 1,549 measured launches (tests/data/trace/pairs3 to pairs8). Its per-instruction source
counters count a merged phase that asks a bank for two words as its unmerged phases instead
(docs/hardware-model.md section 3): :func:`conflicted_phases` says which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from .arch import ArchProfile

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

__all__ = ["conflicted_phases", "merged_rows"]

CHUNK = 4096  # rows compared lane against lane at once ((rows, 32, 32) int64)


def merged_rows(addr: I64, active: B8, size: int, op: str, arch: ArchProfile) -> B8:
    """Rows (R,) whose phases merge: twice as many lanes each."""
    rows = addr.shape[0]
    merged = np.zeros(rows, dtype=bool)
    if op not in arch.pair_merge_ops or size <= arch.bank_bytes:
        return merged
    for distance in arch.pair_merge_distances:
        merged |= _lanes_pair_up(addr, active, distance)
    return merged


def conflicted_phases(addr: I64, active: B8, size: int, arch: ArchProfile) -> B8:
    """Rows where some merged phase asks one bank for two different words: the reads whose
    merged phases Nsight's per-instruction source counters count unmerged."""
    rows = addr.shape[0]
    found = np.zeros(rows, dtype=bool)
    phase_lanes = 2 * arch.lanes_per_phase(size)
    for start in range(0, rows, CHUNK):
        part = slice(start, start + CHUNK)
        found[part] = _merged_conflict(addr[part], active[part], size, phase_lanes, arch)
    return found


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


def _merged_conflict(addr: I64, active: B8, size: int, phase_lanes: int, arch: ArchProfile) -> B8:
    """Rows where two active lanes of one merged phase ask one bank for two different words."""
    lanes = np.arange(arch.warp_size)
    phase = lanes // phase_lanes
    together = (phase[:, None] == phase[None, :])[None] & active[:, :, None] & active[:, None, :]
    word = addr // arch.bank_bytes
    gap = word[:, :, None] - word[:, None, :]  # first words' distance, lane against lane
    span = max(1, size // arch.bank_bytes)  # words per lane
    clash = np.zeros(gap.shape, dtype=bool)
    for shift in range(1 - span, span):  # word k of one lane against word m of the other
        d = gap + shift
        clash |= (d % arch.banks == 0) & (d != 0)
    found: B8 = (clash & together).any(axis=(1, 2))
    return found
