"""Blocks that wait on a flag an earlier block sets (CUTLASS's serial split-K, a look-back
scan). On the GPU blocks start in launch order, so the wait ends; shmem runs a few blocks
spread over a grid first, to measure it, and a block run before the one it waits on is set
aside while the blocks before it run (sync/waiting_blocks.py): the report says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import needs_nvcc, needs_nvdisasm

KERNEL = """// block b waits until block b - 1 has set its flag, then sets its own
__global__ void chained(volatile int *flags, float *out) {
  __shared__ float s[256];
  int b = blockIdx.x;
  if (b > 0 && threadIdx.x == 0)
    while (flags[b - 1] == 0) {
    }
  __syncthreads();
  s[threadIdx.x] = b;
  __syncthreads();
  out[b * blockDim.x + threadIdx.x] = s[threadIdx.x ^ 1];
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    flags[b] = 1;
  }
}
"""


@pytest.mark.slow  # 10-15 s; test_trace_spinwait.py keeps blocks waiting on blocks fast
@needs_nvcc
@needs_nvdisasm
def test_a_block_run_before_the_block_it_waits_on_waits_till_that_block_ran(
    tmp_path: Path,
) -> None:
    cu = tmp_path / "chained.cu"
    cu.write_text(KERNEL)

    def trace(grid: int) -> tuple[int, str]:
        res = CliRunner().invoke(
            main, ["trace", str(cu), "-b", "256", "--grid", str(grid), "--no-tables"]
        )
        return res.exit_code, " ".join(res.output.split())

    # in launch order (block 0 first, then the rest together) every wait ends: 8 stores a
    # block, one request a warp
    code, text = trace(3)
    assert code == 0, text
    assert "chained.cu:9 STS" in text and "Traceback" not in text
    # 64 blocks: the blocks run first are spread over the 63 after block 0, each waiting on
    # the block before it; they wait, set aside, while the blocks before them run
    code, text = trace(64)
    assert code == 0, text
    assert "load 512 512 512 0" in text and "store 512 512 512 0" in text  # 64 x 8 warps
    assert "blocks ran out of launch order" in text and "'flags'+0x" in text
