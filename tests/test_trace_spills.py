"""A value on the block index that ptxas spills to local memory and reloads (FlashAttention-2's
hdim-128 forward keeps its causal trip count n_block_max so: ``STL [R1+0xc], R162``): the
form the proof of alike blocks keeps for the register follows it through the spill and the
refill (shmem_cli/trace/emulator/alike/forms.py), where the refilled register had none and
every block of the grid ran.

The kernel is tests/data/trace/spills/spills.cu (``__maxnreg__(24)``: the trip count is
stored at ``[R1+0x38]`` and read back before the second loop); its shared requests are
counted by hand, and the launch is also run with every block for the per-instruction rows.
"""

from __future__ import annotations

from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.tracer import find_function

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import classes_of, every_block, traced
from .test_trace_measured import cubin

CUBIN = TRACE_DATA / "spills" / "spills.sm_90.cubin"
N, GRID = 128, (16, 1, 1)
ARGS = ("2=8", "3=8")  # k, cap


def _rows(b: int) -> int:
    """The rows block ``b`` stores: min((3 b + k) / cap, 5) (spills.cu)."""
    return min((3 * b + 8) // 8, 5)


@needs_nvdisasm
def test_a_trip_count_spilled_and_refilled_keeps_its_form() -> None:
    info, disassembly = cubin(CUBIN)
    function = find_function(disassembly, find_kernel(info, "sp_rows"), info.path)
    texts = [i.text for i in function.instructions]
    assert any(t.startswith("STL [R1+0x38]") for t in texts)
    assert any(t.startswith("LDL R4, [R1+0x38]") for t in texts)

    by_class = traced(CUBIN, "sp_rows", N, GRID, ARGS)
    cov = by_class.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.differs is None
    # the counts 1, 2, 3, 4 and 5: five classes of blocks
    assert classes_of(cov) == len({_rows(b) for b in range(GRID[0])}) == 5
    # by hand: each row is one request of each of the 4 warps, stored twice and loaded
    # once, consecutive words (t and t ^ 1): one wavefront each
    rows = sum(_rows(b) for b in range(GRID[0]))
    assert rows == 52
    store, load = by_class.totals["store"], by_class.totals["load"]
    assert (store.requests, store.wavefronts) == (8 * rows, 8 * rows)
    assert (load.requests, load.wavefronts) == (4 * rows, 4 * rows)

    ran = every_block(CUBIN, "sp_rows", N, GRID, ARGS)
    assert ran.launch.coverage is not None and ran.launch.coverage.mode == "whole"
    assert [(a.site.pc, a.cost.totals) for a in by_class.accesses] == [
        (a.site.pc, a.cost.totals) for a in ran.accesses
    ]
