"""Pair merge (docs/hardware-model.md section 3): which requests of an 8- or 16-byte load
have phases twice as wide.

A request merges when lane n and lane n^d give the same address wherever both are
active, for some d of the profile's ``pair_merge_distances``, bank conflicts or not: the
wavefronts Nsight Compute counts per op (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld``)
on 2,087 measured launches (tests/data/trace/pairs3 to pairs10). Its per-instruction source
counters count some merged phases as their unmerged phases instead (docs/hardware-model.md
section 3): :func:`split_phases` says which, :func:`source_extra` what those counters give
beyond the per-op figure, which the engine adds to each request
(``RequestStats.source_extra``; tests/reference.py's ``asks_twice`` and ``source_view``
state the rule for tests/test_trace_pairs.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from .arch import ArchProfile

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

__all__ = ["merged_rows", "one_address", "source_extra", "split_phases"]


def merged_rows(addr: I64, active: B8, size: int, op: str, arch: ArchProfile) -> B8:
    """Rows (R,) whose phases merge: twice as many lanes each."""
    rows = addr.shape[0]
    merged = np.zeros(rows, dtype=bool)
    if op not in arch.pair_merge_ops or size <= arch.bank_bytes:
        return merged
    for distance in arch.pair_merge_distances:
        merged |= _lanes_pair_up(addr, active, distance)
    return merged


def split_phases(merged: I64, addr: I64, active: B8, arch: ArchProfile) -> B8:
    """Which merged phases (R, P) of requests that merge Nsight's source counters count as
    their two unmerged phases: ``merged`` holds each one's worst bank degree.

    A phase that asks a bank for two words (a degree above 1); and, where a request has
    more than one merged phase (an LDS.128's half-warps), its first one also when the
    warp's last lane is active and, at every distance the lanes pair up at, some active lane
    of that first phase has its partner (lane n^d) off: its lanes come in full pairs at none
    of them (never so for an LDS.64, whose one merged phase is the whole warp). Exact on all
    583 distinct LDS.128 reads of tests/data/trace/pairs3 to pairs10 (929 launches; pairs10
    took the reads that counted one more apart lane by lane, docs/hardware-model.md 3).
    """
    split: B8 = merged > 1
    if merged.shape[1] > 1:
        first = active.shape[1] // merged.shape[1]  # lanes of the first merged phase
        last_on = active[:, -1]
        split[:, 0] |= last_on & ~_first_phase_pairs_in_full(addr, active, first, arch)
    return split


def source_extra(
    merged: I64, unmerged: I64, split: B8, addr: I64, active: B8, arch: ArchProfile
) -> I64:
    """What Nsight's source counters count more than the per-op wavefronts (R,), for
    requests that merge: ``merged`` (R, P) and ``unmerged`` (R, 2P) are the worst bank
    degree of each phase, merged and not (phase p merged is phases 2p and 2p+1 unmerged);
    ``split`` (R, P) is :func:`split_phases`' answer, and ``unmerged`` must be filled for
    every row where it splits a phase.

    The phases ``split`` picks count as their two unmerged phases; a request
    whose active lanes all give one address counts its active lanes packed into merged
    phases (an LDS.128's ceil(lanes / 16) half-warps, however its lanes lie). Exact on
    every LDS.64 and LDS.128 launch of tests/data/trace/pairs3 to pairs10
    (docs/hardware-model.md section 3).
    """
    rows = len(merged)
    halves = unmerged.reshape(rows, -1, 2).sum(axis=2)  # each merged phase, unmerged
    source = np.where(split, halves, merged).sum(axis=1)
    lanes = active.sum(axis=1)
    per_merged = 2 * arch.warp_size // unmerged.shape[1]  # lanes of a merged phase
    source = np.where(one_address(addr, active), -(-lanes // per_merged), source)
    extra: I64 = source - merged.sum(axis=1)
    return extra


def one_address(addr: I64, active: B8) -> B8:
    """Rows (R,) with an active lane whose active lanes all give one address."""
    lead = addr[np.arange(addr.shape[0]), np.argmax(active, axis=1)]
    found: B8 = np.all((addr == lead[:, None]) | ~active, axis=1) & active.any(axis=1)
    return found


def _first_phase_pairs_in_full(addr: I64, active: B8, lanes: int, arch: ArchProfile) -> B8:
    """Rows (R,) with a distance d of the profile's ``pair_merge_distances`` at which the
    row's lanes pair up and every active lane among the first ``lanes`` has lane n^d active."""
    n = np.arange(lanes)
    found = np.zeros(active.shape[0], dtype=bool)
    for distance in arch.pair_merge_distances:
        on = active[:, :lanes]
        full = ~(on & ~active[:, n ^ distance]).any(axis=1)
        found |= full & _lanes_pair_up(addr, active, distance)
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
