"""Warp votes on the block index, traced by class (issue 30,
shmem_cli/trace/emulator/alike/votes.py).

tests/data/trace/votes/votes.cu votes on a flag made from the block index (as CUTLASS 3.x's
cooperative GEMMs in clusters do, ``VOTEU.ANY UP0, P0``) and lets the vote pick a warp's
shared addresses. Without a form for the vote every block ran (the first block's decision on
it could not be evaluated); now the blocks fall into one class per outcome, with every
block's totals. Worked out by hand from the source (8 warps a block, 12 blocks):

* ``vt_any``: a warp stores 32 consecutive floats and reads them back pairwise swapped (1
  wavefront each) in the half its vote picks;
* ``vt_all``: a warp stores two rows of 32 floats (1 wavefront each) and reads with stride 1,
  or 2 where the vote holds (blocks 0, 2, 6, 8: 16 banks, 2 words each, 2 wavefronts).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shmem_cli.trace.emulator.alike.vectors import Vectors
from shmem_cli.trace.emulator.alike.votes import vote

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_classes import _same
from .test_trace_grid import classes_of

VOTES = TRACE_DATA / "votes" / "votes.sm_90.cubin"
WARPS, BLOCKS = 8, 12


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "loads", "stores"),
    [
        ("vt_any", (WARPS * BLOCKS, WARPS * BLOCKS), (WARPS * BLOCKS, WARPS * BLOCKS)),
        ("vt_all", (WARPS * BLOCKS, 4 * WARPS * 2 + 8 * WARPS), (192, 192)),
    ],
)
def test_a_vote_on_the_block_index_makes_one_class_per_outcome(
    kernel: str, loads: tuple[int, int], stores: tuple[int, int]
) -> None:
    k = _same(kernel, (BLOCKS, 1, 1), (), cubin=VOTES)
    cov = k.launch.coverage
    assert cov is not None and cov.mode == "alike" and classes_of(cov) == 2
    got = {op: (k.totals[op].requests, k.totals[op].wavefronts) for op in ("load", "store")}
    assert got == {"load": loads, "store": stores}


class _NoSteps:
    def step(self, m: int, loads: Any, rows: Any, total: int) -> dict[tuple[str, int], Any]:
        raise AssertionError("whole vectors need no step")


@pytest.mark.parametrize("seed", range(4))
def test_random_votes_are_each_blocks_or_and_and(seed: int) -> None:
    # threads of a few warps, each with a predicate free of the block (a value) or with a
    # value per block; the vote's vector of each warp is its threads' OR (AND) block by block
    rng = np.random.default_rng(seed)
    blocks, threads = int(rng.integers(1, 40)), int(rng.integers(1, 100))
    vec = Vectors(blocks, _NoSteps())
    per_block = rng.random((threads, blocks)) < rng.random()
    clean = rng.random(threads) < 0.3
    k = np.where(clean, rng.random(threads) < 0.5, False).astype(np.uint32)
    vids = np.array([-1 if c else vec.intern(per_block[t]) for t, c in enumerate(clean)])
    warps = np.sort(rng.integers(0, 4, threads))
    for mode in ("ANY", "ALL"):
        for negated in (False, True):
            got = vote(vec, mode, negated, k, vids, warps)
            assert got is not None
            made, group = got
            for t in range(threads):
                mine = warps == warps[t]
                values = np.where(clean[mine, None], k[mine, None] != 0, per_block[mine]) ^ negated
                want = values.all(axis=0) if mode == "ALL" else values.any(axis=0)
                assert np.array_equal(vec.values[made[group[t]]], want), (mode, negated, t)
