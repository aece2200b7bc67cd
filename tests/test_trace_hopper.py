"""Hopper kernels traced against what the H200 measured (tests/data/trace/hopper): every SASS
form of the project's sm_90a kernels decodes; TMA tiles in every swizzle mode move the same
bytes as the GPU and cost the same; wgmma is costed by the measured rule and computes the
GPU's accumulators; a warp-specialized GEMM pipeline runs in its mbarriers' order to the
GPU's result; a wait that can never complete is a located error."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import sass
from shmem_cli.cuda.launch import tensormap
from shmem_cli.trace.emulator import decode
from shmem_cli.trace.emulator.op_table import Context
from shmem_cli.trace.emulator.state import TraceError

from . import hopper_lab as lab
from .conftest import needs_nvdisasm
from .trace_util import functions

pytestmark = needs_nvdisasm
CUBINS = sorted(p.name for p in lab.HOPPER.glob("*.sm_90a.cubin"))
# measured op names -> the trace's
OPS = {"ld": "load", "st": "store", "gmma": "wgmma"}


@pytest.mark.slow
@pytest.mark.parametrize("cubin", CUBINS)
def test_every_instruction_of_the_hopper_kernels_decodes(cubin: str) -> None:
    for fn in functions(f"hopper/{cubin}").values():
        ctx = Context(fn)
        for ins in fn.instructions:
            assert ins.error is None, ins.text
            decode.decode(ins, ctx)  # raises TraceError for an instruction it cannot run


def test_an_unparsable_instruction_fails_only_where_it_runs() -> None:
    listing = """
\t.section\t.text.other,"ax",@progbits
        /*0000*/                   FOO R1, %weird ;
\t.section\t.text.traced,"ax",@progbits
        /*0000*/                   EXIT ;
