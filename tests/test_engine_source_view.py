"""The engine's source-view figures (``RequestStats.source_extra``, hardware.pairs.source_extra,
and ``source_ideal_extra``, hardware.engine.source_ideal): what Nsight Compute's
per-instruction source counters count beyond the per-op wavefronts for a pair-merged load,
and their ideal column (docs/hardware-model.md sections 3, 8 and 10). Expectations worked by
hand."""

from __future__ import annotations

import numpy as np
import pytest

from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.engine import AccessKind, Method, request_stats

Lanes = dict[int, int]  # lane -> byte address (other lanes off)
Ideals = tuple[int, int]


def costs(lanes: Lanes, size: int, method: Method) -> tuple[int, int]:
    """(per-op wavefronts, source-view wavefronts) of one load request."""
    addr = np.zeros((1, 32), dtype=np.int64)
    active = np.zeros((1, 32), dtype=bool)
    for lane, a in lanes.items():
        addr[0, lane], active[0, lane] = a, True
    stats = request_stats(addr, active, AccessKind("load", size), SM90, method=method)
    return int(stats.wavefronts[0]), int(stats.wavefronts[0] + stats.source_extra[0])


METHODS = pytest.mark.parametrize("method", ["unit", "word"])


@METHODS
def test_a_conflicted_merged_lds64_counts_its_half_warps_on_the_source_page(method: Method) -> None:
    # lanes 0, 1, 16, 17 on doubles 0, 16, 2, 3: lanes n and n^2 pair up (n^2 is off), one
    # merged phase where banks 0 and 1 hold words 0/1 and 32/33: 2 per op. Unmerged: lanes 0
    # and 1 clash in half-warp 0 (2), lanes 16 and 17 share nothing (1): 3 on the source page
    assert costs({0: 0, 1: 128, 16: 16, 17: 24}, 8, method) == (2, 3)


@METHODS
def test_a_one_address_lds128_costs_a_wavefront_per_16_lanes_on_the_source_page(
    method: Method,
) -> None:
    # ten lanes on one float4, five in each half-warp: a broadcast in each merged half-warp
    # (2 per op), ceil(10 / 16) = 1 on the source page
    lanes = {n: 64 for n in (0, 1, 2, 3, 4, 20, 21, 22, 23, 24)}
    assert costs(lanes, 16, method) == (2, 1)


