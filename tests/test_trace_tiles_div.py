"""A persistent tile loop split by a runtime divisor, traced by class (issue 30,
shmem_cli/trace/emulator/alike/guarded.py).

tests/data/trace/persistent/tiles_div.cu walks tiles b, b + gridDim.x, ... and splits each
tile index by a runtime ``tiles_m``: nvcc's division corrects its quotient under guards on the
block index (``@!P2 IMAD.IADD``, ``@P1 VIADD``), which only choose values. The proof narrowed
a class at each such guard (12 blocks of one trip count: 6 run); now each is a select in every
block, and the blocks fall into their real classes, every total and thread-instruction that
of every block run. ``tiles_div_odd`` lets the quotient decide shared addresses (an odd row's
tiles read with no padding column): the blocks split by it. Worked out by hand from the
source (8 warps, T tiles of which T_odd in an odd row): stores 32 T requests of 1 wavefront;
loads 32 T requests, of 1 wavefront, or 32 (a column of an unpadded tile) in an odd row of
``tiles_div_odd``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import classes_of, every_block, traced

CUBIN = TRACE_DATA / "persistent" / "tiles_div.sm_90.cubin"
BLOCK = (32, 8, 1)


def _same(kernel: str, blocks: int, tiles_m: int, ntiles: int) -> Any:
    """By class against every block run and the hand's counts; returns it."""
    args = (f"2={tiles_m}", f"3={ntiles}")  # tiles_m, ntiles
    by_class = traced(CUBIN, kernel, BLOCK, (blocks, 1, 1), args)
    ran = every_block(CUBIN, kernel, BLOCK, (blocks, 1, 1), args)
    assert by_class.totals == ran.totals
    assert by_class.instructions_executed == ran.instructions_executed
    for a, b in zip(by_class.accesses, ran.accesses, strict=True):
        assert (a.site.pc, a.cost.totals, a.predicated_off) == (
            b.site.pc,
            b.cost.totals,
            b.predicated_off,
        )
    odd = sum((t // tiles_m) & 1 for t in range(ntiles)) if kernel == "tiles_div_odd" else 0
    want = {"load": (32 * ntiles, 32 * (ntiles - odd) + 32 * 32 * odd), "store": (32 * ntiles,) * 2}
    got = {op: (by_class.totals[op].requests, by_class.totals[op].wavefronts) for op in want}
    assert got == want
    return by_class


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(("kernel", "classes"), [("tiles_div", 1), ("tiles_div_odd", 2)])
def test_guards_of_a_runtime_division_leave_the_real_classes(kernel: str, classes: int) -> None:
    # 60 tiles over 12 blocks, 6 a row: 5 tiles each; block b's rows are 2k + b // 6, so
    # blocks 0-5 read even rows and 6-11 odd ones (main: 6 and 7 blocks ran)
    k = _same(kernel, 12, 6, 60)
    cov = k.launch.coverage
    assert cov is not None and cov.mode == "alike"
    assert classes_of(cov) == classes and cov.run == classes


@needs_nvdisasm
@pytest.mark.slow
def test_random_runtime_divisions_by_class_count_as_every_block() -> None:
    # grids, divisors and tile counts drawn at random: every total and thread-instruction is
    # every block's (a select counts each block's own threads)
    rng = np.random.default_rng(30)
    for _ in range(10):
        blocks = int(rng.integers(2, 17))
        kernel = "tiles_div_odd" if rng.random() < 0.5 else "tiles_div"
        _same(kernel, blocks, int(rng.integers(2, 10)), int(rng.integers(blocks, 4 * blocks)))
