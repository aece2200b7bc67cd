"""Partial-warp stores and 16-byte loads against Nsight Compute's ideal wavefronts (issues
29/30): tests/data/trace/ideal2, the project's own kernels measured on the H200 (its README).

Each launch is traced as the lab launched it and compared per SASS instruction with what
Nsight Compute's source page counted: executions, wavefronts and ideal wavefronts (the
ideal: docs/hardware-model.md section 8). The expected figures are the H200's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_measured import traced

DATA = TRACE_DATA / "ideal2"
LAUNCHES = {x["id"]: x for x in json.loads((DATA / "launches.json").read_text())["launches"]}
MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
#: in `make test` one lane set of each kind of access; the others (and the repeats) slow
FAST = {"st64_l0_16", "st128_l0_8_16_24", "ld128_odd", "st32_h_low8_high8"}


def _speed(lid: str) -> Any:
    return pytest.param(lid, marks=() if lid in FAST else pytest.mark.slow)


@needs_nvdisasm
@pytest.mark.parametrize("launch_id", [_speed(lid) for lid in sorted(LAUNCHES)])
def test_each_access_costs_what_nsight_counted(launch_id: str, tmp_path: Path) -> None:
    kernel = traced(LAUNCHES[launch_id], tmp_path, DATA)
    got = {
        a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts, a.cost.ideal_wavefronts)
        for a in kernel.accesses
    }
    want = {
        i["pc"]: (i["executed"], i["wavefronts"], i["ideal"])
        for i in MEASURED[launch_id]["instructions"]
        if i["executed"]
    }
    assert got == want
