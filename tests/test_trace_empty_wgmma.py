"""The empty wgmma ptxas writes after a loop of wgmma that may run no turn
(``HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0``; tests/data/trace/empty_wgmma): it
writes no register and reads no descriptor, but it executes. Measured (measured.json): one
shared request a warp and no LSU wavefront, for every loop count; the trace stopped there
before ('internal emulator error: index 65 is out of bounds', reading the descriptor of URZ),
then took it as costing nothing, one request a warp short."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm

DATA = TRACE_DATA / "empty_wgmma"
MEASURED = json.loads((DATA / "measured.json").read_text())


def _totals(n: int) -> dict[str, Any]:
    cubin = DATA / "empty_wgmma.sm_90a.cubin"
    res = CliRunner().invoke(main, ["trace", str(cubin), "-b", "128", "-a", f"n={n}", "-fjson"])
    assert res.exit_code == 0, res.output
    return dict(json.loads(res.output)["files"][0]["kernels"][0]["totals"])


@needs_nvdisasm
@pytest.mark.parametrize("launch", MEASURED["launches"], ids=lambda m: f"n={m['n']}")
def test_the_empty_wgmma_is_a_request_a_warp_and_no_wavefront(launch: dict[str, int]) -> None:
    got = _totals(launch["n"])
    requests, wavefronts = (
        "smsp__sass_inst_executed_op_shared_",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_",
    )
    for op, counter in (("wgmma", "gmma"), ("store", "st")):
        assert got[op]["requests"] == launch[f"{requests}{counter}.sum"], op
        assert got[op]["wavefronts"] == launch[f"{wavefronts}{counter}.sum"], op
    assert got["misc"]["wavefronts"] == launch[f"{wavefronts}misc.sum"]
    # by hand: the loop's n wgmma and the empty one, each a request per warp of the group
    assert got["wgmma"]["requests"] == 4 * (launch["n"] + 1)
