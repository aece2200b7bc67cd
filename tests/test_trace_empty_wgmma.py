"""The empty wgmma ptxas writes after a loop of wgmma that may run no turn
(``HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0``; tests/data/trace/empty_wgmma): it
writes no register and reads no descriptor, and the trace takes it as costing nothing (it
was 'internal emulator error: index 65 is out of bounds', reading the descriptor of URZ)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm

CUBIN = TRACE_DATA / "empty_wgmma" / "empty_wgmma.sm_90a.cubin"


def _wgmma(n: int) -> dict[str, Any]:
    res = CliRunner().invoke(main, ["trace", str(CUBIN), "-b", "128", "-a", f"n={n}", "-fjson"])
    assert res.exit_code == 0, res.output
    kernel = json.loads(res.output)["files"][0]["kernels"][0]
    assert "HGMMA.64x8x16.F16 RZ" not in json.dumps(kernel["accesses"])  # never a row
    return dict(kernel["totals"]["wgmma"])


@needs_nvdisasm
@pytest.mark.parametrize("n", [0, 1, 3])
def test_the_empty_wgmma_adds_nothing_to_the_loops(n: int) -> None:
    got = _wgmma(n)
    # by hand: one request per warp of the warpgroup (4) for each of the loop's n wgmma
    assert got["requests"] == 4 * n
    one = _wgmma(1)
    assert got["wavefronts"] == n * one["wavefronts"]
