"""Guards on the block index proven alike over the whole grid (issue 30,
shmem_cli/trace/emulator/alike/): a grid whose every block takes the first block's guard
outcomes is traced once; where a guard's outcome changes along an axis (an edge block),
the blocks before the change are counted from the first and the rest run; a sum that wraps
past 32 bits or a guard on global data runs every block.

Expected totals come from a plain-Python model of each kernel's C source (one thread at a
time, the bank rule of tests/reference.py), never from the trace: a wrong proof would
count the first block's requests for blocks that make others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .reference import request_cost
from .test_trace_grid import GRID, classes_of, every_block, traced

ALIKE = TRACE_DATA / "alike" / "alike.sm_90.cubin"
N = 256  # threads of an al_* block (alike.cu)

#: one shared instruction of one warp: (op, each lane's byte address or None)
Request = tuple[str, list[int | None]]


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def _warps(lane_address: Callable[[int], int | None], threads: int) -> Iterator[list[int | None]]:
    for w in range(0, threads, 32):
        yield [lane_address(t) for t in range(w, w + 32)]


def _al_requests(kernel: str, block: int, **args: int) -> Iterator[Request]:
    """The shared requests of one block of an al_* kernel, from alike.cu's source."""
    b = block
    yield from (("store", a) for a in _warps(lambda t: 4 * t, N))  # tile[t] = 0
    if kernel == "al_wrap":
        guard = [_int32(b * 0x40000000 + t) >= 0 for t in range(N)]
        stride = 4
    elif kernel == "al_below":
        guard = [_int32(b - args["shift"]) < args["limit"]] * N
        stride = 2
    else:  # al_loaded
        guard = [args["flags"][b] > 0] * N
        stride = 8
    stores = _warps(lambda t: 4 * ((t * stride) % N) if guard[t] else None, N)
    yield from (("store", a) for a in stores)
    yield from (("load", a) for a in _warps(lambda t: 4 * t, N))  # tile[t]


def _transpose_requests(bx: int, by: int, width: int, height: int) -> Iterator[Request]:
    """The shared requests of block (bx, by) of ev_transpose (ev_grid.cu, 32x8 threads)."""
    for ty in range(8):
        for j in range(0, 32, 8):
            yield (
                "store",
                [
                    4 * ((ty + j) * 32 + tx)
                    if bx * 32 + tx < width and by * 32 + ty + j < height
                    else None
                    for tx in range(32)
                ],
            )
    for ty in range(8):
        for j in range(0, 32, 8):
            yield (
                "load",
                [
                    4 * (tx * 32 + ty + j)
                    if by * 32 + tx < height and bx * 32 + ty + j < width
                    else None
                    for tx in range(32)
                ],
            )


def _totals(requests: Iterator[Request]) -> dict[str, tuple[int, int]]:
    """(requests, wavefronts) by op: a warp with an active lane is a request."""
    out = {"load": [0, 0], "store": [0, 0]}
    for op, addr in requests:
        if any(a is not None for a in addr):
            out[op][0] += 1
            out[op][1] += request_cost(addr, op, 4, "", 0).wavefronts
    return {op: (r, w) for op, (r, w) in out.items()}


def _traced_totals(kernel: object) -> dict[str, tuple[int, int]]:
    totals = kernel.totals  # type: ignore[attr-defined]
    return {op: (totals[op].requests, totals[op].wavefronts) for op in ("load", "store")}


def _al_args(kernel: str, args: dict[str, int]) -> tuple[str, ...]:
    return tuple(f"{k}={v}" for k, v in args.items() if k != "flags")


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "blocks", "args", "run"),
    [
        # blocks 0 and 1: i stays non-negative; blocks 2 and 3 wrap negative (the 32-bit
        # window): two classes, the wrapped blocks one of them
        ("al_wrap", 2, {}, 1),
        ("al_wrap", 4, {}, 2),
        # j = b - 1 is -1 in block 0 (0xffffffff as bits): j < 100 up to block 100, so
        # blocks 0..100 are one class and block 101 (j = 100) another
        ("al_below", 101, {"shift": 1, "limit": 100}, 1),
        ("al_below", 102, {"shift": 1, "limit": 100}, 2),
        # j = b - 40 < 0 up to block 39: blocks 40..63 the second class
        ("al_below", 64, {"shift": 40, "limit": 0}, 2),
    ],
)
def test_a_guard_on_the_block_index_is_alike_only_where_every_block_agrees(
    kernel: str, blocks: int, args: dict[str, int], run: int
) -> None:
    traced_ = traced(ALIKE, kernel, N, (blocks, 1, 1), _al_args(kernel, args))
    cov = traced_.launch.coverage
    assert cov is not None and cov.run == run
    want = _totals(r for b in range(blocks) for r in _al_requests(kernel, b, **args))
    assert _traced_totals(traced_) == want
    assert cov.mode == "alike" and "evaluated for every block" in (cov.proof or "")
    if run > 1:
        assert f"fall into {run} classes of identical behaviour" in (cov.proof or "")


