"""Which heat maps a trace makes: only a bank-conflicted instruction's (the report draws no
other), once its totals are known, and at most ``aggregate.HEAT_BYTES`` of them for a
launch. A sampled grid's maps span every warp of the grid: an attention kernel's 200
conflict-free loads over 1,536 blocks held 2.1 GB of maps before (the issue 30 sweep)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import shmem_cli
from shmem_cli.cli import main
from shmem_cli.cuda.sass import Instruction
from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.engine import AccessKind
from shmem_cli.trace import aggregate
from shmem_cli.trace.requests import InstructionRecords
from tests.conftest import needs_nvdisasm

STORE = AccessKind("store", 4)
CUBIN = str(Path(__file__).parent / "data" / "trace" / "column_read.sm_90.cubin")


@needs_nvdisasm
def test_only_a_conflicted_instructions_heat_map_is_kept() -> None:
    # column_read.cu: line 7 stores a 32x32 tile by rows (no conflict), line 9 reads it by
    # columns (32-way)
    result = shmem_cli.trace(CUBIN, block=(32, 32))
    (store,) = [a for a in result.accesses if a.cost.op == "store"]
    (load,) = [a for a in result.accesses if a.cost.op == "load"]
    assert store.cost.conflict_free and store.cost.heat is None and store.cost.heat_phases is None
    assert load.cost.heat is not None
    assert load.cost.heat_phases is not None and int(load.cost.heat.max()) == 32
    assert load.cost.heat.shape == (1, 32)  # one occurrence down, 32 warps across
    # the report still draws the conflicted load's map (here one line: every request alike)
    out = CliRunner().invoke(main, ["trace", CUBIN, "--block", "32,32"]).output
    assert "requests: all 32 (32 warp(s) x 1 iteration(s)) cost 32 wavefront(s) each" in out


def store_records(stride: int) -> InstructionRecords:
    """One store of 4 warps, a word a lane, lanes ``stride`` bytes apart (one warp a row)."""
    text = "STS [R2], R0"
    rec = InstructionRecords(0, Instruction(0x80, None, "STS", (), (), "k.cu", 6, text), STORE)
    addr = np.tile(0x400 + stride * np.arange(32, dtype=np.int64), (4, 1))
    zeros = np.zeros(4, dtype=np.int64)
    rec.add(addr, np.ones((4, 32), dtype=bool), np.arange(4), zeros, zeros.astype(np.uint8))
    return rec


def test_maps_past_the_bound_are_not_made_and_the_totals_kept() -> None:
    # lanes 128 bytes apart: 32-way, each of the 4 requests 32 wavefronts; its map and its
    # phases' map are 4 warps x 1 occurrence of int32: 32 bytes
    for left, kept in ((32, True), (31, False)):
        room = aggregate.HeatRoom(left)
        access = aggregate.trace_access(
            store_records(128), SM90, warps=4, warps_per_block=4, blocks=1, room=room
        )
        assert (access.cost.heat is not None, access.cost.heat_phases is not None) == (kept, kept)
        assert room.left == (0 if kept else 31)
        assert (access.cost.requests, access.cost.wavefronts, access.cost.max_ways) == (4, 128, 32)


def test_a_conflict_free_instructions_map_is_never_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """The maps are made once the totals show a bank conflict, never made and then dropped:
    a conflict-free instruction of a whole-grid sweep costs no map at all."""
    made: list[tuple[int, int]] = []
    real = aggregate.heat_maps

    def counted(*args: Any, warps: int, iterations: int) -> Any:
        made.append((warps, iterations))
        return real(*args, warps=warps, iterations=iterations)

    monkeypatch.setattr(aggregate, "heat_maps", counted)
    room = aggregate.HeatRoom(1 << 20)
    for stride, conflicted in ((4, False), (128, True)):
        access = aggregate.trace_access(
            store_records(stride), SM90, warps=4, warps_per_block=4, blocks=1, room=room
        )
        assert (access.cost.heat is not None) is conflicted
    assert made == [(4, 1)]  # the 32-way store's only
    assert room.left == (1 << 20) - 32
