"""Persistent kernels whose blocks take tiles from one global counter (issue 30,
shmem_cli/trace/emulator/sync/shared_work.py): the blocks run together from the start, as
resident blocks, not the first alone (it would take every tile, past its budget).

tests/data/trace/persistent/persistent.cu copies 32 x 32 tiles through shared memory (a
32 x 8 block: 8 warps). Worked out by hand from its source: per tile, 4 row stores a warp
(1 wavefront each) and 4 column loads a warp (32-way: 32 wavefronts each); per turn of the
loop (one per tile, and each block's last, empty-handed one), thread 0 stores the tile's
number (1 request) and every warp loads it back (a broadcast: 1 wavefront).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shmem_cli.trace import tracer
from shmem_cli.trace.emulator.budget import Budget
from shmem_cli.trace.emulator.decode import decode_function
from shmem_cli.trace.emulator.sync.shared_work import SharesWork, at_once, shares_work
from shmem_cli.trace.emulator.trace_error import TraceError
from shmem_cli.trace.pipeline import TraceRequest, trace_file

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_ops import _program

CUBIN = TRACE_DATA / "persistent" / "persistent.sm_90.cubin"
KERNEL = "persistent_tiles"
WARPS = 8  # a 32 x 8 block


def _trace(tiles: int, blocks: int, per_thread: int | None = None) -> Any:
    args = (
        f"ntiles={tiles}",
        f"out+0=zeros:{tiles * 4096}",
        f"in+0=zeros:{tiles * 4096}",
        "counter+0=zeros:4",
    )
    budget = Budget() if per_thread is None else Budget(per_thread=per_thread)
    request = TraceRequest(
        Path(CUBIN), kernel=KERNEL, block=(32, 8, 1), grid=(blocks, 1, 1), args=args,
        budget=budget,
    )  # fmt: skip
    return trace_file(request).kernels[0]


def _by_hand(tiles: int, blocks: int) -> dict[str, tuple[int, int]]:
    """(requests, wavefronts) of each op, from the kernel's source (the module's text)."""
    turns = tiles + blocks
    stores = 4 * WARPS * tiles + turns
    loads = 4 * WARPS * tiles + WARPS * turns
    return {
        "store": (stores, stores),
        "load": (loads, 4 * WARPS * tiles * 32 + WARPS * turns),
    }


def _totals(k: Any) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for a in k.accesses:
        req, wav = out.get(a.op, (0, 0))
        out[a.op] = (req + a.cost.totals.requests, wav + a.cost.totals.wavefronts)
    return out


#: thread-instructions a thread may run (--max-instructions): about 26 tiles' worth of a
#: block alone (about 38 a thread a tile); the launch has 4 times as many tiles
PER_THREAD = 1000
TILES = 104


@needs_nvdisasm
def test_blocks_that_share_a_tile_counter_run_together_and_count_every_tile_once() -> None:
    # block (0,0,0) run alone first (to prove the others alike) took all 104 tiles and
    # stopped at --max-instructions; the 8 blocks together take 13 each
    k = _trace(TILES, 8, PER_THREAD)
    assert _totals(k) == _by_hand(TILES, 8)
    cov = k.launch.coverage
    assert cov is not None and cov.mode == "whole" and cov.run == 8
    said = cov.differs or ""
    assert "persistent.cu:13" in said and "ATOMG" in said
    assert "all 8 blocks ran together from the start" in said
    assert "resident blocks" in said and "1,056 at once" in said  # 132 SMs x 8 blocks


@needs_nvdisasm
def test_one_block_takes_every_tile_and_hits_its_budget_where_it_runs_alone() -> None:
    # a grid of one block takes the 104 tiles alone: past --max-instructions (26 tiles)
    with pytest.raises(TraceError, match="block \\(0,0,0\\).*--max-instructions"):
        _trace(TILES, 1, PER_THREAD)


@needs_nvdisasm
def test_a_grid_past_what_the_gpu_holds_runs_in_launch_order_as_many_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a GPU that holds 4 blocks at once: the first 4 take every tile, the 8 after them each
    # take one empty-handed turn; the totals are the same
    monkeypatch.setattr(tracer, "at_once", lambda *_: 4)
    k = _trace(24, 12)
    assert _totals(k) == _by_hand(24, 12)
    said = k.launch.coverage.differs or ""
    assert "every block ran in launch order, 4 at a time" in said
    assert "as many as the GPU holds at once" in said


@pytest.mark.parametrize(
    ("body", "found"),
    [
        # the old value read (a shuffle passes it on): the blocks share work
        (
            "ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR6][R2.64], R7\nSHFL.IDX PT, R6, R5, RZ, 0x1f\n"
            "EXIT",
            "ATOMG",
        ),
        # read as an address
        ("ATOMG.E.ADD.STRONG.GPU PT, R4, desc[UR6][R2.64], R7\nLDS R0, [R4]\nEXIT", "ATOMG"),
        # never read (only written again); RED returns nothing; a generic ATOM may address
        # shared memory
        ("ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR6][R2.64], R7\nMOV R5, R7\nEXIT", None),
        ("RED.E.ADD.STRONG.GPU desc[UR6][R2.64], R7\nMOV R6, R7\nEXIT", None),
        ("ATOM.E.ADD.STRONG.GPU PT, R5, [R2.64], R7\nMOV R6, R5\nEXIT", None),
        # a ticket of atomicInc; a lock's compare-and-swap and a float's sum hand out none
        ("ATOMG.E.INC.STRONG.GPU PT, R5, desc[UR6][R2.64], R7\nMOV R6, R5\nEXIT", "ATOMG"),
        ("ATOMG.E.CAS.STRONG.GPU PT, R5, [R2.64], R6, R7\nMOV R6, R5\nEXIT", None),
        ("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R5, [R2.64], R7\nMOV R6, R5\nEXIT", None),
    ],
)
def test_the_criterion_is_an_atomg_whose_old_value_is_read(body: str, found: str | None) -> None:
    fn = _program(body)
    got = shares_work(fn.instructions, decode_function(fn).destinations)
    assert (None if got is None else got.opcode) == found


def test_blocks_run_together_are_what_the_gpu_holds_within_a_batch() -> None:
    assert at_once(1056, 1, 256) == 256  # a batch's memory holds fewer
    assert at_once(132, 1, 256) == 132
    assert at_once(264, 2, 256) == 132  # clusters of 2
    assert at_once(0, 1, 256) == 256  # not known
    assert at_once(1, 2, 256) == 1  # at least one cluster
    ins = _program("EXIT").instructions[0]
    said = SharesWork(ins, 12, 4, 4).text()
    assert "every block ran in launch order, 4 at a time" in said
    assert "fewer" in SharesWork(ins, 12, 4, 8).text()
