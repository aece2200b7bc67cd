"""The emulator alone against the H200: every launch of tests/data/trace/launches.json is
traced and its shared-memory requests, fed through the engine (and the cp.async rule), must give
Nsight Compute's counters in tests/data/trace/measured.json: per op kind the requests and
wavefronts, and per SASS instruction the warp executions and wavefronts."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shmem_cli.hardware.arch import SM90
from shmem_cli.trace import cubin, emulator
from shmem_cli.trace.state import GlobalMemory, Launch

from .conftest import TRACE_DATA as DATA
from .conftest import needs_nvdisasm
from .test_async_copy import BEYOND_RULE
from .trace_util import functions

pytestmark = needs_nvdisasm

LAUNCHES = json.loads((DATA / "launches.json").read_text())["launches"]
MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
OP_KEYS = {"load": "ld", "store": "st", "atomic": "atom", "cp_async": "ldgsts"}

# cp.async launches where the measured rule (shmem_cli/hardware/async_copy.py) is known to fall
# short of the hardware: .ca copies whose lanes each read their own global line at a stride
# that is no power of two, and a .cg pipeline with partial (src-size 8) copies
# the cp.async rule's known gaps (tests/test_async_copy.py), and the pipelined kernel whose
# cp.async count varies from run to run (24, 26, 27 measured; 6 structural)
KNOWN_RULE_GAPS = set(BEYOND_RULE) | {"cp_async_pipeline"}


@functools.cache
def _kernels(cubin_name: str) -> dict[str, cubin.Kernel]:
    info = cubin.read_cubin(DATA / cubin_name, use_tools=False)
    return {k.mangled: k for k in info.kernels}


def _launch(spec: dict[str, Any]) -> tuple[emulator.Trace, dict[str, Any], GlobalMemory]:
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
    return trace, MEASURED[spec["id"]], mem


@pytest.mark.parametrize("spec", LAUNCHES, ids=[s["id"] for s in LAUNCHES])
def test_trace_matches_the_h200(spec: dict[str, Any]) -> None:
    trace, measured, _ = _launch(spec)
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


# --- what the kernels compute: the emulator's values against NumPy -------------------------

BY_ID = {s["id"]: s for s in LAUNCHES}


def _output(launch_id: str, dtype: Any) -> tuple[np.ndarray[Any, Any], bytes]:
    """The first argument's buffer after the run, and the second argument's input bytes."""
    spec = BY_ID[launch_id]
    _, _, mem = _launch(spec)
    return np.frombuffer(mem.read("arg0"), dtype=dtype), (
        DATA / spec["args"][1]["file"]
    ).read_bytes()


@pytest.mark.parametrize("launch_id", ["tiled_matmul_16", "tiled_matmul_32", "sgemm_4x4"])
def test_gemms_compute_the_product(launch_id: str) -> None:
    spec = BY_ID[launch_id]
    out, raw = _output(launch_id, np.float32)
    x = np.frombuffer(raw, dtype=np.float32)
    if launch_id == "sgemm_4x4":
        m, n, k = spec["args"][3:6]
        a, b = x[: m * k].reshape(m, k), x[: k * n].reshape(k, n)
        np.testing.assert_allclose(out.reshape(m, n), a @ b, rtol=1e-5)
    else:
        k, m = spec["args"][3:5]
        bs = spec["block"][0]
        a, b = x[: bs * k].reshape(bs, k), x[: k * m].reshape(k, m)
        np.testing.assert_allclose(out[: bs * m].reshape(bs, m)[:, :bs], (a @ b)[:, :bs], rtol=1e-5)


@pytest.mark.parametrize(
    "launch_id", ["ldmatrix_mma_16_false", "ldmatrix_mma_16_true", "ldmatrix_mma_64_false"]
)
def test_ldmatrix_and_mma_values(launch_id: str) -> None:
    out, raw = _output(launch_id, np.float32)
    halves = np.frombuffer(raw, dtype=np.uint16)[:256].reshape(16, 16)
    # where the kernel put the tile: 8-column chunks swapped on rows with (row / 4) odd
    placed = halves.copy()
    if launch_id.endswith("true"):
        odd = (np.arange(16) // 4) % 2 == 1
        placed[odd] = np.concatenate([halves[odd, 8:], halves[odd, :8]], axis=1)
    tile = halves.view(np.float16).astype(np.float64)
    # A = the tile (ldmatrix.x4 follows the swizzle), B = the first 8 stored columns
    d = tile @ placed[:, :8].view(np.float16).astype(np.float64)
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    got = out[: 32 * 5].reshape(32, 5)
    want = np.stack([d[g, 2 * t], d[g, 2 * t + 1], d[g + 8, 2 * t], d[g + 8, 2 * t + 1]], axis=1)
    np.testing.assert_allclose(got[:, :4], want, rtol=1e-3)
    # ldmatrix.x1 of rows 0..7 at column 8: lane l holds row l/4, columns 8 + 2(l%4), +1
    packed = placed[g, 8 + 2 * t].astype(np.uint32) | (placed[g, 9 + 2 * t].astype(np.uint32) << 16)
    np.testing.assert_array_equal(got[:, 4].view(np.uint32), packed)


@pytest.mark.parametrize("launch_id", ["stmatrix_store_16", "stmatrix_store_24"])
def test_stmatrix_values(launch_id: str) -> None:
    out, raw = _output(launch_id, np.uint16)
    regs = np.frombuffer(raw, dtype=np.uint32)[: 64 * 4].reshape(64, 4)
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    for warp in range(2):
        r = regs[32 * warp : 32 * warp + 32]
        tile = np.zeros((16, 16), dtype=np.uint16)
        for m, (row0, col0) in enumerate([(0, 0), (8, 0), (0, 8), (8, 8)]):
            tile[row0 + g, col0 + 2 * t] = r[:, m] & 0xFFFF
            tile[row0 + g, col0 + 2 * t + 1] = r[:, m] >> 16
        np.testing.assert_array_equal(out[warp * 256 : warp * 256 + 256].reshape(16, 16), tile)
        for m in range(2):  # .trans: lane l's halves go to rows 8m + 2(l%4) (+1), column l/4
            tile[8 * m + 2 * t, g] = r[:, m] & 0xFFFF
            tile[8 * m + 2 * t + 1, g] = r[:, m] >> 16
        got = out[512 + warp * 256 : 512 + warp * 256 + 256].reshape(16, 16)
        np.testing.assert_array_equal(got, tile)


@pytest.mark.parametrize(
    "launch_id", ["cp_async_copy_4_129", "cp_async_copy_8_16", "cp_async_copy_16_2"]
)
def test_cp_async_copies_the_bytes(launch_id: str) -> None:
    out, raw = _output(launch_id, np.uint32)
    words = int(launch_id.split("_")[3]) // 4
    src = np.frombuffer(raw, dtype=np.uint32)[: 64 * words].reshape(64, words)
    # each thread sums the words it copied
    np.testing.assert_array_equal(out[:64], src.sum(axis=1, dtype=np.uint32))
