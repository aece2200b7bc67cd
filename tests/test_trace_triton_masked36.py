"""Masked global accesses of Triton 3.6 and ``op_misc`` (tests/data/triton/masked36: the
project's own kernels, 4 warps over 128 elements with the mask ``offs < n``, each launched
with n = 40, 128 and 0, twice under Nsight Compute on an H100).

The rule from the kernels' structure (docs/hardware-model.md 9e): each warp's end 1; each
of the four predicated masked loads (``@!P0 LDG``) and three predicated masked stores a warp
reaches with every lane off 1; each masked atomic a warp runs 2, for the GPU-scope fence
Triton puts before it (``MEMBAR.ALL.GPU``); a single masked load or store and the atomics
are branched around, costing nothing where the warp's lanes are all off."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TEST_DATA, fast_few, needs_nvdisasm

DATA = TEST_DATA / "triton" / "masked36"
MEASURED = json.loads((DATA / "measured.json").read_text())["launches"]
MISC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc"
WARPS = 4
# per kernel: (guarded-off loads and stores a fully masked warp reaches, atomics a warp runs)
KERNELS = {
    "masked_load": (0, 0),
    "masked_store": (0, 0),
    "masked_both": (0, 0),
    "masked_load_x4": (4, 0),
    "masked_store_x4": (3, 0),
    "masked_atomic": (0, 1),
    "masked_atomic_ret": (0, 1),
    "masked_atomic_x4": (0, 4),
    "masked_atomic_ret_x4": (0, 4),
}


def rule(kernel: str, n: int) -> int:
    running = sum(1 for w in range(WARPS) if 32 * w < n)  # warps with a lane on
    off, atomics = KERNELS[kernel]
    return WARPS + off * (WARPS - running) + 2 * atomics * running


def split(launch: str) -> tuple[str, int]:
    kernel, n = launch.rsplit("_n", 1)
    return kernel, int(n)


def test_every_launch_was_measured_twice_alike() -> None:
    assert {split(k) for k in MEASURED} == {(k, n) for k in KERNELS for n in (40, 128, 0)}
    for launch, runs in MEASURED.items():
        assert len(runs) == 2 and runs[0][MISC] == runs[1][MISC], launch


@pytest.mark.parametrize("launch", sorted(MEASURED))
def test_the_rule_on_every_launch(launch: str) -> None:
    assert rule(*split(launch)) == MEASURED[launch][0][MISC]


@needs_nvdisasm
@pytest.mark.parametrize("launch", fast_few(sorted(MEASURED)))
def test_traced_as_measured(launch: str) -> None:
    kernel, n = split(launch)
    command = ["trace", str(DATA / "cache"), "--kernel", kernel, "--grid", "1"]
    got = CliRunner().invoke(main, [*command, "--arg", f"n={n}", "--no-tables", "-f", "json"])
    assert got.exit_code == 0, got.output
    totals = json.loads(got.output)["files"][0]["kernels"][0]["totals"]
    assert totals["misc"]["wavefronts"] == MEASURED[launch][0][MISC]
    # no shared-memory loads or stores in these kernels, as Nsight counts
    assert totals["load"]["wavefronts"] == MEASURED[launch][0].get(
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld", 0
    )
