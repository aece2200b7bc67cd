"""Request totals: the one sum (stats_totals) and the deduplicating path (request_totals)."""

from __future__ import annotations

import numpy as np

from shmem_cli.analysis.totals import request_totals, stats_totals
from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.engine import AccessKind, request_stats
from shmem_cli.model import Totals


def test_stats_totals_counts_requests_by_hand() -> None:
    lanes = np.arange(32, dtype=np.int64)
    addr = np.stack([lanes * 4, lanes * 8, np.zeros(32, dtype=np.int64)])  # 1, 2, 1 wavefronts
    full = np.ones(addr.shape, dtype=bool)
    stats = request_stats(addr, full, AccessKind("load", 4), SM90)
    # a 4-byte request of a whole warp has one phase: 3 phases in all
    assert stats_totals(stats) == Totals(
        requests=3,
        wavefronts=4,
        ideal_wavefronts=3,
        max_ways=2,
        cycles=4,
        conflicted_requests=1,
        phases=3,
    )
    # row weights: the 2-way request stands for 5 requests
    weighted = stats_totals(stats, np.array([1, 5, 2], dtype=np.int64))
    assert (weighted.requests, weighted.wavefronts, weighted.conflicted_requests) == (8, 13, 5)
    assert weighted.phases == 8


def test_request_totals_equal_the_plain_sum_with_repeats_and_shifts() -> None:
    rng = np.random.default_rng(5)
    base = rng.integers(0, 64, size=(20, 32)) * 4
    # every request again, shifted by whole bank rows (128 bytes): same answer
    addr = np.concatenate([base, base + 128 * rng.integers(1, 9, size=(20, 1))])
    active = rng.random(addr.shape) < 0.8
    active[3] = False  # no active lane: no request
    kind = AccessKind("store", 4)
    has = active.any(axis=1)
    plain = stats_totals(request_stats(addr[has], active[has], kind, SM90))
    assert request_totals(addr, active, kind, SM90) == plain
    assert plain.requests == 39


def test_totals_add_up_and_keep_the_worst_degree() -> None:
    a = Totals(1, 2, 1, 2, 2, 1, 1)
    b = Totals(3, 3, 3, 1, 3, 0, 3)
    assert a + b == Totals(4, 5, 4, 2, 5, 1, 4)
    assert (a + b).excess_wavefronts == 1 and not (a + b).conflict_free


def test_totals_times_n_is_n_copies_added() -> None:
    one = Totals(
        requests=3, wavefronts=11, ideal_wavefronts=6, max_ways=4, cycles=13,
        conflicted_requests=2, phases=6,
    )  # fmt: skip
    for n in (1, 2, 7):
        added = one
        for _ in range(n - 1):
            added = added + one
        assert one.times(n) == added


def test_the_source_pages_figures_are_summed_with_the_row_weights() -> None:
    # request 0: a whole warp's LDS.64, lanes 2k and 2k+1 on double idx[k] = 0, 16, 1..14:
    # one merged phase, 2-way (shmem: 2 wavefronts, ideal 1); the Source page counts its
    # half-warps, 2 + 1 = 3, ideal min(256 / 128, 3) = 2. Request 1: lane n on double n:
    # half-warps, no conflict, 2 and 2 on both pages
    lanes = np.arange(32, dtype=np.int64)
    idx = np.array([0, 16, *range(1, 15)], dtype=np.int64)
    addr = np.stack([8 * idx[lanes // 2], 8 * lanes])
    stats = request_stats(addr, np.ones(addr.shape, dtype=bool), AccessKind("load", 8), SM90)
    plain = stats_totals(stats)
    assert (plain.wavefronts, plain.source_extra) == (4, 1)
    assert (plain.ideal_wavefronts, plain.source_ideal_extra) == (3, 1)
    # the merged request standing for 6 requests (a fold, a whole grid): 6 more of each
    weighted = stats_totals(stats, np.array([6, 1], dtype=np.int64))
    assert (weighted.source_extra, weighted.source_ideal_extra) == (6, 6)
    assert (weighted + weighted).source_ideal_extra == weighted.times(2).source_ideal_extra == 12
