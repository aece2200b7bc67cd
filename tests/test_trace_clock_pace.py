"""The trace's clock model against the GPU's pace (issue 30; docs/trace-emulator-notes.md,
"Clocks and delay loops", the table of the pace).

tests/data/trace/clockspin/pace.json holds what one warp's loops read from ``clock64()`` on
an H100 (the clock-pace lab: lab/make_launches.py, lab/run.sh; three runs, every lane of a
run the same value): cycles of dependent shared-load and integer chains, turns of delay
loops, and the two-warp kernels of clockspin.cu. The model advances a block's clock 2
cycles a warp instruction (a busy SM's pace), so for one warp working alone it must never
read more cycles, or count fewer turns, than the GPU did; the chains' values are exact.
"""

from __future__ import annotations

import json
import re
from functools import cache

import numpy as np
import pytest

from shmem_cli.trace.emulator.state import GlobalMemory
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.tracer import find_function, trace_kernel

from .conftest import ROOT, TEST_DATA, needs_nvdisasm
from .test_trace_measured import cubin

LAB = TEST_DATA / "trace" / "clockspin"
PACE = json.loads((LAB / "pace.json").read_text())
LAUNCHES = {L["id"]: L for L in json.loads((LAB / "launches.json").read_text())["launches"]}
DOC = ROOT / "docs" / "trace-emulator-notes.md"
#: the launches whose first argument counts turns (int32); the others read cycles (int64)
COUNTS = ("cp_count", "cs_overlap")
#: one warp working alone: the chains, and the two-warp kernels' worker with no wait
ALONE = ("lds_", "alu_", "overlap_w0_", "timed_w0_")


@cache
def traced(lid: str) -> np.ndarray:
    """What the trace left in launch ``lid``'s first argument (every lane)."""
    launch = LAUNCHES[lid]
    info, disassembly = cubin(LAB / launch["cubin"])
    k = find_kernel(info, launch["kernel"])
    args = tuple(
        f"{i}={a.get('int', a.get('u64'))}"
        for i, a in enumerate(launch["args"])
        if "zeros" not in a
    )
    plan = plan_launch(
        k, kernel_params(k, None), block=tuple(launch["block"]), grid=(1, 1, 1), args=args
    )
    memory = GlobalMemory()
    trace_kernel(find_function(disassembly, k, info.path), k, info.arch, plan, memory=memory)
    first = plan.buffers[0].param
    raw = memory.read(first.name or f"param{first.ordinal}")
    return np.frombuffer(raw, dtype=np.int32 if launch["kernel"] in COUNTS else np.int64)


def test_the_gpu_read_the_same_in_every_run() -> None:
    for lid, runs in PACE["launches"].items():
        assert max(runs) - min(runs) <= 1, lid  # lds_16 read 704 once, 705 twice


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(PACE["chain_values"]["launches"]))
def test_the_chains_compute_what_the_gpu_computed(lid: str) -> None:
    assert traced(lid)[32:64].tolist() == PACE["chain_values"]["launches"][lid]


def _slow_if_long(lid: str) -> object:
    # a loop of 100,000 cycles runs about 5,000 turns in the trace: 1.5-2 s
    return pytest.param(lid, marks=pytest.mark.slow) if "b100000" in lid else lid


@needs_nvdisasm
@pytest.mark.parametrize("lid", [_slow_if_long(k) for k in PACE["launches"] if k.startswith(ALONE)])
def test_one_warp_alone_runs_at_least_at_the_gpu_s_pace(lid: str) -> None:
    gpu = min(PACE["launches"][lid])
    model = int(traced(lid)[0])
    if LAUNCHES[lid]["kernel"] in COUNTS:
        assert model >= gpu, (lid, model, gpu)  # more turns fit in the budget
    else:
        assert 0 < model <= gpu, (lid, model, gpu)  # fewer cycles for the same work


def _doc_rows() -> dict[str, tuple[int, int]]:
    """The pace table of the notes: launch id -> (GPU, trace)."""
    text = DOC.read_text()
    table = text[text.index("<!-- table:clock-pace -->") :]
    rows = re.findall(r"^ *\| `(\w+)` \|[^|]*\| ([\d,]+) \| ([\d,]+) \|", table, re.M)
    return {lid: (int(g.replace(",", "")), int(t.replace(",", ""))) for lid, g, t in rows}


@needs_nvdisasm
@pytest.mark.slow  # traces two 100,000-cycle loops (3-4 s)
def test_the_notes_table_says_what_the_gpu_and_the_trace_read() -> None:
    rows = _doc_rows()
    assert len(rows) >= 8
    for lid, (gpu, model) in rows.items():
        assert gpu == PACE["launches"][lid][0], lid
        assert model == int(traced(lid)[0]), lid
