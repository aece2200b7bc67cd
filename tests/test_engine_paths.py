"""The engine's two methods against each other and against the reference model.

``request_stats(..., method="unit")`` counts distinct *units* per bank set;
``method="word"`` applies the rule literally, word by word; ``tests/reference.py`` does it for one
request at a time in plain Python. Random batches of requests (seeded, so the
test is repeatable) must give the same numbers on all three, for every kind of
access, with and without inactive lanes, pair-merged 8/16-byte loads and
warp-uniform atomics.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from shmem_cli.hardware.arch import SM90, ArchProfile
from shmem_cli.hardware.engine import AccessKind, RequestStats, explain_request, request_stats

from .reference import request_cost

I64 = npt.NDArray[np.int64]
B8 = npt.NDArray[np.bool_]

KINDS = [
    AccessKind("load", 1),
    AccessKind("store", 2),
    AccessKind("load", 4),
    AccessKind("store", 4),
    AccessKind("load", 8),
    AccessKind("store", 8),
    AccessKind("load", 16),
    AccessKind("store", 16),
    AccessKind("atomic", 4, atomic="inc"),
    AccessKind("atomic", 4, atomic="add"),
    AccessKind("atomic", 4, atomic="exch"),
    AccessKind("atomic", 4, atomic="cas"),
    AccessKind("atomic", 8, atomic="cas"),
    AccessKind("atomic", 4, atomic="cas_spin"),
    AccessKind("atomic", 8, atomic="cas_spin"),
    AccessKind("atomic", 8, atomic="declined"),
    AccessKind("ldmatrix", 16, matrices=1),
    AccessKind("ldmatrix", 16, matrices=2),
    AccessKind("stmatrix", 16, matrices=4),
]
ROWS = 400


def random_batch(
    kind: AccessKind, seed: int, aligned: bool = True, arch: ArchProfile = SM90
) -> tuple[I64, B8]:
    """Requests mixing random, paired, uniform and strided lanes, some lanes inactive."""
    width = arch.warp_size
    rng = np.random.default_rng(seed)
    unit = kind.size
    # few distinct addresses per row so that broadcasts and conflicts are frequent
    span = int(rng.choice([8, 64, 512]))
    addr = rng.integers(0, span, size=(ROWS, width)) * unit
    style = rng.integers(0, 5, size=ROWS)
    lanes = np.arange(width)
    addr[style == 1] = addr[style == 1][:, lanes & ~1]  # lanes n and n^1 equal
    addr[style == 2] = addr[style == 2][:, lanes & ~2]  # lanes n and n^2 equal
    addr[style == 3] = addr[style == 3][:, :1]  # warp-uniform
    addr[style == 4] = (lanes * rng.integers(1, 40, size=(int((style == 4).sum()), 1))) * unit
    if not aligned:
        addr += rng.integers(0, 4, size=addr.shape)
    mask_style = rng.integers(0, 4, size=ROWS)
    active = np.ones((ROWS, width), dtype=bool)
    active[mask_style == 1] = rng.random((int((mask_style == 1).sum()), width)) < 0.6
    active[mask_style == 2] = False
    active[mask_style == 3] = lanes < rng.integers(1, width, size=(int((mask_style == 3).sum()), 1))
    if kind.is_matrix:  # the predicate of a .sync.aligned instruction is warp-uniform
        active[mask_style != 2] = True
        active &= kind.address_lanes(arch)  # as the iteration space hands them over
    # inactive lanes may hold any value (out-of-range indices of lanes a `when` switched off)
    addr = np.where(active, addr, rng.integers(-(1 << 40), 1 << 40, size=addr.shape))
    return addr, active


def fields(stats: RequestStats) -> list[tuple[int, int, int, int]]:
    return list(
        zip(
            *(a.tolist() for a in (stats.wavefronts, stats.ideal, stats.ways, stats.cycles)),
            strict=True,
        )
    )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k.op}{k.size}-{k.atomic}-{k.matrices}")
def test_unit_method_equals_word_method_and_reference(kind: AccessKind, seed: int) -> None:
    addr, active = random_batch(kind, seed)
    literal = request_stats(addr, active, kind, SM90, method="word")
    fast = request_stats(addr, active, kind, SM90, method="unit")  # raises if not covered
    assert fields(fast) == fields(literal)
    assert fields(request_stats(addr, active, kind, SM90)) == fields(fast)
    for row in range(ROWS):
        lanes = [int(a) if on else None for a, on in zip(addr[row], active[row], strict=True)]
        ref = request_cost(lanes, kind.op, kind.size, kind.atomic, kind.matrices)
        assert (ref.wavefronts, ref.ideal, ref.ways) == fields(fast)[row][:3], (row, lanes)


# a profile with the H200's banks and phases but warps of 64 lanes: every number the engine
# uses comes from the profile, so both methods must still agree, with each other and with
# the reference model (which takes the lane count from the request it is given)
WIDE = ArchProfile(name="synthetic 64-lane", measured_on="nothing (a test profile)", warp_size=64)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k.op}{k.size}-{k.atomic}-{k.matrices}")
def test_a_64_lane_profile_gets_the_same_answer_from_both_methods(kind: AccessKind) -> None:
    addr, active = random_batch(kind, 5, arch=WIDE)
    literal = request_stats(addr, active, kind, WIDE, method="word")
    fast = request_stats(addr, active, kind, WIDE, method="unit")
    assert fields(fast) == fields(literal)
    for row in range(ROWS):
        lanes = [int(a) if on else None for a, on in zip(addr[row], active[row], strict=True)]
        ref = request_cost(lanes, kind.op, kind.size, kind.atomic, kind.matrices)
        assert (ref.wavefronts, ref.ideal, ref.ways) == fields(fast)[row][:3], (row, lanes)
    if kind.op in ("load", "store") and kind.size == 16:
        # 64 lanes of 16 bytes: eight quarter-warp-sized phases, as 128-byte phases give
        full = request_stats(16 * np.arange(64)[None, :], np.ones((1, 64), bool), kind, WIDE)
        assert fields(full)[0][:2] == (8, 8)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k.op}{k.size}-{k.atomic}-{k.matrices}")
def test_explain_request_counts_as_request_stats(kind: AccessKind) -> None:
    addr, active = random_batch(kind, 11)
    stats = fields(request_stats(addr, active, kind, SM90))
    for row in range(0, ROWS, 7):
        lanes = [int(a) if on else None for a, on in zip(addr[row], active[row], strict=True)]
        detail = explain_request(lanes, kind, SM90)
        phases_used = len({w.phase for w in detail.wavefronts})
        assert len(detail.wavefronts) == stats[row][0], (row, lanes)
        # the ideal: the phases used, at most the active lanes packed into 128-byte
        # wavefronts (not for ldmatrix/stmatrix), each pass of a compare-and-swap alike
        passes = SM90.atomic_rule(kind.atomic).passes if kind.is_atomic else 1
        packed = -(-sum(x is not None for x in lanes) * max(kind.size, 4) // 128)
        if kind.is_matrix:
            packed = phases_used
        assert stats[row][1] == passes * min(phases_used // passes, packed), (row, lanes)


@pytest.mark.parametrize("kind", [k for k in KINDS if k.size > 1], ids=lambda k: f"{k.op}{k.size}")
def test_misaligned_addresses_take_the_word_method(kind: AccessKind) -> None:
    addr, active = random_batch(kind, 7, aligned=False)
    assert fields(request_stats(addr, active, kind, SM90)) == fields(
        request_stats(addr, active, kind, SM90, method="word")
    )


def test_engine_refuses_ldmatrix_lanes_that_give_no_address() -> None:
    kind = AccessKind("ldmatrix", 16, matrices=2)
    addr = (np.arange(32) * 16)[None, :]
    with pytest.raises(ValueError, match=r"lanes 0\.\.15 only; AND the active mask"):
        request_stats(addr, np.ones((1, 32), dtype=bool), kind, SM90)
    with pytest.raises(ValueError, match="method must be one of auto, unit, word"):
        request_stats(addr, np.ones((1, 32), dtype=bool), kind, SM90, method="slot")  # type: ignore[arg-type]
    masked = request_stats(addr, kind.address_lanes(SM90)[None, :], kind, SM90)
    assert fields(masked) == [(2, 2, 1, 2)]


def test_unit_method_refuses_what_it_does_not_cover() -> None:
    full = np.ones((1, 32), dtype=bool)
    odd_word = np.full((1, 32), 4)  # a 16-byte lane starting at word 1
    negative = np.full((1, 32), -16)
    for addr in (odd_word, negative):
        with pytest.raises(ValueError, match="unit method needs addresses aligned"):
            request_stats(addr, full, AccessKind("load", 16), SM90, method="unit")
    # the word method: words 1..4 for every lane, pair-merged into two half-warp phases
    assert fields(request_stats(odd_word, full, AccessKind("load", 16), SM90)) == [(2, 2, 1, 2)]


def test_hand_counted_requests() -> None:
    lanes = np.arange(32)
    full = np.ones((1, 32), dtype=bool)
    # float4 column reads 128 bytes apart: every quarter-warp piles 8 lanes on banks 0-3
    stats = request_stats((lanes * 128)[None, :], full, AccessKind("load", 16), SM90)
    assert fields(stats) == [(32, 4, 8, 32)]
    # one 4-byte word for the whole warp: a broadcast, one wavefront
    stats = request_stats(np.full((1, 32), 256), full, AccessKind("load", 4), SM90)
    assert fields(stats) == [(1, 1, 1, 1)]
    # ATOMS.ADD on one address is reduced in one wavefront; atomicExch is 32-way
    stats = request_stats(np.full((1, 32), 256), full, AccessKind("atomic", 4, atomic="add"), SM90)
    assert fields(stats) == [(1, 1, 1, 1)]
    stats = request_stats(np.full((1, 32), 256), full, AccessKind("atomic", 4, atomic="exch"), SM90)
    assert fields(stats) == [(32, 1, 32, 32)]
    # LDS.64, lanes 0-3 and 16-19 on doubles 0, 16, 0, 16 (pairs at distance 2, doubles 0
    # and 16 on one bank): one merged phase, 2-way, with 8 lanes on as with all 32 (the
    # H200's per-op counter: 2 for pairs3's p8_c01_d2real, whose Source page counts 4)
    eight = np.array([[16 * 8 * (n & 1) for n in range(32)]])
    some = ((lanes < 4) | ((lanes >= 16) & (lanes < 20)))[None, :]
    assert request_stats(eight, some, AccessKind("load", 8), SM90).wavefronts.tolist() == [2]
    assert request_stats(eight, full, AccessKind("load", 8), SM90).wavefronts.tolist() == [2]


def test_a_too_large_access_is_refused_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    from shmem_cli.analysis.analyze import analyze
    from shmem_cli.plumbing.errors import ShmemError
    from shmem_cli.spec.space import MAX_LANE_ACCESSES, Space

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("a batch was built")

    monkeypatch.setattr(Space, "batch", no_work)
    iterations = MAX_LANE_ACCESSES // 1024 + 1  # one iteration over the limit, for 1024 threads
    spec = {
        "block": [1024],
        "arrays": {"a": {"dtype": "float32", "shape": [1024]}},
        "accesses": [
            {"name": "small", "array": "a", "index": ["tid"], "loop": {"k": "0..7"}},
            {"name": "huge", "array": "a", "index": ["tid"], "loop": {"k": f"0..{iterations - 1}"}},
        ],
    }
    with pytest.raises(ShmemError, match=r"'huge' covers .* the limit is 2147483648"):
        analyze(spec)


def test_trace_records_reach_the_engine_through_the_address_lanes() -> None:
    from shmem_cli.hardware.engine import AccessKind
    from shmem_cli.trace.requests import InstructionRecords

    records = InstructionRecords(
        index=0, instruction=None, kind=AccessKind("ldmatrix", 16, matrices=1)
    )  # type: ignore[arg-type]
    lanes = np.arange(32, dtype=np.int64)
    # lanes 0..7 give rows 128 bytes apart (all on banks 0-3: 8-way); lanes 8..31 carry junk
    addr = np.where(lanes < 8, lanes * 128, 4 * lanes)[None, :]
    zero = np.zeros(1, dtype=np.int64)
    records.add(addr, np.ones((1, 32), dtype=bool), zero, zero, np.zeros(1, dtype=np.uint8))
    assert fields(records.stats(SM90)) == [(8, 1, 8, 8)]
