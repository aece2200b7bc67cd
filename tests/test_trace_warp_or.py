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


@pytest.mark.parametrize(
    "ids", [list(range(32, 64)), [33, 40, 63], [0], list(range(0, 64)), [3, 40, 41]]
)
@pytest.mark.parametrize("per_thread", [True, False])
def test_warp_rows_match_a_loop_over_the_threads(ids: list[int], per_thread: bool) -> None:
    """The request rows of an execution (``warp_rows``: one warp's with its warp and taint
    as ints, several warps' as arrays) against rows built lane by lane: each warp's lane
    addresses (0 where a lane did not run), its active lanes and the OR of its taint."""
    from shmem_cli.trace.distinct_rows import warp_rows

    ws = 32
    tids = np.array(ids, dtype=np.intp)
    addr = np.array([1000 + 8 * t for t in ids], dtype=np.int64)
    taints = [1 << (t % 5) for t in ids] if per_thread else [2] * len(ids)
    taint = np.array(taints, dtype=np.uint8) if per_thread else np.asarray(2, dtype=np.uint8)
    uw, rows, act, t, src, nbytes = warp_rows(tids, ws, addr, taint, None, None)
    want: dict[int, tuple[list[int], list[bool], int]] = {}
    for tid, v in zip(ids, taints, strict=True):
        a, on, acc = want.setdefault(tid // ws, ([0] * ws, [False] * ws, 0))
        a[tid % ws], on[tid % ws] = 1000 + 8 * tid, True
        want[tid // ws] = (a, on, acc | v)
    warps = [uw] if isinstance(uw, int) else np.asarray(uw).tolist()
    taint_of = [t] if isinstance(t, int) else np.asarray(t).tolist()
    assert isinstance(uw, int) == (len(want) == 1)  # one warp: ints
    assert warps == sorted(want) and src is None and nbytes is None
    for k, w in enumerate(warps):
        assert rows[k].tolist() == want[w][0]
        assert act[k].tolist() == want[w][1]
        assert taint_of[k] == want[w][2]


def test_distinct_rows_share_a_number_exactly_when_equal() -> None:
    """Calls of one row, of a block's few rows and of many (each grouped its own way),
    with rows repeated within and across calls: two rows share a number exactly when they
    are equal, and the row kept under a number is the row given."""
    from shmem_cli.trace.distinct_rows import DistinctRows

    rng = np.random.default_rng(7)
    pool = rng.integers(0, 64, size=(12, 32), dtype=np.int64) * 4
    lanes = rng.random((12, 32)) < 0.8
    kept = DistinctRows(32)
    seen: dict[bytes, int] = {}
    for size in (1, 1, 5, 8, 64, 1, 65, 200, 3):
        pick = rng.integers(0, 12, size=size)
        addr, active = np.where(lanes[pick], pool[pick], 0), lanes[pick]
        ids = kept.add(addr, active).tolist()
        for k, number in enumerate(ids):
            key = addr[k].tobytes() + active[k].tobytes()
            assert seen.setdefault(key, number) == number
            assert kept.addr[number].tolist() == addr[k].tolist()
            assert kept.active[number].tolist() == active[k].tolist()
    assert len(set(seen.values())) == len(seen) == kept.n


def test_one_rows_key_is_the_wrapping_sum_of_its_lanes() -> None:
    """A row's hash is the sum, modulo 2**64, of each lane's address and active flag times
    that lane's multipliers: the one-row key and the arrays' hash, against Python ints."""
    from shmem_cli.trace.distinct_rows import _MIX, _hash, _key

    rng = np.random.default_rng(11)
    for lanes in (4, 32):
        addr = rng.integers(-(1 << 63), (1 << 63) - 1, size=(1, lanes), dtype=np.int64)
        active = rng.random((1, lanes)) < 0.5
        want = 0
        for i in range(lanes):
            want += (int(addr[0, i]) % (1 << 64)) * int(_MIX[0, i])
            want += int(active[0, i]) * int(_MIX[1, i])
        want %= 1 << 64
        assert _key(addr, active) == want == int(_hash(addr, active, None, None)[0])
