"""Kernels in the shapes of llm.c's shared-memory kernels (tests/data/trace/llmc, our own
code) traced at small launches, every total counted by hand from the source: the grids
whose blocks behave alike run one block, the layer norm backward pass (a ticket counter
finds the last block) runs every block, its shared float atomics served in rounds
(shmem_cli/trace/emulator/sync/atomic_words.py)."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import traced

CUBIN = TRACE_DATA / "llmc" / "llmc.sm_90.cubin"


def _totals(kernel: Any) -> dict[str, tuple[int, int]]:
    got = kernel.totals
    return {op: (t.requests, t.wavefronts) for op, t in got.items() if t.requests and op != "misc"}


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "block", "grid", "args", "smem", "mode", "want"),
    [
        # 8 warps a row: lane 0 of each stores its maximum and sum (16), thread 0 both of
        # the block's (2); thread 0 reads the 8 pairs (16), then every warp the pair (16)
        ("softmax_fwd", 256, 64, ("N=64", "C=1024"), 64, "alike",
         {"load": (64 * 32, 64 * 32), "store": (64 * 18, 64 * 18)}),
        # two block reductions of 32 warps: 32 stores and a read by every warp, each
        ("classifier", 1024, 16, ("B=1", "T=16", "V=2000", "P=2048"), None, "alike",
         {"load": (16 * 64, 16 * 64), "store": (16 * 64, 16 * 64)}),
        # every warp stores its 32 columns' sums (32), warp 0 reads the 32 rows back
        ("bias_bwd", 1024, 4, ("N=256", "OC=128"), 4096, "alike",
         {"load": (4 * 32, 4 * 32), "store": (4 * 32, 4 * 32)}),
        # 64 columns: 2 warps zero dbias and dweight (4 stores) and read them out (4 loads),
        # thread 0 stores the last-block flag and the 4 warps read it; 256 rows of 2 column
        # steps, each adding to dbias and dweight (LDS + ATOMS.CAST, 2 wavefronts a spin)
        ("ln_bwd", 128, 16, ("N=256", "C=64"), 512, "whole",
         {"load": (16 * 8 + 1024, 16 * 8 + 1024), "store": (16 * 5, 16 * 5),
          "atomic": (1024, 2048)}),
    ],
)  # fmt: skip
def test_llmc_shapes_counted_by_hand(
    kernel: str,
    block: int,
    grid: int,
    args: tuple[str, ...],
    smem: int | None,
    mode: str,
    want: dict[str, tuple[int, int]],
) -> None:
    got = traced(CUBIN, kernel, block, (grid, 1, 1), args, dynamic_smem=smem)
    cov = got.launch.coverage
    assert cov is not None and cov.mode == mode
    assert cov.run == (1 if mode == "alike" else grid)
    assert _totals(got) == want
