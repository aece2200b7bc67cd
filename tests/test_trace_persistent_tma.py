"""A persistent tile loop fed by TMA, traced by class (issues 29 and 30,
shmem_cli/trace/emulator/alike/watch.py).

tests/data/trace/persistent/persistent_tma.cu walks tiles as CUTLASS 3.x's persistent GEMMs
do: block b takes tiles b, b + gridDim.x, ... below ntiles, loads each 32 x 32 float tile by
TMA at coordinates made from the tile index, transposes it through shared memory and stores
it by TMA at the same coordinates. Blocks of one trip count differ only in global places,
among them the TMA store's first coordinate, held in the register after its shared source
(``UTMASTG [URa]``: URa the source, URa+1 the column): the proof watched that register as
a shared place, and every block ran alone (12 of 12; 90 of a 4,096^3 GEMM's 132 CTAs were
in no class). Worked out by hand from the source: per tile, 4 warps x 8 column loads of 32
wavefronts (32-way), 4 x 8 row stores of 1 wavefront, one TMA load and one TMA store.
``persistent_tma_odd`` stores an odd block's tile from a second buffer: the store's shared
source depends on the block index, and odd and even blocks never share a class.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shmem_cli.trace.emulator.alike.watch import _registers

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import classes_of, every_block, traced
from .test_trace_ops import _program

CUBIN = TRACE_DATA / "persistent" / "persistent_tma.sm_90a.cubin"
THREADS = 128


def _args(shift: int, ntiles: int) -> tuple[str, ...]:
    wide, high = 32 << shift, 32 * -(-ntiles >> shift)
    tm = f"tensormap:dtype=f32,dims={wide}x{max(high, 32)},box=32x32"
    return (f"0={tm}", f"1={tm}", f"2={shift}", f"3={ntiles}")  # shift, ntiles


def _by_hand(ntiles: int) -> dict[str, tuple[int, int]]:
    """(requests, wavefronts) of each op, from the kernel's source."""
    per = 4 * 8 * ntiles  # 4 warps x 8 rows of the tile each, per tile
    return {"load": (per, 32 * per), "store": (per, per), "tma": (2 * ntiles, 0)}


def _same(kernel: str, blocks: int, shift: int, ntiles: int) -> Any:
    """The launch traced by class, checked against every block run and against the counts
    worked out by hand; returns it."""
    args = _args(shift, ntiles)
    by_class = traced(CUBIN, kernel, THREADS, (blocks, 1, 1), args)
    ran = every_block(CUBIN, kernel, THREADS, (blocks, 1, 1), args)
    assert ran.launch.coverage is not None and ran.launch.coverage.mode == "whole"
    assert by_class.totals == ran.totals
    assert by_class.instructions_executed == ran.instructions_executed
    for a, b in zip(by_class.accesses, ran.accesses, strict=True):
        assert (a.site.pc, a.cost.totals, a.predicated_off) == (
            b.site.pc,
            b.cost.totals,
            b.predicated_off,
        )
    for op, (requests, wavefronts) in _by_hand(ntiles).items():
        got = by_class.totals[op]
        assert (got.requests, got.wavefronts) == (requests, wavefronts), op
    return by_class


@needs_nvdisasm
def test_a_tma_tile_walk_falls_into_one_class_per_trip_count() -> None:
    # 44 tiles over 12 blocks: blocks 0-7 take 4 tiles, 8-11 three; before, all 12 ran
    k = _same("persistent_tma", 12, 3, 44)
    cov = k.launch.coverage
    assert cov is not None and cov.mode == "alike"
    assert classes_of(cov) == 2 and cov.run == 2


@needs_nvdisasm
def test_a_tma_store_whose_shared_source_depends_on_the_block_splits_its_class() -> None:
    # odd and even blocks store from other buffers: 2 trip counts x 2 sources
    k = _same("persistent_tma_odd", 12, 3, 44)
    cov = k.launch.coverage
    assert cov is not None and cov.mode == "alike" and classes_of(cov) == 4


@needs_nvdisasm
@pytest.mark.slow
def test_random_tile_walks_by_class_count_as_every_block() -> None:
    # grids, tile counts and rows drawn at random: the totals are every block's and the
    # hand's, and the classes are the trip counts (odd/even twice as many where they split)
    rng = np.random.default_rng(29)
    for _ in range(6):
        blocks = int(rng.integers(2, 20))
        ntiles = int(rng.integers(blocks, 4 * blocks))
        shift = int(rng.integers(1, 4))
        kernel = "persistent_tma_odd" if rng.random() < 0.5 else "persistent_tma"
        k = _same(kernel, blocks, shift, ntiles)
        odd = kernel == "persistent_tma_odd"
        classes = {(len(range(b, ntiles, blocks)), odd and b & 1) for b in range(blocks)}
        cov = k.launch.coverage
        assert cov is not None and classes_of(cov) == len(classes), (kernel, blocks, ntiles)


def test_only_the_shared_operands_of_tma_and_bulk_copies_are_watched() -> None:
    fn = _program(
        "UTMALDG.2D [UR8], [UR14]\n"
        "UTMASTG.2D [UR16], [UR20]\n"
        "UTMAREDG.2D.ADD [UR24], [UR28]\n"
        "UBLKCP.S.G [UR4], [UR6], UR10\n"
        "UBLKCP.G.S [UR6], [UR4], UR10\n"
        "UBLKRED.G.S.ADD [UR6], [UR4], UR10\n"
        "EXIT"
    )
    got = [_registers(ins) for ins in fn.instructions[:6]]
    assert got == [
        [("UR", 8), ("UR", 9)],  # a load's shared destination and its mbarrier
        [("UR", 16)],  # a store's shared source, not its first coordinate (UR17)
        [("UR", 24)],
        [("UR", 4), ("UR", 5), ("UR", 10)],  # shared destination, mbarrier, size
        [("UR", 4), ("UR", 10)],  # shared source, size: not the global address
        [("UR", 4), ("UR", 10)],
    ]
