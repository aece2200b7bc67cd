"""shmem trace against the H200 on issue 30's pair-rule lab (tests/data/trace/pairs3): one
predicated ``LDS.64`` (``pr_ld64``) or ``LDS.128`` (``pr_ld128``) per launch, each lane's
element index read from the launch's input file (-1: the lane stays off). Every launch was
made twice (``_r2``); both agree.

Each launch is traced as measured and compared per SASS instruction with Nsight Compute's
source counters (warp executions, wavefronts). Where the pair rule (docs/hardware-model.md
section 3) misses the measured read, the launch is listed below as open, strictly: a listed
read that becomes exact fails the test until it is taken off the list.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_atomloops import shared_rows
from .test_trace_everyday import per_instruction
from .test_trace_measured import traced

DATA = TRACE_DATA / "pairs3"
LAUNCHES = {x["id"]: x for x in json.loads((DATA / "launches.json").read_text())["launches"]}
MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
LD64, LD128 = 496, 576  # the pcs of the one LDS.64 and the one LDS.128

# the measured LDS (executions, wavefronts) where the pair rule does not give it: every
# 8-byte case costs its unmerged half-warp phases, the rule merges them (docs section 10)
OPEN = {
    "p8_c23": (LD64, (1, 4)),  # lanes 2, 3, 18, 19, 2 and 3 on one bank: the rule 2
    "p8_c01_only": (LD64, (1, 3)),  # the rule 2
    "p8_c1617_only": (LD64, (1, 3)),  # the rule 2
    "p8_c01_more": (LD64, (1, 3)),  # the rule 2
    "p8_c04": (LD64, (1, 4)),  # no distance-1 clash, distance 2 vacuous: the rule 2
    "p8_c01_d2real_half": (LD64, (1, 3)),  # the rule 2
    "p8_c01_d2real": (LD64, (1, 4)),  # distance 2 held by active lanes everywhere: the rule 2
    "p16_c01": (LD128, (1, 3)),  # 16 bytes, lanes 0, 1, 8, 9: the rule 2
}


@needs_nvdisasm
@pytest.mark.slow
@pytest.mark.parametrize("launch_id", [x for x in LAUNCHES if not x.endswith("_r2")])
def test_every_shared_instruction_as_measured(launch_id: str, tmp_path: Path) -> None:
    kernel = traced(LAUNCHES[launch_id], tmp_path, DATA)
    got = {pc: v for pc, v in per_instruction(kernel).items() if v[0]}
    listed = {OPEN[launch_id][0]} if launch_id in OPEN else set()
    for run in (launch_id, launch_id + "_r2"):
        assert kernel.misc.wavefronts == MEASURED[run]["misc_wavefronts"]  # hardware-model 9e
        exp = shared_rows(MEASURED[run]["instructions"])
        for pc in set(got) | set(exp):
            if pc in listed:
                assert got.get(pc) != exp.get(pc)  # exact now: take it out of OPEN
            else:
                assert got.get(pc) == exp.get(pc), (run, pc, got.get(pc), exp.get(pc))


@pytest.mark.parametrize("launch_id", sorted(OPEN))
def test_the_open_reads_are_what_both_launches_measured(launch_id: str) -> None:
    pc, row = OPEN[launch_id]
    for run in (launch_id, launch_id + "_r2"):
        assert shared_rows(MEASURED[run]["instructions"])[pc] == row
