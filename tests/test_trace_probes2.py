"""Probe lab 2 (issues 27/29/30): semantics the emulator still took from the documentation or
computed its own way, as the H200 computed them.

tests/data/trace/probes2 holds the project's own kernels that probe ``MUFU.TANH`` (float,
half and bf16 pairs) and the double seeds ``MUFU.RCP64H``/``MUFU.RSQ64H``; NaN payloads,
signs and quieting through ``DADD``/``DMUL``/``DFMA`` and through every float conversion
(``F2F`` widening and narrowing, ``HADD2.F32``, ``F2F.F64.F16``); generic atomics
(``ATOM.E.*``) other than add and compare-and-swap on the CTA's own shared memory, one lane
a word, a warp on one word and two lanes a word; shuffles whose source lane has exited.
Every buffer of every launch is compared byte for byte with what the H200 wrote
(outputs/), and the generic atomics' shared-memory requests and wavefronts with what Nsight
Compute counted (measured.json). Both come from the lab's run on the H200 (lab/run.sh, then
lab/parse_ncu.py); until they are here those tests skip, saying so.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from shmem_cli.trace.emulator import decode

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm

LAB = TRACE_DATA / "probes2"
LAUNCHES = [L["id"] for L in lab.manifest(LAB)["launches"]]
GATOM = [lid for lid in LAUNCHES if lid.startswith("gatom_")]
#: the launches make test compares (the others in make test-slow): each kind once
FAST = {"tanh", "rcp_rsq64", "nan_double", "nan_convert", "shfl_exited", "gatom_inc_warp"}
UNITS = {"load": "ld", "store": "st", "atomic": "atom"}
MEASURED = LAB / "measured.json"

needs_outputs = pytest.mark.skipif(
    not (LAB / "outputs").is_dir(),
    reason="the H200's buffers (tests/data/trace/probes2/outputs) are not here yet: "
    "run lab/run.sh on the H200, then lab/parse_ncu.py",
)
needs_measured = pytest.mark.skipif(
    not MEASURED.exists(),
    reason="Nsight Compute's counts (tests/data/trace/probes2/measured.json) are not here "
    "yet: run lab/run.sh on the H200, then lab/parse_ncu.py",
)


#: what the H200 computed that the emulator does not yet (strict: each fix must take its entry
#: out); none is left
PENDING: set[str] = set()
PENDING_COST: set[str] = set()


def _speed(lid: str, pending: set[str] = PENDING) -> Any:
    marks = [] if lid in FAST else [pytest.mark.slow]
    if lid in pending:
        marks.append(pytest.mark.xfail(strict=True, reason="not yet emulated as measured"))
    return pytest.param(lid, marks=marks)


@needs_nvdisasm
@needs_outputs
@pytest.mark.parametrize("launch_id", [_speed(lid) for lid in LAUNCHES])
def test_the_probes_compute_what_the_h200_computed(launch_id: str) -> None:
    """Every buffer a launch wrote, byte for byte as the H200 wrote it (outputs/: each launch
    run twice there, compare.txt naming any buffer the two runs disagree on)."""
    dumps = lab.launch(launch_id, LAB)["dumps"]
    missing = [i for i in dumps if not (LAB / "outputs" / f"{launch_id}.arg{i}.bin").exists()]
    if missing:
        pytest.skip(f"{launch_id}: the H200 run left no buffer of argument {missing[0]}")
    _, out = lab.run(launch_id, LAB)
    for i, data in out.items():
        assert data == lab.gpu_output(launch_id, i, LAB), f"{launch_id} argument {i}"


def _measured(launch_id: str) -> dict[str, tuple[int, int]]:
    doc = json.loads(MEASURED.read_text())
    entry = next((m for m in doc["launches"] if m["id"] == launch_id), None)
    if entry is None:
        pytest.skip(f"{launch_id}: Nsight Compute did not profile it (the lab ran out of time)")
    c = entry["counters"]
    return {
        op: (
            c.get(f"smsp__sass_inst_executed_op_shared_{u}", 0),
            c.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{u}", 0),
        )
        for op, u in UNITS.items()
    }


@pytest.mark.slow
@needs_nvdisasm
@needs_measured
@pytest.mark.parametrize("launch_id", [_speed(lid, PENDING_COST) for lid in GATOM])
def test_generic_atomics_cost_what_nsight_counted(launch_id: str) -> None:
    """A generic ``ATOM.E`` on the CTA's own shared memory: a request of the shared atomic op
    with the wavefronts its ``ATOMS`` form costs (docs/hardware-model.md, 9f), as Nsight
    Compute counted them per op (``smsp__sass_inst_executed_op_shared_*`` and
    ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*``), the kernel's loads and stores
    with them."""
    kt, _ = lab.run(launch_id, LAB)
    got = lab.per_op(kt)
    assert {op: got[op] for op in UNITS} == _measured(launch_id)


@needs_nvdisasm
def test_the_probes_run_the_instructions_they_probe() -> None:
    """The kernels reach the forms they were written for: the MUFU functions, double
    arithmetic, the conversions, the shuffles and a generic atomic (``ATOM``)."""
    with decode.recording() as seen:
        for lid in ("tanh", "rcp_rsq64", "nan_double", "nan_convert", "shfl_exited"):
            lab.run(lid, LAB)
        lab.run("gatom_inc_warp", LAB)
    assert {"MUFU", "DADD", "DMUL", "DFMA", "F2F", "HADD2", "SHFL", "ATOM"} <= seen


def _shuffle_source(lane: int, b: int, c: int, mode: str) -> tuple[int, bool]:
    """PTX's shfl.sync source lane and whether it is in range (the PTX ISA's pseudocode:
    ``c``'s low 5 bits the clamp, bits 8-12 the segment mask)."""
    clamp, seg = c & 31, (c >> 8) & 31
    max_lane = (lane & seg) | (clamp & ~seg & 31)
    min_lane = lane & seg
    if mode == "up":
        j = lane - b
        return j, j >= max_lane
    j = {"down": lane + b, "bfly": lane ^ b, "idx": min_lane | (b & ~seg & 31)}[mode]
    return j, j <= max_lane


def test_the_shuffles_read_exited_lanes_in_every_mode() -> None:
    """shfl_exited's inputs: in each of idx, up, down and bfly several lanes that stay read,
    in range, a lane of their warp that has exited (the case the lab measures), and others
    read a lane that stays (worked out from the inputs by PTX's rule, not by the trace)."""
    v, b, c, gone = np.fromfile(LAB / "inputs" / "shfl.bin", dtype=np.uint32).reshape(4, -1)
    for mode in ("idx", "up", "down", "bfly"):
        exited = stays = 0
        for t in np.flatnonzero(gone == 0):
            warp, lane = divmod(int(t), 32)
            cc = int(c[t]) ^ 31 if mode == "up" else int(c[t])  # the kernel's up clamp
            bb = int(b[t]) if mode == "idx" else int(b[t]) & 31
            j, ok = _shuffle_source(lane, bb, cc, mode)
            if ok and j != lane:
                exited += int(gone[32 * warp + j])
                stays += 1 - int(gone[32 * warp + j])
        assert exited >= 5 and stays >= 5, mode
