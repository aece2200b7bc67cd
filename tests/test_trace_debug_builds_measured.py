"""The debug-build lab as the H200 ran it (issue 29): every launch of tests/data/trace/
debug_builds, both builds (-G and -O3), traced against what Nsight Compute counted
(measured.json) and the buffers the H200 wrote (outputs/).

A -G build reaches shared memory through generic ``LD``/``ST``/``ATOM`` instructions on the
shared window; the H200 counts each as a request of the shared op its ``LDS``/``STS``/
``ATOMS`` form is (``smsp__sass_inst_executed_op_shared_*``: not ``smsp__inst_executed_
op_shared_*``, which counts the shared opcodes only) with that form's wavefronts: a
generic ``ATOM.E.ADD`` of 32 lanes on one word costs 32 wavefronts (``add_one_g``), as
an ``ATOMS.ADD`` that several lanes reach does; the -O3 build reduces the warp first
(``REDUX``) and costs 1. The 64-bit ``ATOM.E.ADD.64 P0`` is done on shared memory (its
predicate set: the ``ATOMS.CAST.SPIN.64`` loop after it never runs, ``add_wide_g``).
docs/hardware-model.md, 9f.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm
from .misc_open import check_misc

LAB = TRACE_DATA / "debug_builds"
MEASURED = {m["id"]: m for m in json.loads((LAB / "measured.json").read_text())["launches"]}
UNITS = {"load": "ld", "store": "st", "atomic": "atom"}

#: per-op figures of the first pass that were the warps' timing: (op, the repeat's figure,
#: the structural count the trace gives)
TIMING = {
    # the padded tile's stores have no conflict: the first pass read 7 arbitration
    # conflicts and 137 wavefronts, the repeat 6 and 130, the trace the 128 requests' 128
    "transpose_g": ("store", 130, 128),
}
#: the launches whose op_misc the rule misses, (the rule's, the H200's): where a warp leaves in
#: several groups (recursive_walk: 6 exit fences, traced as 1). transpose_g, virtual_call_g and
#: cub_block_g were here (388, 5, 26) until a warp's reads of threadIdx.x after its first cost
#: 1 each (a -G build reads it again in every statement that names it)
MISC_OPEN = {
    "reduce_g": (50, 52),
    "recursive_walk_g": (6, 16),
}
SLOW = {"transpose_g", "transpose_o3", "cub_block_g"}  # seconds each


def _measured_ops(launch_id: str) -> dict[str, tuple[int, int]]:
    c = MEASURED[launch_id]["counters"]
    return {
        op: (
            c.get(f"smsp__sass_inst_executed_op_shared_{u}", 0),
            c.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{u}", 0),
        )
        for op, u in UNITS.items()
    }


def _instructions(launch_id: str) -> dict[int, tuple[int, int]]:
    """The source counters' shared instructions of the kernel's own code (Nsight lists no
    called function's): (warp executions, L1 wavefronts shared) by pc."""
    out = {}
    for i in MEASURED[launch_id]["instructions"]:
        if i["Instructions Executed"] and i["L1 Wavefronts Shared"]:
            out[i["pc"]] = (i["Instructions Executed"], i["L1 Wavefronts Shared"])
    return out


def test_the_first_pass_timing_figures_are_what_the_lab_read() -> None:
    for launch_id, (op, again, _) in TIMING.items():
        c = MEASURED[launch_id]
        unit = UNITS[op]
        assert c["repeat_differs"][f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{unit}"] == again
        assert c["counters"][f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{unit}"] > 0


def test_the_debug_builds_shared_requests_are_generic_instructions() -> None:
    # -G: no LDS, STS or ATOMS at all, every shared request a generic instruction's
    for launch_id, m in MEASURED.items():
        c: dict[str, Any] = m["counters"]
        shared_opcodes = sum(c.get(f"smsp__inst_executed_op_shared_{u}", 0) for u in UNITS.values())
        requests = sum(n for n, _ in _measured_ops(launch_id).values())
        if launch_id.endswith("_g"):
            assert shared_opcodes == 0 and requests > 0
            generic = sum(c.get(f"smsp__inst_executed_op_generic_{u}", 0) for u in UNITS.values())
            assert generic >= requests


@needs_nvdisasm
@pytest.mark.parametrize(
    "launch_id", [pytest.param(x, marks=pytest.mark.slow) if x in SLOW else x for x in MEASURED]
)
def test_a_launch_as_the_h200_counted_and_wrote_it(launch_id: str) -> None:
    kt, out = lab.run(launch_id, LAB)
    assert out[0] == lab.gpu_output(launch_id, 0, LAB)  # byte for byte
    want = _measured_ops(launch_id)
    if launch_id in TIMING:
        op, again, structural = TIMING[launch_id]
        assert want[op][1] > again > structural
        want[op] = (want[op][0], structural)
    got = lab.per_op(kt)
    assert {op: got[op] for op in UNITS} == want
    assert not kt.not_modelled
    check_misc(
        launch_id,
        got["misc"][1],
        MEASURED[launch_id]["counters"].get(
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc", 0
        ),
        MISC_OPEN,
    )
    traced = {a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts) for a in kt.accesses}
    for pc, measured in _instructions(launch_id).items():
        assert traced[pc] == measured, (pc, traced[pc], measured)
