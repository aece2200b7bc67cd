"""An ``R2P`` writes only the predicates of its mask (``R2P PR, R2, 0xe``: P1 to P3). The
proof of alike blocks forgot what it knew of every predicate there, so a compare on the block
index made before it and read after it (P0, a row's bound in FlashAttention-2's hdim-128
forward around ``R2P PR, R2, 0x6``) had no agreement, and every block of the grid ran.

The kernel is tests/data/trace/r2pmask/r2pmask.cu; its shared requests are counted by hand,
and the launch is also run with every block for the per-instruction rows.
"""

from __future__ import annotations

from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.tracer import find_function

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import classes_of, every_block, traced
from .test_trace_measured import cubin

CUBIN = TRACE_DATA / "r2pmask" / "r2pmask.sm_90.cubin"
N, GRID, ROWS = 128, (8, 1, 1), 200
ARGS = (f"2={ROWS}",)


def _inside_warps(b: int) -> int:
    """The warps of block ``b`` with a thread for which t + 16 b < rows (r2pmask.cu)."""
    return sum(1 for w in range(4) if 32 * w + 16 * b < ROWS)


@needs_nvdisasm
def test_an_r2p_keeps_what_is_known_of_the_predicates_outside_its_mask() -> None:
    info, disassembly = cubin(CUBIN)
    function = find_function(disassembly, find_kernel(info, "rp_rows"), info.path)
    texts = [i.text for i in function.instructions]
    r2p = next(k for k, t in enumerate(texts) if t.startswith("R2P PR, R2, 0xe"))
    assert any(t.startswith("@!P0 STS") for t in texts[r2p:])  # P0 read after the R2P

    by_class = traced(CUBIN, "rp_rows", N, GRID, ARGS)
    cov = by_class.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.differs is None
    # blocks 0-4 have every thread inside; 5, 6 and 7 each their own bound
    assert classes_of(cov) == 4
    # by hand: two stores and four loads of every warp, two stores of the warps inside
    inside = sum(_inside_warps(b) for b in range(GRID[0]))
    assert inside == 4 * 7 + 3
    store, load = by_class.totals["store"], by_class.totals["load"]
    assert (store.requests, store.wavefronts) == (2 * 4 * 8 + 2 * inside,) * 2
    assert (load.requests, load.wavefronts) == (4 * 4 * 8,) * 2

    ran = every_block(CUBIN, "rp_rows", N, GRID, ARGS)
    assert ran.launch.coverage is not None and ran.launch.coverage.mode == "whole"
    assert [(a.site.pc, a.cost.totals) for a in by_class.accesses] == [
        (a.site.pc, a.cost.totals) for a in ran.accesses
    ]
