"""Ballots into a register on the block index, traced by class (issue 30,
shmem_cli/trace/emulator/alike/votes.py).

tests/data/trace/ballots/kernels/ballots.cu ballots a predicate made from the block index
(``VOTE.ANY R4, PT, P0`` of ``__ballot_sync``) and lets what real kernels make of the mask
pick a warp's shared addresses: a stream compaction's offsets and count (``POPC`` under
``SR_LTMASK``), ``__ffs`` (``BREV``, ``FLO.U32.SH``), ``__clz`` and ``__brev``. Without a
value per block for the ballot every block ran; now the blocks fall into one class per
outcome, with the totals of every block run. Worked out by hand from the source (256
threads, 8 warps a block, 12 blocks; every store below is one wavefront a warp):

* ``bl_compact`` (k = 3): warp ``m = 8 b + w`` keeps the lanes ``l`` with ``(32 m + l) % 3
  == 0``: 10 of them where ``m % 3 == 2``, else 11; its read ``s[(l n) % 256]`` is 2
  wavefronts for ``n = 10`` (lanes ``l`` and ``l + 16`` in one bank, 160 words apart), 1 for
  11: 32 of the 96 warps read twice, 128 in all. Three classes (``b % 3``).
* ``bl_ffs``: the lowest lane with ``(l + b) % 5 == 0`` sets the stride of the read, 1 to 5
  (1, 2, 1, 4, 1 wavefronts) for ``b % 5 = 0, 4, 3, 2, 1``: 20 a warp over the 12 blocks.
* ``bl_clz``: lanes ``0..b % 4`` set: the stride ``31 - __clz + 1`` is ``b % 4 + 1`` (1, 2,
  1, 4 wavefronts), ``__brev`` only moves the start: 24 a warp.
* ``bl_uniform``: a flag of the block (``b % 3 == 1``) in every lane: the ballot's count
  (32 or 0) makes the stride 2 or 1: blocks 1, 4, 7, 10 read twice, 128 in all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shmem_cli.cuda import sass
from shmem_cli.hardware.arch import SM90
from shmem_cli.trace.aggregate import trace_access
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.alike.vectors import Vectors
from shmem_cli.trace.emulator.alike.votes import ballot
from shmem_cli.trace.emulator.state import Launch

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_classes import _same
from .test_trace_grid import classes_of, every_block, traced

BALLOTS = TRACE_DATA / "ballots" / "ballots.sm_90.cubin"
WARPS, BLOCKS = 8, 12
N = 256


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "args", "classes", "load_wavefronts"),
    [
        ("bl_compact", ("1=3",), 3, 128),
        ("bl_ffs", (), 5, 20 * WARPS),
        ("bl_clz", (), 4, 24 * WARPS),
        ("bl_uniform", (), 2, 128),
    ],
)
def test_a_ballot_on_the_block_index_makes_one_class_per_outcome(
    kernel: str, args: tuple[str, ...], classes: int, load_wavefronts: int
) -> None:
    k = _same(kernel, (BLOCKS, 1, 1), args, cubin=BALLOTS)
    cov = k.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == classes
    assert classes_of(cov) == classes
    assert f"the {BLOCKS} blocks fall into {classes} classes" in (cov.proof or "")
    requests = WARPS * BLOCKS
    got = {op: (k.totals[op].requests, k.totals[op].wavefronts) for op in ("load", "store")}
    assert got == {"load": (requests, load_wavefronts), "store": (requests, requests)}


@needs_nvdisasm
@pytest.mark.parametrize(("k", "classes"), [(3, 3), pytest.param(7, 7, marks=pytest.mark.slow)])
def test_a_compaction_loop_over_tiles_is_exact_by_class(k: int, classes: int) -> None:
    # bl_tiles: 4 tiles a block, each balloted, packed and read back 16 times with the
    # stride of its warp's count; x % k decides, and 256 * 4 b % k takes every residue
    grid = (3 * classes, 1, 1)
    got = _same("bl_tiles", grid, (f"1={k}", "2=4"), cubin=BALLOTS)
    cov = got.launch.coverage
    assert cov is not None and cov.mode == "alike" and classes_of(cov) == classes


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "block", "grid", "classes"),
    [
        # a partial warp's ballot (lanes below 8 (b % 4) + 4; the last warp of 80 threads
        # has 16): b % 4 decides the lanes and their predicate
        ("bl_part", 80, (24, 1, 1), 4),
        # VOTE.ANY R, PT, !P0 beside VOTE.ANY P0 and VOTE.ALL: the stride 1 + (popc & 3) +
        # any + 2 all over the 30 blocks (x, y) takes 4 values (2, 3, 4, 5)
        ("bl_both", 96, (6, 5, 1), 4),
        # 2 x 1 clusters: the first CTA (b = 2 c) ballots lanes below 2 c % 5: 5 classes
        ("bl_cluster", 64, (20, 1, 1), 5),
    ],
)
def test_partial_warps_votes_beside_and_clusters_are_exact_by_class(
    kernel: str, block: int, grid: tuple[int, int, int], classes: int
) -> None:
    got = _same(kernel, grid, (), cubin=BALLOTS, block=block)
    cov = got.launch.coverage
    assert cov is not None and cov.mode == "alike" and classes_of(cov) == classes


@needs_nvdisasm
@pytest.mark.parametrize("alike", [False, True])
def test_a_ballot_on_global_data_stays_data_dependent(tmp_path: Path, alike: bool) -> None:
    # bl_data ballots in[x] > 0: the stride of the read is the data's, block by block (or
    # the same data in every block: still global data, nothing proven of it)
    rng = np.random.default_rng(3)
    values = rng.integers(-4, 4, size=(BLOCKS, N), dtype=np.int32)
    if alike:
        values[:] = values[0]
    data = tmp_path / "in.bin"
    data.write_bytes(values.tobytes())
    args = (f"1=@{data}",)
    got = traced(BALLOTS, "bl_data", N, (BLOCKS, 1, 1), args)
    ran = every_block(BALLOTS, "bl_data", N, (BLOCKS, 1, 1), args)
    cov = got.launch.coverage
    assert cov is not None and cov.mode == "whole" and cov.run == BLOCKS
    assert cov.differs is not None and "ballots.cu:" in cov.differs
    assert got.totals == ran.totals
    (load,) = [a for a in got.accesses if a.site.opcode == "LDS"]
    assert load.data_dependent_requests == WARPS * BLOCKS and load.data_from == ("1 (in)",)


def _program(body: str) -> sass.Function:
    lines = ['.section\t.text._Z1kv,"ax",@progbits', '\t//## File "k.cu", line 7']
    lines += [f"        /*{16 * i:04x}*/  {text} ;" for i, text in enumerate(body.splitlines())]
    (fn,) = sass.parse("\n".join(lines))
    return fn


def test_a_uniform_ballot_into_a_uniform_register_makes_classes() -> None:
    # VOTEU.ANY UR4 of lanes 0..b % 4 (2 warps a block, 12 blocks), counted (UPOPC) into the
    # stride of a read: 1, 2, 1, 4 wavefronts a warp for b % 4 = 0..3, 48 in all; 4 classes
    fn = _program(
        "S2R R0, SR_CTAID.X\nS2R R1, SR_TID.X\nLOP3.LUT R2, R0, 0x3, RZ, 0xc0, !PT\n"
        "LOP3.LUT R3, R1, 0x1f, RZ, 0xc0, !PT\nISETP.LE.U32.AND P0, PT, R3, R2, PT\n"
        "VOTEU.ANY UR4, UPT, P0\nUPOPC UR5, UR4\nMOV R4, UR5\nIMAD R5, R3, R4, RZ\n"
        "SHF.L.U32 R5, R5, 0x2, RZ\nLDS R6, [R5]\nEXIT"
    )
    got = []
    for every in (False, True):
        launch = Launch(block=(64, 1, 1), grid=(BLOCKS, 1, 1), static_smem=4096)
        tr = execute.run(fn, launch, grid=True, every_block=every)
        (rec,) = [r for r in tr.records if r.n]
        cost = trace_access(rec, SM90, warps=2 * BLOCKS, warps_per_block=2, blocks=BLOCKS)
        assert tr.coverage is not None
        got.append((tr.coverage.mode, tr.coverage.run, cost.cost.totals, tr.thread_instructions))
    assert got[0][0] == "alike" and got[0][1] == 4 and got[1][:2] == ("whole", BLOCKS)
    assert got[0][2:] == got[1][2:]
    assert (got[0][2].requests, got[0][2].wavefronts) == (2 * BLOCKS, 48)


class _NoSteps:
    def step(self, m: int, loads: Any, rows: Any, total: int) -> dict[tuple[str, int], Any]:
        raise AssertionError("whole vectors need no step")


@pytest.mark.parametrize("seed", range(4))
def test_random_ballots_are_each_blocks_mask_of_lanes(seed: int) -> None:
    # threads of a few warps (some lanes missing), each with a predicate free of the block
    # (a value) or with a value per block; a warp's ballot in each block sets the bit of
    # each of its lanes whose predicate holds there
    rng = np.random.default_rng(seed)
    blocks = int(rng.integers(1, 40))
    tids = np.sort(rng.choice(128, size=int(rng.integers(1, 128)), replace=False))
    threads = len(tids)
    vec = Vectors(blocks, _NoSteps())
    per_block = rng.random((threads, blocks)) < rng.random()
    clean = rng.random(threads) < 0.3
    k = np.where(clean, rng.random(threads) < 0.5, False).astype(np.uint32)
    vids = np.array([-1 if c else vec.intern(per_block[t]) for t, c in enumerate(clean)])
    warps, lanes = np.divmod(tids, 32)
    for negated in (False, True):
        got = ballot(vec, negated, k, vids, warps, lanes)
        assert got is not None
        made, group = got
        for t in range(threads):
            want = np.zeros(blocks, dtype=np.uint64)
            for u in np.flatnonzero(warps == warps[t]):
                holds = (k[u] != 0 if clean[u] else per_block[u]) ^ negated
                want |= np.where(holds, 1 << int(lanes[u]), 0).astype(np.uint64)
            assert np.array_equal(vec.values[made[group[t]]], want.astype(np.uint32))
