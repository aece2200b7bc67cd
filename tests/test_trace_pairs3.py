"""shmem trace against the H200 on issue 30's pair-rule lab (tests/data/trace/pairs3): one
predicated ``LDS.64`` (``pr_ld64``) or ``LDS.128`` (``pr_ld128``) per launch, each lane's
element index read from the launch's input file (-1: the lane stays off). Every launch was
made twice (``_r2``); both agree.

Each launch is traced as measured and compared per SASS instruction with Nsight Compute's
source counters (warp executions, wavefronts), and the reference model (tests/reference.py)
costs each read from its input file as measured. Every 8-byte read here and the 16-byte one
with a conflict keep their unmerged phases, although distance 2 pairs up: a merged phase
would ask one bank for two words, with at most 15 lanes active (docs/hardware-model.md 3).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .reference import request_cost
from .test_trace_atomloops import shared_rows
from .test_trace_everyday import per_instruction
from .test_trace_measured import traced

DATA = TRACE_DATA / "pairs3"
LAUNCHES = {x["id"]: x for x in json.loads((DATA / "launches.json").read_text())["launches"]}
MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
FIRST = [x for x in LAUNCHES if not x.endswith("_r2")]


@needs_nvdisasm
@pytest.mark.slow
@pytest.mark.parametrize("launch_id", FIRST)
def test_every_shared_instruction_as_measured(launch_id: str, tmp_path: Path) -> None:
    kernel = traced(LAUNCHES[launch_id], tmp_path, DATA)
    got = {pc: v for pc, v in per_instruction(kernel).items() if v[0]}
    for run in (launch_id, launch_id + "_r2"):
        assert kernel.misc.wavefronts == MEASURED[run]["misc_wavefronts"]  # hardware-model 9e
        assert got == shared_rows(MEASURED[run]["instructions"]), run


@pytest.mark.parametrize("launch_id", FIRST)
def test_the_reference_costs_each_read_as_measured(launch_id: str) -> None:
    launch = LAUNCHES[launch_id]
    width = 8 if launch["kernel"] == "pr_ld64" else 16
    index = struct.unpack("<32i", (DATA / launch["args"][1]["file"]).read_bytes())
    addr = [None if k < 0 else k * width for k in index]
    cost = request_cost(addr, "load", width, "inc", 1)
    for run in (launch_id, launch_id + "_r2"):
        (lds,) = [i for i in MEASURED[run]["instructions"] if "LDS" in i["sass"]]
        assert (lds["executed"], lds["wavefronts"]) == (1, cost.wavefronts)
