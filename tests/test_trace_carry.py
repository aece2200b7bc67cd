"""A block index carried through 64-bit arithmetic (tests/data/trace/carry: the project's own
kernel): CUTLASS 3.x's persistent tile scheduler makes its work index so (a uint64 sum of the
block index and a multiply-high) and compares it with the problem's tiles in 64 bits.

The sums' carry-out predicates (``IADD3 R0, P0, P1, ...``) had no form of their own in the
block-alike proof: a sum was evaluated once per group of threads with the same vectors, which
passes a thread's constant through its low word but not through its carry, so the carry was
dropped, the ``IADD3.X`` that reads it had none, and every block of the grid ran (the
persistent GEMM: 132 of 132). A sum with a carry out now groups threads by their constants
too, its carries get their values in every block, and the grid's blocks fall into classes.
"""

from __future__ import annotations

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import classes_of, traced

CUBIN = TRACE_DATA / "carry" / "carry_tiles.sm_90.cubin"
BASE = 0xFFFFFFF0


def _index(block: int) -> int:
    return BASE + (block << 32) // 3 + block


@needs_nvdisasm
def test_a_64_bit_index_of_the_block_is_proven_block_by_block() -> None:
    # blocks 0-39 pass the compare and make 8 store and 8 load requests each (1 wavefront:
    # tile[(33 t) % 256] puts a warp's lanes in 32 banks); blocks 40-63 return at once
    args = (f"base={BASE:#x}", f"count={_index(40)}")
    kernel = traced(CUBIN, "carry_tiles", 256, (64, 1, 1), args)
    totals = kernel.totals
    assert (totals["store"].requests, totals["store"].wavefronts) == (320, 320)
    assert (totals["load"].requests, totals["load"].wavefronts) == (320, 320)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 2
    assert classes_of(cov) == 2


@needs_nvdisasm
def test_a_block_index_scaled_in_float_is_proven_block_by_block() -> None:
    # floor(blockIdx.x * 0.25) < 10 for blocks 0-39 (I2FP, FMUL, F2I: how CUTLASS 3.x's
    # scheduler divides the block index by its cluster's size); the FMUL had no form, so every
    # block ran
    kernel = traced(CUBIN, "float_scaled", 256, (64, 1, 1), ("inv=0.25", "limit=10"))
    assert (kernel.totals["store"].requests, kernel.totals["load"].requests) == (320, 320)
    cov = kernel.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 2
