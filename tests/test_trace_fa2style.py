"""The project's own FlashAttention-2-style forward kernel (tests/data/trace/fa2style): a Q tile
in shared memory, K and V tiles double-buffered by cp.async.cg, ldmatrix (.trans for V) into
mma.sync, an online softmax, O staged through shared memory; every tile 64 x 64 halves with
16-byte chunk c of row r at c ^ (r & 7). Traced from its parameter block as a host program
passes it (docs/recipes.md, FlashAttention-2), its counts derived here by hand."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm

HERE = TRACE_DATA / "fa2style"
SEQ, HEADS, D, TILE = 256, 2, 64, 64
BLOCKS_X = SEQ // TILE

pytestmark = needs_nvdisasm


def trace(tmp_path: Path, causal: int) -> Any:
    base = 0x7F00_0000_0000
    q, k, v, o = (base + i * 0x10_0000 for i in range(4))
    block = struct.pack("<4Qiiqfi", q, k, v, o, SEQ, HEADS, SEQ * D, 0.125 * 1.4427, causal)
    params = tmp_path / "params.bin"
    params.write_bytes(block)
    command = ["trace", str(HERE / "fa2_style.sm_90.cubin"), "-k", "fa2_forward"]
    command += ["--block", "128", "--grid", f"{BLOCKS_X},1,{HEADS}", "--params", f"@{params}"]
    got = CliRunner().invoke(main, [*command, "-f", "json"])
    assert got.exit_code == 0, got.output
    (kernel,) = json.loads(got.output)["files"][0]["kernels"]
    return kernel


@pytest.mark.slow
@pytest.mark.parametrize("causal", [1, 0])
def test_every_shared_access_as_counted_by_hand(tmp_path: Path, causal: int) -> None:
    kernel = trace(tmp_path, causal)
    ops = {op: (t["requests"], t["wavefronts"]) for op, t in kernel["totals"].items()}
    # key tiles each query block reads: its own and those before it (causal), else all 4
    tiles = sum(x + 1 for x in range(BLOCKS_X)) if causal else BLOCKS_X * BLOCKS_X
    blocks, warps = BLOCKS_X * HEADS, 4
    # per warp: Q's 4 ldmatrix.x4 once; per key tile 8 x 2 for S = Q K^T and 4 x 4 for P V;
    # each x4 reads 4 8x8 matrices of 16-byte rows, swizzled: 4 wavefronts
    ldsm = warps * HEADS * (4 * BLOCKS_X + 32 * tiles)
    assert ops["ldmatrix"] == (ldsm, 4 * ldsm)
    # per warp 4 copies a tile: Q, K0 and V0 first, then K and V of every tile but the last;
    # .cg copies of 16 whole bytes cost the shared pipe nothing (hardware-model 9a)
    copies = warps * HEADS * (12 * BLOCKS_X + 8 * (tiles - BLOCKS_X))
    assert ops["cp_async"] == (copies, 0)
    # O staged: 2 rows x 8 chunks of 4-byte stores a warp, the 8 rows' chunks on 8 bank
    # groups (conflict-free); then 4 16-byte loads a warp, 4 wavefronts each
    assert ops["store"] == (blocks * warps * 16, blocks * warps * 16)
    assert ops["load"] == (blocks * warps * 4, blocks * warps * 16)
    assert all(a["excess_wavefronts"] == 0 for a in kernel["accesses"])
    coverage = kernel["grid_coverage"]
    # the causal grid's blocks differ by their key tiles (4 classes, one a query block); the
    # plain one's are alike
    assert coverage["blocks_run"] == (BLOCKS_X if causal else 1)


MEASURED = json.loads((HERE / "measured" / "measured.json").read_text())


def opcode(sass: str) -> str:
    """``@!PT LDS RZ, [RZ]`` -> ``@!PT LDS``: the guard and the opcode with its modifiers."""
    words = sass.split()
    return " ".join(words[:2] if words[0].startswith("@") else words[:1])


@pytest.mark.slow
@pytest.mark.parametrize("causal", [1, 0])
def test_as_the_gpu_measured_it(causal: int) -> None:
    """lab/run.sh on an H100 (measured/, 2026-12-06; twice each, the same figures): every
    shared-memory row of the source counters (executions and wavefronts) and the per-op
    counters, traced from the parameter block the host program passed in that run."""
    params = HERE / "measured" / f"params_c{causal}.bin"
    command = ["trace", str(HERE / "fa2_style.sm_90.cubin"), "-k", "fa2_forward"]
    command += ["--block", "128", "--grid", f"{BLOCKS_X},1,{HEADS}", "--params", f"@{params}"]
    got = CliRunner().invoke(main, [*command, "-f", "json"])
    assert got.exit_code == 0, got.output
    (kernel,) = json.loads(got.output)["files"][0]["kernels"]
    rows = {a["pc"]: a for a in kernel["accesses"]}
    ops = kernel["totals"]
    assert "NVIDIA H100" in MEASURED["gpu"]
    for run in MEASURED["launches"][f"causal{causal}"]:
        assert {want["pc"] for want in run["instructions"]} == set(rows)
        for want in run["instructions"]:
            mine = rows[want["pc"]]
            # the GPU ran the cubin's code: the same instruction at the same offset (Nsight
            # writes a cp.async's operands the other way round)
            assert opcode(mine["sass"]) == opcode(want["sass"])
            assert mine["requests"] + mine["predicated_off"] == want["executed"], want
            if mine["op"] != "cp_async":
                # (a cp.async row's source-counter wavefronts are Nsight's model of the
                # copy, 4 each here: no op_ld or op_st counter holds them, hardware-model 9a)
                assert mine["wavefronts"] == want["wavefronts"], want
        c = run["counters"]
        assert ops["ldmatrix"]["requests"] == c["smsp__sass_inst_executed_op_ldsm"]
        assert ops["load"]["requests"] == c["smsp__sass_inst_executed_op_shared_ld"]
        assert ops["store"]["requests"] == c["smsp__sass_inst_executed_op_shared_st"]
        assert ops["cp_async"]["requests"] == c["smsp__sass_inst_executed_op_ldgsts"]
        # ldmatrix's wavefronts are counted with the loads' (op_ld)
        loads = ops["load"]["wavefronts"] + ops["ldmatrix"]["wavefronts"]
        assert loads == c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld"]
        assert ops["store"]["wavefronts"] == c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st"]
        # op_misc by hardware-model 9e: a warp's end, each barrier's completion, the filler
        # LDS a warp reaches with no lane on, and every shuffle (SHFL.BFLY of the row max/sum)
        assert ops["misc"]["wavefronts"] == c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc"]