@needs_nvdisasm
def test_a_guard_on_global_data_is_not_proven_by_the_block_index(tmp_path: Path) -> None:
    flags = [1, 0, 0, 1]
    data = tmp_path / "flags.bin"
    data.write_bytes(b"".join(f.to_bytes(4, "little") for f in flags))
    traced_ = traced(ALIKE, "al_loaded", N, (4, 1, 1), (f"1=@{data}",))
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "whole" and cov.run == 4
    want = _totals(r for b in range(4) for r in _al_requests("al_loaded", b, flags=flags))
    assert _traced_totals(traced_) == want


@needs_nvdisasm
@pytest.mark.parametrize(
    ("width", "height", "grid", "run"),
    [
        (256, 256, (8, 8, 1), 1),  # every block inside: its guards hold everywhere
        pytest.param(256, 192, (8, 6, 1), 1, marks=pytest.mark.slow),
        (250, 256, (8, 8, 1), 2),  # the last column of blocks is cut by width: a class
        pytest.param(256, 250, (8, 8, 1), 2, marks=pytest.mark.slow),  # the last row by height
        (250, 250, (8, 8, 1), 4),  # both: inside, last column, last row, the corner
        pytest.param(100, 64, (4, 2, 1), 2, marks=pytest.mark.slow),
    ],
)
def test_the_transposes_edge_guards(
    width: int, height: int, grid: tuple[int, int, int], run: int
) -> None:
    args = (f"2={width}", f"3={height}")  # width, height
    traced_ = traced(GRID, "ev_transpose", (32, 8, 1), grid, args)
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == run
    want = _totals(
        r
        for by in range(grid[1])
        for bx in range(grid[0])
        for r in _transpose_requests(bx, by, width, height)
    )
    assert _traced_totals(traced_) == want
    ran = every_block(GRID, "ev_transpose", (32, 8, 1), grid, args)
    assert _traced_totals(ran) == want
    assert traced_.instructions_executed == ran.instructions_executed
    for a, b in zip(traced_.accesses, ran.accesses, strict=True):  # instruction by instruction
        assert (a.site.pc, a.cost.totals, a.cost.lane_accesses, a.predicated_off) == (
            b.site.pc,
            b.cost.totals,
            b.cost.lane_accesses,
            b.predicated_off,
        )
        assert a.data_dependent_requests == b.data_dependent_requests


@needs_nvdisasm
def test_a_trip_count_from_a_remainder_of_the_block_index_makes_classes() -> None:
    """differ.cu: block b loops b % 32 + 1 times: its 256 blocks fall into 32 classes (the
    remainder evaluated for every block), one block of each traced. Each iteration reads
    tile[(t * 3 + i) & 255] and tile[(t + i * 8) & 255], one wavefront
    each (stride 3 and 1 words), after one store of tile[t]: 8 warps a block."""
    differ = TRACE_DATA / "cluster" / "differ.sm_90.cubin"
    kernel = traced(differ, "differ", N, (256, 1, 1), ("2=1048576",))
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 32
    assert "the 256 blocks fall into 32 classes" in (cov.proof or "")
    loads = sum(8 * 2 * (b % 32 + 1) for b in range(256))
    assert _traced_totals(kernel) == {"load": (loads, loads), "store": (256 * 8, 256 * 8)}


def _guarded_stores(guard: Callable[[int], bool]) -> Iterator[Request]:
    """tile[t] = 0, then tile[(t * 2) % N] = 1 where ``guard(t)``, then a read of tile[t]:
    the shared requests of one al_diag or al_unsigned block (alike.cu)."""
    yield from (("store", a) for a in _warps(lambda t: 4 * t, N))
    yield from (("store", a) for a in _warps(lambda t: 4 * ((2 * t) % N) if guard(t) else None, N))
    yield from (("load", a) for a in _warps(lambda t: 4 * t, N))


@needs_nvdisasm
def test_a_guard_on_two_axes_at_once_makes_two_classes() -> None:
    # x + y < 3 holds on a diagonal corner of the grid: those blocks and the others
    traced_ = traced(ALIKE, "al_diag", N, (4, 4, 1), ("limit=3",))
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 2
    want = _totals(
        r
        for y in range(4)
        for x in range(4)
        for r in _guarded_stores(lambda t, x=x, y=y: x + y < 3)
    )
    assert _traced_totals(traced_) == want


@needs_nvdisasm
@pytest.mark.parametrize(("n", "classes"), [(1024, 1), (1000, 2), (700, 3), (5, 2)])
def test_an_unsigned_bounds_check_makes_a_class_of_each_cut(n: int, classes: int) -> None:
    # blocks wholly inside, the one cut, those wholly outside (n = 5: block 0 alone cut)
    traced_ = traced(ALIKE, "al_unsigned", N, (4, 1, 1), (f"n={n}",))
    cov = traced_.launch.coverage
    assert cov is not None and classes_of(cov) == classes and cov.mode == "alike"
    want = _totals(r for b in range(4) for r in _guarded_stores(lambda t, b=b: b * N + t < n))
    assert _traced_totals(traced_) == want