@METHODS
def test_an_lds128_counts_only_its_conflicted_half_warp_unmerged(method: Method) -> None:
    # lanes 2k and 2k+1 read float4 idx[k]. Half-warp 0 reads 0, 8, 1, 2 | 3, 4, 5, 6: float4s
    # 0 and 8 share banks 0-3, merged 2; its quarter-warps cost 2 (0 and 8) and 1. Half-warp
    # 1 reads 0..7, conflict-free: merged 1 (its quarter-warps would be 2). Per op 2 + 1 = 3,
    # source page 3 + 1 = 4
    idx = [0, 8, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 7]
    lanes = {lane: 16 * idx[lane // 2] for lane in range(32)}
    assert costs(lanes, 16, method) == (3, 4)


@METHODS
def test_loads_without_the_corner_count_alike_on_both_pages(method: Method) -> None:
    # merged without a conflict: lanes 2k, 2k+1 on double k, 16 doubles in 32 banks: 1
    assert costs({n: 8 * (n // 2) for n in range(32)}, 8, method) == (1, 1)
    # not merged (lane n on double 16n: no pairs), 16-way in each half-warp: 32 on both
    assert costs({n: 128 * n for n in range(32)}, 8, method) == (32, 32)
    # a 4-byte load never merges: lanes 0 and 1 on words 0 and 32 (2-way)
    assert costs({0: 0, 1: 128}, 4, method) == (2, 2)


@METHODS
def test_an_lds128_with_lane_31_on_and_a_partner_off_counts_half_warp_0_unmerged(
    method: Method,
) -> None:
    # lanes 0, 8 and 31 on float4s 0, 1 and 2, their partners (1, 9, 30) off: the lanes pair
    # up vacuously, half-warp 0 (float4s 0 and 1, banks 0-7) and half-warp 1 merged, 1 each:
    # 2 per op. On the source page half-warp 0 counts as its quarter-warps, 1 + 1: 3
    assert costs({0: 0, 8: 16, 31: 32}, 16, method) == (2, 3)
    # lane 30 instead of 31: both pages 2; nor does an LDS.64 (one merged phase) count so
    assert costs({0: 0, 8: 16, 30: 32}, 16, method) == (2, 2)
    assert costs({0: 0, 8: 8, 31: 16}, 8, method) == (1, 1)


@METHODS
def test_only_a_lone_lane_of_half_warp_0_at_every_pairing_distance_counts(
    method: Method,
) -> None:
    # pairs10's x11: lanes 0/1 on float4 0, 8/9 on 1, 16 on 3, 30/31 on 2; lane 16's partner
    # (17) is the only one off, in half-warp 1: both pages 2 (half-warp 0 in full pairs)
    assert costs({0: 0, 1: 0, 8: 16, 9: 16, 16: 48, 30: 32, 31: 32}, 16, method) == (2, 2)
    # lane 1 dropped instead: lane 0 alone in half-warp 0, half-warp 0 unmerged: 1 + 1
    assert costs({0: 0, 8: 16, 9: 16, 16: 48, 17: 48, 30: 32, 31: 32}, 16, method) == (2, 3)
    # pairs10's x12: lanes 0/2 on float4 5, 8/10 on 6, 29/31 on 7: the lanes pair up at
    # distance 1 (vacuously, every partner off) and at 2 (in full): no extra
    assert costs({0: 80, 2: 80, 8: 96, 10: 96, 29: 112, 31: 112}, 16, method) == (2, 2)


def ideals(
    lanes: Lanes, size: int, method: Method, op: str = "load", atomic: str = "inc"
) -> Ideals:
    """(shmem's ideal, the Source page's ideal) of one request."""
    addr = np.zeros((1, 32), dtype=np.int64)
    active = np.zeros((1, 32), dtype=bool)
    for lane, a in lanes.items():
        addr[0, lane], active[0, lane] = a, True
    stats = request_stats(addr, active, AccessKind(op, size, atomic), SM90, method=method)
    return int(stats.ideal[0]), int(stats.ideal[0] + stats.source_ideal_extra[0])


@METHODS
def test_a_conflicted_full_warp_merge_has_the_source_pages_ideal_of_its_bytes(
    method: Method,
) -> None:
    # lanes 2k and 2k+1 on double idx[k]: 0, 16, 1..14; one merged phase (shmem's ideal 1),
    # 2-way per op; the page counts half-warps 2 + 1 = 3 and 32 x 8 bytes fill 2 wavefronts
    idx = [0, 16, *range(1, 15)]
    assert ideals({n: 8 * idx[n // 2] for n in range(32)}, 8, method) == (1, 2)


@METHODS
def test_a_merge_without_a_source_extra_still_has_the_pages_ideal(method: Method) -> None:
    # lanes 0-17 paired on doubles 0..7 then 16: one merged phase (shmem's ideal 1), 2-way
    # (0 and 16) per op; unmerged each half-warp costs 1, 2 on the page too; 18 x 8 = 144
    # bytes: 2 wavefronts
    idx = [*range(8), 16]
    assert ideals({n: 8 * idx[n // 2] for n in range(18)}, 8, method) == (1, 2)


@METHODS
def test_a_one_address_lds128_has_the_pages_packed_ideal(method: Method) -> None:
    # ten lanes on one float4, five in each half-warp: 2 merged phases with a lane (shmem's
    # ideal min(2, ceil(160 / 128)) = 2); the page counts ceil(10 / 16) = 1 wavefront: 1
    lanes = {n: 64 for n in (0, 1, 2, 3, 4, 20, 21, 22, 23, 24)}
    assert ideals(lanes, 16, method) == (2, 1)


@METHODS
def test_requests_that_do_not_merge_have_one_ideal(method: Method) -> None:
    # a full warp merged without a conflict (double k for lanes 2k, 2k+1): 1 and min(2, 1)
    assert ideals({n: 8 * (n // 2) for n in range(32)}, 8, method) == (1, 1)
    # LDS.64 of lanes 0 and 16 on doubles 0 and 32: merged or not, 16 bytes fill 1
    # wavefront, and shmem's phases are capped at that too
    assert ideals({0: 0, 16: 256}, 8, method) == (1, 1)
    # STS.128 of lanes 0, 8, 16, 24 (one in each quarter-warp): 4 phases, 64 bytes: 1
    assert ideals({n: 16 * n for n in (0, 8, 16, 24)}, 16, method, "store") == (1, 1)
    # a whole warp's 4-byte load, 32-way: 1 phase, 128 bytes: 1
    assert ideals({n: 128 * n for n in range(32)}, 4, method) == (1, 1)


@METHODS
def test_an_atomic_keeps_shmems_ideal(method: Method) -> None:
    # ATOMS.CAS.64 of lanes 0 and 16 (x64_pair_one: Nsight's ideal 2): two passes of
    # ceil(16 / 128) = 1, not the bytes' 1
    assert ideals({0: 0, 16: 256}, 8, method, "atomic", "cas") == (2, 2)
