"""The emulator alone against the H200: every launch of tests/data/trace/launches.json is
traced and its shared-memory requests, fed through the engine (and the cp.async rule), must give
Nsight Compute's counters in tests/data/trace/measured.json: per op kind the requests and
wavefronts, and per SASS instruction the warp executions and wavefronts."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.arch import SM90
from shmem_cli.trace import cubin, emulator
from shmem_cli.trace.state import GlobalMemory, Launch

from .trace_util import DATA, functions, needs_nvdisasm

pytestmark = needs_nvdisasm

LAUNCHES = json.loads((DATA / "launches.json").read_text())["launches"]
MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
OP_KEYS = {"load": "ld", "store": "st", "atomic": "atom", "cp_async": "ldgsts"}

# cp.async launches where the measured rule (shmem_cli/async_copy.py) is known to fall
# short of the hardware: .ca copies whose lanes each read their own global line at a stride
# that is no power of two, and a .cg pipeline with partial (src-size 8) copies
KNOWN_RULE_GAPS = {
    "cp_pattern_4_ca_m1_s129_g33_z0_t64_n4",
    "cp_pattern_8_ca_m0_s1_g17_z0_t64_n8",
    "cp_pattern_16_ca_m0_s1_g9_z0_t64_n16",
    "cp_async_pipeline",
}


@functools.cache
def _kernels(cubin_name: str) -> dict[str, cubin.Kernel]:
    info = cubin.read_cubin(DATA / cubin_name, use_tools=False)
    return {k.mangled: k for k in info.kernels}


def _launch(spec: dict[str, Any]) -> tuple[emulator.Trace, dict[str, Any]]:
    name = Path(spec["source"]).stem + ".sm_90.cubin"
    kernel = _kernels(name)[spec["mangled"]]
    mem = GlobalMemory()
    params = bytearray(kernel.param_bytes)
    for p, arg in zip(kernel.params, spec["args"], strict=True):
        if isinstance(arg, dict) and "zeros" in arg:
            value = mem.add_buffer(arg["zeros"], f"arg{p.ordinal}")
        elif isinstance(arg, dict):
            value = mem.add_buffer((DATA / arg["file"]).read_bytes(), f"arg{p.ordinal}")
        else:
            value = int(arg)
        params[p.offset : p.offset + p.size] = (value % (1 << (8 * p.size))).to_bytes(
            p.size, "little"
        )
    launch = Launch(
        block=tuple(spec["block"]),
        grid=tuple(spec["grid"]),
        params=bytes(params),
        param_base=kernel.param_base,
        static_smem=kernel.static_shared_bytes,
        dynamic_smem=spec["dynamic_smem"],
        shared_base=0x400,
        memory=mem,
    )
    fn = functions(name)[spec["mangled"]]
    trace = emulator.run(fn, launch, grid=tuple(spec["grid"]) != (1, 1, 1))
    return trace, MEASURED[spec["id"]]


@pytest.mark.parametrize("spec", LAUNCHES, ids=[s["id"] for s in LAUNCHES])
def test_trace_matches_the_h200(spec: dict[str, Any]) -> None:
    trace, measured = _launch(spec)
    per_op = {k: [0, 0] for k in ("ld", "st", "atom", "ldsm", "stsm", "ldgsts")}
    per_pc: dict[int, tuple[int, int]] = {}
    for rec in trace.records:
        stats = rec.stats(SM90)
        wavefronts = int(stats.wavefronts.sum())
        op = rec.kind.op
        if op in ("ldmatrix", "stmatrix"):
            # their warp instructions have their own counter, their wavefronts count as ld/st
            per_op["ldsm" if op == "ldmatrix" else "stsm"][0] += rec.n
            per_op["ld" if op == "ldmatrix" else "st"][1] += wavefronts
        else:
            per_op[OP_KEYS[op]][0] += rec.n
            per_op[OP_KEYS[op]][1] += wavefronts
        per_pc[rec.instruction.pc] = (rec.n + rec.predicated_off, wavefronts)
    for key, (requests, wavefronts) in per_op.items():
        want = measured["per_op"][key]
        assert requests == want["requests"], key
        if "wavefronts" in want and not (key == "ldgsts" and spec["id"] in KNOWN_RULE_GAPS):
            assert wavefronts == want["wavefronts"], key
    if spec["id"] in KNOWN_RULE_GAPS:
        assert per_op["ldgsts"][1] != measured["per_op"]["ldgsts"]["wavefronts"]
    for ins in measured["instructions"]:
        executed, wavefronts = per_pc.get(ins["pc"], (0, 0))
        assert executed == ins["executed"], ins["sass"]
        # Nsight's per-instruction cp.async figure is its own model, not a counter
        if "LDGSTS" not in ins["sass"]:
            assert wavefronts == ins["wavefronts"], ins["sass"]
