"""The per-warp OR (``distinct_rows.warp_or``): the one place a value is ORed over a warp's
threads, for a request's taint, a decision's taint and a convergence barrier's lanes.

Each case is checked against a plain loop over the threads, on each of the function's
paths: every lane of whole warps (in one run or apart), one warp, warps in part, no thread;
one value per thread or one for all; a taint byte and 32- and 64-bit lane masks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shmem_cli.trace.distinct_rows import WarpOr, warp_or
from shmem_cli.trace.emulator.sync.convergence_state import Convergence


def by_hand(ids: list[int], ws: int, values: list[int]) -> dict[int, tuple[int, int]]:
    """warp -> (the OR of its threads' values, how many threads)."""
    out: dict[int, tuple[int, int]] = {}
    for t, v in zip(ids, values, strict=True):
        acc, count = out.get(t // ws, (0, 0))
        out[t // ws] = (acc | v, count + 1)
    return out


def as_dict(ids: list[int], ws: int, got: WarpOr) -> dict[int, tuple[int, int]]:
    """What ``warp_or`` gave, as :func:`by_hand` writes it (each thread's ``row`` must name
    its own warp)."""
    warps, ors, row = got.warps, got.ors, got.row
    assert len(warps) == len(ors) and len(row) == len(ids)
    assert warps.tolist() == sorted(set(warps.tolist()))
    assert [int(warps[r]) for r in row] == [t // ws for t in ids]
    runs = np.bincount(row, minlength=len(warps))
    return {int(w): (int(o), int(r)) for w, o, r in zip(warps, ors, runs, strict=True)}


SETS = {
    "whole warps": list(range(128)),
    "whole warps apart": [*range(32), *range(64, 96)],
    "two warps' count of threads in three warps": [*range(16), *range(32, 64), *range(64, 80)],
    "the second warp whole": list(range(32, 64)),
    "one warp in part": [33, 40, 41, 63],
    "warps in part": [0, 1, 31, 64, 65, 96, 127],
    "a warp whole beside one in part": [*range(32), 40],
    "no thread": [],
}


@pytest.mark.parametrize("name", sorted(SETS))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64])
def test_each_warp_gets_the_or_of_its_threads_values(name: str, dtype: Any) -> None:
    ids = SETS[name]
    rng = np.random.default_rng(len(ids))
    top = int(np.iinfo(dtype).max)
    values = [int(v) for v in rng.integers(0, top, size=len(ids), dtype=np.uint64, endpoint=True)]
    got = warp_or(np.array(ids, dtype=np.intp), 32, np.array(values, dtype=dtype))
    assert got.ors.dtype == dtype
    assert as_dict(ids, 32, got) == by_hand(ids, 32, values)


@pytest.mark.parametrize("name", sorted(SETS))
def test_one_value_for_all_threads_is_each_warps(name: str) -> None:
    ids = SETS[name]
    got = warp_or(np.array(ids, dtype=np.intp), 32, np.uint8(5))
    assert got.ors.dtype == np.uint8
    assert as_dict(ids, 32, got) == by_hand(ids, 32, [5] * len(ids))


def test_a_single_bit_in_each_lane_of_64_lane_warps_fills_the_mask() -> None:
    ids = np.arange(128, dtype=np.intp)
    bits = np.left_shift(np.uint64(1), (ids % 64).astype(np.uint64))
    got = warp_or(ids, 64, bits)
    assert got.warps.tolist() == [0, 1]
    assert got.ors.tolist() == [2**64 - 1, 2**64 - 1]
    assert got.row.tolist() == [0] * 64 + [1] * 64


def test_a_convergence_barriers_lanes_come_from_it() -> None:
    """``Convergence.warp_lanes``: each warp's lanes among the threads, as a mask."""
    c = Convergence(threads=96, warp_size=32)
    ids = np.array([0, 5, 40, 41, 95], dtype=np.intp)
    warps, lanes, inv = c.warp_lanes(ids)
    assert warps.tolist() == [0, 1, 2]
    assert lanes.tolist() == [(1 << 0) | (1 << 5), (1 << 8) | (1 << 9), 1 << 31]
    assert inv.tolist() == [0, 0, 1, 1, 2]
