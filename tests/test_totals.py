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
