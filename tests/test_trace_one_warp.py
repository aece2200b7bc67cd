"""One warp stepping alone (tests/data/trace/onewarp: the project's own naive flash attention,
one warp a block): the emulator's shortcuts for a warp's step give what the general paths give.

A plain FFMA's float32 bits come from one cast where no lane's float64 sum is a NaN, a
possible float32 tie or below the smallest normal float32 (``floating._plain_bits``), and a
warp's one request is found again by its row's hash without the lists of a batch's rows
(``DistinctRows.add_row``). The kernel's stores are counted by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from shmem_cli.trace import distinct_rows as rows
from shmem_cli.trace.emulator.decode import decode_function
from shmem_cli.trace.emulator.ops import floating
from shmem_cli.trace.emulator.state import Block, Launch

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import traced
from .test_trace_ops import _program

CUBIN = TRACE_DATA / "onewarp" / "onewarp.sm_90.cubin"
_U = np.uint32
SPECIAL = np.array(
    [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FFFFFFF, 1, 0x00800000, 0x80000001,
     0x3F800000, 0x7F7FFFFF, 0x33800000, 0x00000010, 0x807FFFFF],
    dtype=_U,
)  # fmt: skip


def _exact(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once (TwoSum of the exact product and c), NaNs canonical."""
    f = [x.view(np.float32).astype(np.float64) for x in (a, b, c)]
    with np.errstate(invalid="ignore"):
        p = f[0] * f[1]
        r = p + f[2]
    exact = floating.round_exact_f32(*floating.two_sum(p, f[2]), "RN", False)
    return np.where(np.isnan(r), floating.NAN32, exact).astype(_U)


