"""Issue 27's new-user walk across Triton 3.0 to 3.6 (tests/data/triton/walk: tutorial-style
kernels of our own). Triton 3.0 and 3.1 ask 40,962 bytes of shared memory for the attention
kernel (its tiles and a 2-byte tail): a lone CTA's window was that long, and the 4-byte word
view of a 16-byte access into it failed ('internal emulator error'). Its cp.async copies cost
0 in the prologue and 2 a request in the loop: the pipeline's guard is their src-size, and
only the prefetch past the loop's end zero-fills (the H200's .cg rule)."""

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


def _copies(kernel: shmem_cli.KernelTrace) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The prologue's and the loop's cp.async rows that ran, (requests, wavefronts) in pc
    order: the prologue's carry the trailing predicate P0, the loop's !P0 (the SASS)."""
    rows = sorted((a for a in kernel.accesses if a.op == "cp_async"), key=lambda a: a.pc)
    assert all(".BYPASS.128" in a.site.opcode for a in rows)
    cost = [(a.cost.requests, a.cost.wavefronts) for a in rows]
    first = [c for a, c in zip(rows, cost, strict=True) if a.site.sass.endswith(", P0")]
    loop = [c for a, c in zip(rows, cost, strict=True) if a.site.sass.endswith(", !P0")]
    assert len(first) + len(loop) == len(rows)
    return first, loop


@needs_nvdisasm
def test_the_pipelined_copies_cost_only_where_they_zero_fill() -> None:
    # Triton 3.0 folds the software pipeline's guard into the copies' src-size (PTX
    # 'cp.async.cg ... 16, r' with r = 16 or 0; SASS: the trailing predicate, true = copy):
    # the prologue's 8 copies load the first K and V tiles if seq > 0, the loop's 8 the next
    # tiles if the next start < seq. By the H200's rule for 16-byte cp.async.cg
    # (tests/data/trace/measured.json: cp_pattern_16_cg_m0_s1_g1_z2_t64_n16 costs 0 for 2
    # requests, ..._n0, every lane zero-filling, 8), a copy costs nothing and a zero fill
    # costs as a 16-byte store: 32 lanes, 512 B, 4 wavefronts a warp at the least, and
    # Triton's swizzled tile puts each quarter-warp's 8 lanes on distinct bank groups.
    # 2 blocks of 4 warps: 8 requests an execution.
    entry = next((WALK / "3.0.0").glob("*/attn_fwd.json")).parent
    two = shmem_cli.trace(entry, grid=(2,), args={"seq": 128, "scale": 1}).kernel
    prologue, loop = _copies(two)
    assert prologue == [(8, 0)] * 8  # seq > 0: every lane copies
    # two iterations: the first prefetches the second tile (free), the last one past the
    # end (all lanes zero-fill: 8 requests of 4); 32 wavefronts over 16 requests
    assert loop == [(16, 32)] * 8
    empty = shmem_cli.trace(entry, grid=(2,), args={"seq": 0, "scale": 1}).kernel
    prologue, loop = _copies(empty)
    assert prologue == [(8, 32)] * 8  # seq = 0: the prologue zero-fills, the loop never runs
    assert loop == []
