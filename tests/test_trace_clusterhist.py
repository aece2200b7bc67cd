"""A histogram spread over a 4-CTA cluster (tests/data/trace/clusterhist), against the H200.

Every thread adds 1 to its key's bin through ``cluster.map_shared_rank``: one generic
``ATOM.E.ADD`` whose lanes reach their own CTA's shared memory or another CTA's. Measured
(measured.json, Nsight Compute's per-op counters and the ATOM's source-counter row), per
launch: its lanes on the own CTA are an ordinary shared atomic of its ``ATOMS`` form (the
row's wavefronts: lanes on one word served one by one, 32 for a warp on one word), counted
in ``smsp__sass_inst_executed_op_shared_atom`` wherever a warp has such a lane; a warp with
a lane on another CTA counts once in ``..._op_dshared_atom``. The keys come from global
memory, so the CTAs of one cluster, and the clusters, do not behave alike: every block runs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.trace.result import KernelTrace

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm

HERE = TRACE_DATA / "clusterhist"
ATOM_PC = 0x4D0

pytestmark = needs_nvdisasm


#: the H200's run (the first three launches) and two runs of all eight on an H100
RUNS = ("measured.json", "measured_h100_run1.json", "measured_h100_run2.json")


def measured(run: str = RUNS[0]) -> dict[str, dict[str, Any]]:
    data = json.loads((HERE / run).read_text())
    return {L["id"]: L for L in data["launches"]}


def traced(lid: str) -> KernelTrace:
    kt, _ = lab.run(lid, folder=HERE)
    return kt


@pytest.mark.parametrize(("run", "lid"), [(r, lid) for r in RUNS for lid in sorted(measured(r))])
def test_own_and_remote_lanes_of_one_atomic_as_the_gpu_counts_them(run: str, lid: str) -> None:
    got, want = traced(lid), measured(run)[lid]
    (row,) = [i for i in want["instructions"] if i["pc"] == ATOM_PC]
    atomic, dsmem = got.totals["atomic"], got.dsmem
    assert atomic.requests == want["per_op"]["atom"]["requests"]
    assert atomic.wavefronts == row["wavefronts"]
    assert dsmem.requests == want["per_op"]["dshared"]["atom"]
    assert got.data_from == ("0",)  # the keys decide which words and CTAs
    if not lid.startswith("hist_rem_") and not lid.startswith("hist_own_"):
        return  # (below: where a CTA's words see no other CTA's atomics at the same time)
    # Nsight's op_atom: the own lanes' wavefronts and one a warp with remote lanes
    assert atomic.wavefronts + dsmem.wavefronts == want["per_op"]["atom"]["wavefronts"]


def test_a_warp_with_lanes_here_and_there_pays_the_remote_phase_in_its_own() -> None:
    """hist_seq: every warp has 8 lanes on its CTA's words (1 wavefront) and 24 on the other
    three CTAs; Nsight's op_atom holds 128 for 128 warps on the H200, 129 in both H100 runs
    (one more under contention: the others' atomics land on the same words), not 256."""
    got = traced("hist_seq")
    assert got.totals["atomic"].wavefronts + got.dsmem.wavefronts == 128
    seen = [measured(run)["hist_seq"]["per_op"]["atom"]["wavefronts"] for run in RUNS]
    assert seen == [128, 129, 129]


@pytest.mark.parametrize("lid", ["hist_rand", "hist_rem_rand"])
def test_an_address_on_global_data_keeps_the_clusters_apart(lid: str) -> None:
    """The keys decide each lane's word and CTA: the clusters are not proven alike from the
    first one. hist_rem_rand has every lane on another CTA: no request is recorded for a
    remote lane, but its address's taint still reaches the watch (its sectors differ with
    the keys)."""
    command = ["trace", *lab.trace_args(lid, HERE), "-f", "json"]
    got = CliRunner().invoke(main, command)
    assert got.exit_code == 0, got.output
    kernel = json.loads(got.output)["files"][0]["kernels"][0]
    coverage = kernel["grid_coverage"]
    assert coverage["blocks_run"] == 16 and coverage["mode"] != "alike"
    assert "ATOM.E.ADD" in coverage["differs"] and "a shared address" in coverage["differs"]
    # the remote ATOM is flagged as an access is, its data named
    (remote,) = kernel["not_modelled"]
    assert remote["data_dependent"] and remote["data_from"] == ["0"]
    assert kernel["data_dependent"] and kernel["data_from"] == ["0"]
    text = CliRunner().invoke(main, ["trace", *lab.trace_args(lid, HERE)]).output
    assert "global-memory data read from 0" in text
    assert text.split("not modelled", 1)[1].splitlines()[2].rstrip().endswith("data")