"""
    fns = {f.name: f for f in sass.parse(listing)}
    (bad,) = fns["other"].instructions
    assert bad.opcode == "FOO" and bad.error is not None and "%weird" in bad.error
    assert decode.decode_function(fns["traced"])  # the traced function is untouched
    step = decode.decode_function(fns["other"])[0]
    with pytest.raises(TraceError, match="did not parse"):
        step(None, None)  # type: ignore[arg-type]


def test_tensor_maps_encode_as_the_driver_did_on_the_gpu() -> None:
    base = int((lab.HOPPER / "outputs" / "enc_base.txt").read_text())
    checked = 0
    for e in lab.manifest()["encodings"]:
        path = lab.HOPPER / "outputs" / f"enc_{e['id']}.bin"
        if not path.exists():  # the driver refused it (interleaved)
            continue
        tm = tensormap.TensorMap(
            base,
            e["dtype"].lower(),
            tuple(e["dims"]),
            tuple(e["strides"]),
            tuple(e["box"]),
            tuple(e["elem"]),
            tensormap.SWIZZLE_BYTES[e["swizzle"]],
            e["l2"],
            bool(e["oob"]),
        )
        raw = path.read_bytes()
        assert tensormap.encode(tm) == raw, e["id"]
        assert tensormap.decode(raw) == tm, e["id"]
        checked += 1
    assert checked >= 30
    assert tensormap.decode(bytes(128)) is None  # a map that was not given


@pytest.mark.parametrize(
    "text, message",
    [
        ("tensormap:dtype=bf16,dims=64x64", "needs box="),
        ("tensormap:dtype=q8,dims=64,box=64", "dtype 'q8'"),
        ("tensormap:dtype=f32,dims=64x64,box=64x8,swizzle=128B", "at most 128 bytes"),
        ("tensormap:dtype=f32,dims=64x64,box=3x8", "multiple of 16 bytes"),
        ("tensormap:dtype=f32,dims=64x64,box=32x8,colour=red", "'colour=red' is not one of"),
        ("tensormap:dtype=f32,dims=64x64,box=32x8,data=a.bin", "data=@FILE"),
    ],
)
def test_a_bad_tensor_map_is_said_in_words(text: str, message: str) -> None:
    with pytest.raises(tensormap.TensorMapError, match=message):
        tensormap.parse_spec(text)


def _check_counts(lid: str, got: dict[str, tuple[int, int]]) -> None:
    m = lab.measured()[lid]["per_op"]
    for theirs, ours in OPS.items():
        assert got[ours] == (m[theirs]["requests"], m[theirs]["wavefronts"]), (lid, ours)


TILES = [L["id"] for L in lab.manifest()["launches"] if L["id"].startswith("tma_tile")]


@pytest.mark.parametrize("lid", [*TILES, "tma_ranks"])
def test_tma_moves_the_gpus_bytes_and_costs_what_it_measured(lid: str) -> None:
    kt, out = lab.run(lid)
    _check_counts(lid, lab.per_op(kt))  # TMA fills and stores add no LSU wavefronts
    for i, data in out.items():  # the box through the swizzle, OOB zeros, the TMA store
        assert data == lab.gpu_output(lid, i), (lid, i)


@pytest.mark.parametrize("lid", [*TILES, "tma_ranks", "ws_gemm_k256"])
def test_each_tma_copy_is_a_row_of_its_bytes_without_lsu_wavefronts(lid: str) -> None:
    kt, _ = lab.run(lid)
    rows = [a for a in kt.accesses if a.op == "tma"]
    # smsp__sass_inst_executed_op_tma: the TMA instructions the warps issued
    assert sum(a.cost.requests for a in rows) == lab.measured()[lid]["per_op"]["tma"][""]
    assert all(a.cost.wavefronts == 0 for a in rows)
    assert all(a.reads and a.reads.startswith(("TMA ", "bulk ")) and " B " in a.reads for a in rows)


WGMMA = [L["id"] for L in lab.manifest()["launches"] if L["id"].startswith("wg_")]


def _fast_wgmma(lids: list[str]) -> set[str]:
    """In `make test`, of each form (dtype, A from shared or registers, transposes,
    descriptor variant) its launch of the fewest columns N, and the first launch of each
    swizzle mode; the others are marked slow."""
    fast: dict[str, str] = {}
    swizzles: dict[str, str] = {}
    for lid in lids:
        form = re.sub(r"_swz\d+", "", re.sub(r"_n\d+", "", lid))
        if form not in fast or _columns(lid) < _columns(fast[form]):
            fast[form] = lid
        mode = re.search(r"_swz(\d+)", lid)
        if mode:
            swizzles.setdefault(mode.group(1), lid)
    return {*fast.values(), *swizzles.values()}


def _columns(lid: str) -> int:
    return int(lid.split("_n")[1].split("_")[0])


FAST_WGMMA = _fast_wgmma(WGMMA)


@pytest.mark.parametrize(
    "lid", [pytest.param(x, marks=() if x in FAST_WGMMA else pytest.mark.slow) for x in WGMMA]
)
def test_wgmma_costs_and_computes_what_the_gpu_did(lid: str) -> None:
    kt, out = lab.run(lid)
    _check_counts(lid, lab.per_op(kt))
    accumulators = lab.HOPPER / "outputs" / f"{lid}.arg1.bin"
    if accumulators.exists():  # the GPU's accumulators, kept for N <= 32
        assert out[1] == accumulators.read_bytes(), lid


def test_the_wgmma_rule_is_one_wavefront_per_core_matrix() -> None:
    # the measured counters alone, per shape: SS = 16 + N/4, RS = N/4, 4 requests, whatever
    # the dtype, majorness, swizzle or descriptor offsets
    seen = 0
    for L in lab.manifest()["launches"]:
        if not L["id"].startswith("wg_"):
            continue
        n = int(L["kernel"].split("_n")[1].split("_")[0])
        rs = "_rs_" in L["kernel"]
        g = lab.measured()[L["id"]]["per_op"]["gmma"]
        assert (g["requests"], g["wavefronts"], g["bank_conflicts"]) == (
            4,
            n // 4 + (0 if rs else 16),
            0,
        ), L["id"]
        seen += 1
    assert seen == len(WGMMA) > 300


def test_warp_specialized_gemm_runs_in_its_barriers_order() -> None:
    kt, out = lab.run("ws_gemm_k256")
    got = lab.per_op(kt)
    m = lab.measured()["ws_gemm_k256"]["per_op"]
    assert got["wgmma"] == (m["gmma"]["requests"], m["gmma"]["wavefronts"])
    assert got["stmatrix"] == (m["stsm"]["requests"], m["st"]["wavefronts"])
    assert out[2] == lab.gpu_output("ws_gemm_k256", 2)  # C through wgmma, stmatrix and TMA
    reads = [a.reads for a in kt.accesses if a.op == "wgmma"]
    assert reads and all("K-major, 128B swizzle" in r for r in reads if r)


def test_blocks_whose_wgmma_accumulates_global_data_are_alike() -> None:
    """A wgmma's accumulators hold data from global memory (A and B came by TMA), but only
    its descriptors place its reads: two blocks of the warp-specialized GEMM, whose every
    decision is the same, are proven alike, and each counts the one block's figures the
    H200 measured."""
    launch = lab.launch("ws_gemm_k256")
    args, _ = lab.arg_texts(launch, lab.HOPPER)
    res = CliRunner().invoke(
        main,
        [
            "trace",
            str(lab.HOPPER / launch["cubin"]),
            "-k",
            launch["kernel"],
            "-b",
            ",".join(map(str, launch["block"])),
            "--dynamic-smem",
            str(launch["dynamic_smem"]),
            "--grid",
            "2",
            *(f"--arg={a}" for a in args),
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    (kernel,) = json.loads(res.output)["files"][0]["kernels"]
    cov = kernel["grid_coverage"]
    assert cov["mode"] == "alike" and cov["blocks_run"] == 1 and cov["differs"] is None
    m = lab.measured()["ws_gemm_k256"]["per_op"]
    got = kernel["totals"]
    assert got["wgmma"]["requests"] == 2 * m["gmma"]["requests"]
    assert got["wgmma"]["wavefronts"] == 2 * m["gmma"]["wavefronts"]
    assert got["stmatrix"]["requests"] == 2 * m["stsm"]["requests"]
    assert got["stmatrix"]["wavefronts"] == 2 * m["st"]["wavefronts"]


def test_a_wait_that_never_completes_names_the_barrier_and_the_warps() -> None:
    # without warpgroup 2 the stages' `empty` barriers (256 arrivals) never complete: the
    # producer waits for the fifth stage, the consumers for data that never comes
    with pytest.raises(TraceError) as err:
        lab.run("ws_gemm_k256", block=[256, 1, 1], args=_k_tiles(8))
    msg = err.value.message
    assert msg.startswith("deadlock:") and "mbarrier at shared offset 0x" in msg
    assert "warp(s) 0 wait" in msg and "warp(s) 4-7 wait" in msg
    assert err.value.line is not None  # located at the wait's source line


def _k_tiles(k: int) -> list[object]:
    args = list(lab.launch("ws_gemm_k256")["args"])
    args[3] = {"int": k}
    return args


def test_a_tensor_map_not_given_moves_nothing_and_says_so() -> None:
    lid = "tma_tile_128_x0_y0"
    args = json.loads(json.dumps(lab.launch(lid)["args"]))
    args[0] = {"int": 0}  # the load's map: zero bytes
    kt, out = lab.run(lid, args=args, dumps=[2])
    assert not np.frombuffer(out[2], dtype=np.uint8).any()  # nothing arrived
    listed = [n.sass for n in kt.not_modelled]
    assert any(s.startswith("UTMALDG") for s in listed)
