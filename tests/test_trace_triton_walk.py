"""Issue 27's new-user walk across Triton 3.0 to 3.6 (tests/data/triton/walk: tutorial-style
kernels of our own). Triton 3.0 and 3.1 ask 40,962 bytes of shared memory for the attention
kernel (its tiles and a 2-byte tail): a lone CTA's window was that long, and the 4-byte word
view of a 16-byte access into it failed ('internal emulator error')."""

from __future__ import annotations

import shmem_cli

from .conftest import TEST_DATA, needs_nvdisasm

WALK = TEST_DATA / "triton" / "walk"


@needs_nvdisasm
def test_a_shared_size_no_multiple_of_16_traces() -> None:
    entry = next((WALK / "3.0.0").glob("*/attn_fwd.json")).parent
    result = shmem_cli.trace(entry, grid=(2,), args={"seq": 128, "scale": 1})
    kernel = result.kernel
    assert kernel.launch.dynamic_smem == 40_962
    t = kernel.totals
    # by hand, per block (4 warps): Q's 64 x 64 fp16 tile is 8 KiB, 64 B a thread, 4 STS.128
    # a warp of 4 wavefronts each (512 B); the output tile goes out through 4 STSM.x4 a warp
    # (4 8x8 matrices, 512 B: 4 wavefronts) and is read back by 4 LDS.128 a warp; 2 blocks
    assert (t["store"].requests, t["store"].wavefronts) == (32, 128)
    assert (t["stmatrix"].requests, t["stmatrix"].wavefronts) == (32, 128)
    assert (t["load"].requests, t["load"].wavefronts) == (32, 128)
