"""A parameter loaded under a guard on global data (FlashAttention-2's log-sum-exp: ptxas
loads the softmax scale with ``@P4 LDC R11, c[0x0][0x2e8]`` only where the row's sum is not
zero). The load reads the parameters' bank at a fixed offset, the same in every block: the
guard only chooses a register's value, so the blocks are proven alike (decode.values_only),
where every block of every FlashAttention-2 launch ran.

The kernel is tests/data/trace/ldcguard/ldcguard.cu; its shared requests are counted by hand,
and the launch is also run with every block for the per-instruction rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.tracer import find_function

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import every_block, traced
from .test_trace_measured import cubin

CUBIN = TRACE_DATA / "ldcguard" / "ldcguard.sm_90.cubin"
N = 128  # threads of a block, values of a row


def _args(tmp_path: Path) -> tuple[str, ...]:
    """Four rows: block 1's all zeros (the guard off for every thread), block 3's half zeros
    (on for some); ``Rows {in, out, lse, scale}`` field by field."""
    rows = np.tile(np.arange(N, dtype=np.float32) + 1, (4, 1))
    rows[1] = 0
    rows[3, ::4] = rows[3, 1::4] = 0
    data = tmp_path / "rows.bin"
    rows.tofile(data)
    return (f"0+0=@{data}", "0+8=zeros:2048", "0+16=zeros:512", "0+24=0.5:4")


@needs_nvdisasm
def test_a_guarded_parameter_load_leaves_the_blocks_alike(tmp_path: Path) -> None:
    info, disassembly = cubin(CUBIN)
    function = find_function(disassembly, find_kernel(info, "lg_lse"), info.path)
    guarded = [i for i in function.instructions if i.opcode == "LDC" and i.guard is not None]
    assert guarded, "the cubin should load the scale under the row sum's guard"

    by_class = traced(CUBIN, "lg_lse", N, (4, 1, 1), _args(tmp_path))
    cov = by_class.launch.coverage
    assert cov is not None and (cov.mode, cov.run, cov.blocks) == ("alike", 1, 4)
    assert cov.differs is None and "every block behaves alike" in (cov.proof or "")
    # by hand, per block: part[t] = v, one store a warp (4 warps); part[(t + 1) % 128] and
    # part[t], one load each a warp, consecutive words: one wavefront each
    assert (by_class.totals["store"].requests, by_class.totals["store"].wavefronts) == (16, 16)
    assert (by_class.totals["load"].requests, by_class.totals["load"].wavefronts) == (32, 32)

    ran = every_block(CUBIN, "lg_lse", N, (4, 1, 1), _args(tmp_path))
    assert ran.launch.coverage is not None and ran.launch.coverage.mode == "whole"
    assert [(a.site.pc, a.cost.totals) for a in by_class.accesses] == [
        (a.site.pc, a.cost.totals) for a in ran.accesses
    ]
