"""Which heat maps a trace keeps: only a bank-conflicted instruction's (the report draws no
other), and at most ``aggregate.HEAT_BYTES`` of them for a launch. A sampled grid's maps span
every warp of the grid: an attention kernel's 200 conflict-free loads over 1,536 blocks held
2.1 GB of maps before (the issue 30 sweep)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import shmem_cli
from shmem_cli.cli import main
from shmem_cli.trace.aggregate import kept_heat
from tests.conftest import needs_nvdisasm

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


@needs_nvdisasm
def test_maps_past_the_bound_are_dropped_and_the_totals_kept() -> None:
    result = shmem_cli.trace(CUBIN, block=(32, 32))
    (load,) = [a for a in result.accesses if a.cost.op == "load"]
    assert load.cost.heat is not None
    size = load.cost.heat.nbytes + load.cost.heat_phases.nbytes  # type: ignore[union-attr]
    (kept,) = kept_heat([load], limit=size)
    assert kept.cost.heat is not None
    (dropped,) = kept_heat([load], limit=size - 1)
    assert dropped.cost.heat is None and dropped.cost.heat_phases is None
    assert (dropped.cost.requests, dropped.cost.wavefronts) == (32, 1024)
    assert dropped.cost.max_ways == 32