def _plain(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray | None:
    with np.errstate(invalid="ignore"):
        r = np.multiply(a.view(np.float32), b.view(np.float32), dtype=np.float64)
        r = r + c.view(np.float32)
    return floating._plain_bits(r)


def test_a_plain_ffma_cast_once_is_the_exact_rounding_or_declined() -> None:
    rng = np.random.default_rng(7)
    cast = declined = 0
    for k in range(1200):
        if k % 4 == 0:  # any bits
            a, b, c = (rng.integers(0, 2**32, 32, dtype=np.uint64).astype(_U) for _ in range(3))
        elif k % 4 == 1:  # zeros, infinities, NaNs, denormals, the largest float
            a, b, c = (rng.choice(SPECIAL, 32) for _ in range(3))
        elif k % 4 == 2:  # everyday numbers
            a, b, c = (rng.standard_normal(32).astype(np.float32).view(_U) for _ in range(3))
        else:  # integers' products plus quarters: float32 ties where the product is large
            a, b = (rng.integers(1, 1 << 13, 32).astype(np.float32).view(_U) for _ in range(2))
            c = (rng.integers(-4, 4, 32) * np.float32(0.25)).astype(np.float32).view(_U)
        with np.errstate(over="ignore"):  # (the cast to float32 of sums past its largest)
            got = _plain(a, b, c)
        if got is None:
            declined += 1
            continue
        cast += 1
        assert np.array_equal(got, _exact(a, b, c)), k
    assert cast > 300 and declined > 300  # both ways were taken


def test_a_tie_a_tiny_sum_and_a_nan_are_declined() -> None:
    tie = np.float64(1 + 2.0**-24)  # halfway between 1 and the next float32
    for r in (tie, np.float64(2.0**-130), np.float64(np.nan)):
        assert floating._plain_bits(np.array([1.0, r, 2.0])) is None
    assert floating._plain_bits(np.array([1.0, 0.0, -0.0, np.inf])) is not None


def test_a_warps_one_row_has_the_hash_of_a_batchs_row() -> None:
    addr = (np.arange(32, dtype=np.int64) * 132).reshape(1, 32)
    part = np.ones((1, 32), dtype=bool)
    part[0, 7] = False
    for active in (rows.every_lane(32), np.ones((1, 32), dtype=bool), part):
        assert rows._key(addr, active) == int(rows._hash(addr, active, None, None)[0])


def test_a_row_found_again_keeps_its_number() -> None:
    rng = np.random.default_rng(3)
    pool = rng.integers(0, 1 << 16, (5, 32)).astype(np.int64) * 4
    every = rows.every_lane(32)
    kept = rows.DistinctRows(32)
    first = kept.add(pool, np.ones((5, 32), dtype=bool)).tolist()  # a batch's rows
    picks = rng.integers(0, 5, 40).tolist()
    assert [kept.add_row(pool[p : p + 1], every) for p in picks] == [first[p] for p in picks]
    assert kept.n == 5
    other = pool[:1] + 8  # a row not kept: a new number, then found again
    assert kept.add_row(other, every) == kept.add_row(other, every) == 5
    partial = np.ones((1, 32), dtype=bool)
    partial[0, 3] = False  # the same addresses with a lane off: another row
    assert kept.add_row(pool[:1], partial) == 6


def test_a_call_of_rows_all_alike_numbers_them_as_one_row_at_a_time() -> None:
    """A call whose rows are all the first (a wgmma's warps: zero addresses, every lane on)
    looks one row up; the numbers and the rows kept are those of its rows added one by one,
    where the row is new, kept before, or alike in addresses but not in active lanes."""
    rng = np.random.default_rng(4)
    pool = rng.integers(0, 1 << 16, (3, 32)).astype(np.int64) * 4
    on, part = np.ones((4, 32), dtype=bool), np.ones((4, 32), dtype=bool)
    part[2, 5] = False
    calls = [(np.zeros((4, 32), np.int64), on), (np.repeat(pool[:1], 4, axis=0), on)]
    calls += [(np.zeros((4, 32), np.int64), on), (np.repeat(pool[1:2], 4, axis=0), part)]
    together, alone = rows.DistinctRows(32), rows.DistinctRows(32)
    together.add(pool, np.ones((3, 32), dtype=bool))
    alone.add(pool, np.ones((3, 32), dtype=bool))
    for addr, active in calls:
        got = together.add(addr, active).tolist()
        assert got == [alone.add_row(addr[k : k + 1], active[k : k + 1]) for k in range(4)]
    assert together.n == alone.n == 5  # the pool's 3, the zeros, pool[1] with a lane off
    assert (together.addr[:5] == alone.addr[:5]).all()
    assert (together.active[:5] == alone.active[:5]).all()


@pytest.mark.slow
@needs_nvdisasm
def test_the_staged_keys_and_values_are_stored_32_ways() -> None:
    # two tiles of 32 keys (n = 64): each thread stores its row of K and of V, word x of row t
    # at 128 t + 4 x bytes, so a warp's 32 lanes fall on one bank (32 wavefronts a request);
    # 32 words of K and 32 of V a tile; Q's row once, as 8 STS.128 (8 lanes a phase, 4 phases
    # of 8 lanes on the same 4 banks: 32 wavefronts)
    kernel = traced(CUBIN, "onewarp_attn", 32, (1, 1, 1), ("n=64", "scale=0.17"))
    staged = [a for a in kernel.accesses if a.site.line in (29, 30)]
    assert len(staged) == 64
    assert {(a.cost.requests, a.cost.wavefronts) for a in staged} == {(2, 64)}
    q = [a for a in kernel.accesses if a.site.line == 22]
    assert len(q) == 8 and {(a.cost.requests, a.cost.wavefronts) for a in q} == {(1, 32)}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (infinities' sums on lanes not zeros)
@pytest.mark.parametrize("text", ["FMNMX R3, R1, R2, PT", "FMNMX R2, R1, -R2, !PT"])
def test_fmnmx_of_pt_gives_the_minimum_or_maximum_rule_bit_for_bit(text: str) -> None:
    """FMNMX with PT or !PT (the running maximum of a softmax) takes np.fmin or np.fmax and
    orders the zeros apart: on zeros of both signs, infinities, NaNs and numbers it writes
    what :func:`floating.minimum_maximum` (the H200's rule, tests/data/trace/probes) gives,
    and the OR of its operands' taint."""
    fn = _program(text)
    step = decode_function(fn)[0]
    rng = np.random.default_rng(11)
    for k in range(300):
        blk = Block(Launch(block=(64, 1, 1), static_smem=256))
        pool = SPECIAL[:2] if k % 3 == 0 else SPECIAL
        x, y = (rng.choice(pool, 64) for _ in range(2))
        blk.r[1], blk.r[2] = x, y
        blk.tr[1], blk.tr[2] = rng.integers(0, 3, 64), rng.integers(0, 3, 64)
        taint = blk.tr[1] | blk.tr[2]
        read_y = y ^ _U(0x80000000) if "-R2" in text else y
        smaller = "!PT" not in text
        fx, fy = x.view(np.float32), read_y.view(np.float32)
        want = floating.minimum_maximum(fx, fy, np.array(smaller)).astype(np.float32).view(_U)
        step(blk, slice(None))
        d = int(text.split()[1][1:-1])
        assert (blk.r[d] == want).all() and (blk.tr[d] == taint).all(), k
