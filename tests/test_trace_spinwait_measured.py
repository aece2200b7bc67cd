"""The spin-wait kernels (tests/data/trace/spinwait) run on the GPU as well as traced: every
launch of its launches.json (blocks and warps waiting on one another through shared and
global flags: serial split-K, handoffs, two waits, reverse turns, the halves of a warp, a
relay across the grid, tiles handed over, a deep call chain) traced with the harness's
arguments, and what it left in memory compared with CUDA's semantics (worked here in Python
from kernels/spinwait.cu) and with what the GPU left (lab/run.sh, 2026-12-05: the first 11
on the H200, all 14 on an H100, every one as the semantics say). How often a spin turned is
the GPU's timing, not compared."""

from __future__ import annotations

import json

import numpy as np
import pytest

from . import hopper_lab as lab
from .conftest import TRACE_DATA, fast_few, needs_nvdisasm

DATA = TRACE_DATA / "spinwait"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
IN = np.fromfile(DATA / "inputs" / "in1024.bin", dtype=np.int32).astype(np.int64)


def _splitk(s: int) -> dict[int, list[int]]:
    t = np.arange(128)
    out = sum(IN[z * 128 + (t + 1) % 128] * (z + 1) for z in range(s))
    return {1: list(out), 2: [s]}


def _reverse(g: int) -> dict[int, list[int]]:
    out = np.zeros(64, dtype=np.int64)
    for b in reversed(range(g)):  # block g - 1 first, block 0 last
        out = out * 3 + IN[b * 64 + 63 - np.arange(64)]
    return {1: list(out), 2: [g]}


def _halves(rounds: int) -> dict[int, list[int]]:
    acc = np.zeros(16, dtype=np.int64)
    for turn in range(2 * rounds):
        acc = acc * 3 + IN[turn * 16 : turn * 16 + 16]
    return {1: list(acc)}


def _relay(g: int) -> dict[int, list[int]]:
    half, t = g // 2, np.arange(64)
    rows = {b: IN[b * 64 + t] * (b + 1) for b in range(g)}
    for b in range(half):  # in relay order: block 0 after the last, block b after b - 1
        rows[b] = rows[b] + rows[g - 1 if b == 0 else b - 1]
    return {1: [int(x) for b in range(g) for x in rows[b]], 2: [1] * (half + 1)}


def _two_waits() -> dict[int, list[int]]:
    out = np.zeros(128, dtype=np.int64)
    out[64:96], out[96:128] = IN[:32] * 2, IN[32:64] * 7
    out[:32], out[32:64] = out[64:96] + 1, out[96:128] - 1
    return {1: list(out), 2: [1, 1]}


def _tiles(blocks: int, tiles: int) -> dict[int, list[int]]:
    out = []
    for b in range(blocks):  # warp 1 folds tile k: sum = sum * 3 + in[k * 32 + j] * (b + 1)
        total = np.zeros(32, dtype=np.int64)
        for k in range(tiles):
            total = total * 3 + IN[k * 32 : k * 32 + 32] * (b + 1)
        out += [int(np.int64(v).astype(np.int32)) for v in total]
    return {1: out}


def _deep(blocks: int, depth: int) -> dict[int, list[int]]:
    def deep(d: int, x: int) -> int:  # unsigned arithmetic, as the kernel's
        return x if d == 0 else (deep(d - 1, (x * 3 + 1) % 2**32) * 2 - d) % 2**32

    words = [deep(depth, int(v) % 2**32) for v in IN[: blocks * 64]]
    return {1: [int(np.uint32(w).astype(np.int32)) for w in words], 2: [1]}


def expected(lid: str) -> dict[int, list[int]]:
    """Each dumped argument's int32 words after the launch, from the kernel's source."""
    kernel = LAUNCHES[lid]["kernel"]
    n = LAUNCHES[lid]["grid"][2] if kernel == "sw_splitk" else LAUNCHES[lid]["grid"][0]
    if kernel == "sw_splitk":
        return _splitk(n)
    if kernel == "sw_reverse":
        return _reverse(n)
    if kernel == "sw_relay":
        return _relay(n)
    if kernel == "sw_halves":
        return _halves(LAUNCHES[lid]["args"][2]["int"])
    if kernel == "sw_tiles":
        return _tiles(n, LAUNCHES[lid]["args"][2]["int"])
    if kernel == "sw_deep":
        return _deep(n, LAUNCHES[lid]["args"][3]["int"])
    if kernel == "sw_two_waits":
        return _two_waits()
    factor = 3 if kernel == "sw_handoff_shared" else 5
    out = {1: [*(IN[:32] * factor + 1)]}
    return out | ({2: [1]} if kernel == "sw_handoff_global" else {})


def _words(data: bytes, n: int) -> list[int]:
    words = np.frombuffer(data, dtype=np.int32)
    assert not words[n:].any()  # past what the kernel writes: zeros as given
    return [int(w) for w in words[:n]]


@needs_nvdisasm
@pytest.mark.parametrize("lid", fast_few(sorted(LAUNCHES)))
def test_each_launch_leaves_what_the_source_says(lid: str) -> None:
    _, out = lab.run(lid, DATA)
    for i, want in expected(lid).items():
        assert _words(out[i], len(want)) == [int(w) for w in want], (lid, i)


@pytest.mark.skipif(not (DATA / "outputs").is_dir(), reason="the spin-wait lab is not run yet")
@pytest.mark.parametrize("lid", sorted(LAUNCHES))
def test_the_gpu_left_the_same(lid: str) -> None:
    if not (DATA / "outputs" / f"{lid}.arg1.bin").exists():
        pytest.skip(f"{lid} is not run on the GPU yet (lab/run.sh)")
    for i, want in expected(lid).items():
        gpu = (DATA / "outputs" / f"{lid}.arg{i}.bin").read_bytes()
        assert _words(gpu, len(want)) == [int(w) for w in want], (lid, i)
