"""shmem trace against the H200 on issue 30's pair-rule labs (tests/data/trace/pairs3 and
pairs4): one predicated ``LDS.64`` (``pr_ld64``) or ``LDS.128`` (``pr_ld128``) per launch,
each lane's element index read from the launch's input file (-1: the lane stays off). Every
launch was made twice (``_r2``); both agree.

Each launch is traced as measured and compared per SASS instruction with Nsight Compute's
source counters (warp executions, wavefronts), and the reference model (tests/reference.py)
costs each read from its input file as measured. pairs3's reads and pairs4's (4 to 16 lanes
whose merged phase would ask one bank for two words) keep their unmerged phases where the
pair rule's exception holds, at most 15 lanes active (docs/hardware-model.md 3); pairs4's
three 16-lane reads, which the bound merges, are listed open (strict: section 10).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .reference import request_cost
from .test_trace_atomloops import shared_rows
from .test_trace_everyday import per_instruction
from .test_trace_measured import traced

LABS = ("pairs3", "pairs4")
LAUNCHES = {
    lab: {
        x["id"]: x for x in json.loads((TRACE_DATA / lab / "launches.json").read_text())["launches"]
    }
    for lab in LABS
}
MEASURED = {
    lab: {
        m["id"]: m for m in json.loads((TRACE_DATA / lab / "measured.json").read_text())["launches"]
    }
    for lab in LABS
}
#: measured unmerged with 16 lanes, which shmem's bound merges (docs/hardware-model.md 10)
OPEN = {("pairs4", "d2_k16"), ("pairs4", "d1_k16"), ("pairs4", "p16_k16")}


def _cases() -> list[Any]:
    strict = pytest.mark.xfail(strict=True, reason="16 lanes: open (hardware-model.md 10)")
    return [
        pytest.param(lab, lid, marks=strict if (lab, lid) in OPEN else (), id=f"{lab}-{lid}")
        for lab in LABS
        for lid in LAUNCHES[lab]
        if not lid.endswith("_r2")
    ]


@needs_nvdisasm
@pytest.mark.slow
@pytest.mark.parametrize(("lab", "launch_id"), _cases())
def test_every_shared_instruction_as_measured(lab: str, launch_id: str, tmp_path: Path) -> None:
    kernel = traced(LAUNCHES[lab][launch_id], tmp_path, TRACE_DATA / lab)
    got = {pc: v for pc, v in per_instruction(kernel).items() if v[0]}
    for run in (launch_id, launch_id + "_r2"):
        measured = MEASURED[lab][run]
        assert kernel.misc.wavefronts == measured["misc_wavefronts"]  # hardware-model 9e
        assert got == shared_rows(measured["instructions"]), run


@pytest.mark.parametrize(("lab", "launch_id"), _cases())
def test_the_reference_costs_each_read_as_measured(lab: str, launch_id: str) -> None:
    launch = LAUNCHES[lab][launch_id]
    width = 8 if launch["kernel"] == "pr_ld64" else 16
    index = struct.unpack("<32i", (TRACE_DATA / lab / launch["args"][1]["file"]).read_bytes())
    addr = [None if k < 0 else k * width for k in index]
    cost = request_cost(addr, "load", width, "inc", 1)
    for run in (launch_id, launch_id + "_r2"):
        (lds,) = [i for i in MEASURED[lab][run]["instructions"] if "LDS" in i["sass"]]
        assert (lds["executed"], lds["wavefronts"]) == (1, cost.wavefronts)
