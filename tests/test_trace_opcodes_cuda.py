"""The SASS that real CUDA code reaches, run by the emulator (issues 29/30).

A census of what nvcc 13.0 emits for real CUDA (CUB and cooperative groups, every math and
integer intrinsic family, switch statements, -O0 and debug builds, llm.c and CUTLASS
kernels) found instructions the emulator did not run; tests/data/trace/opcodes_cuda holds
the project's own kernels that make nvcc emit them, with edge-case inputs, and the buffers
the H200 wrote (outputs/). Each test compares the emulator's buffers with the H200's or
with the intrinsics' documented definitions written out in NumPy
(tests/opcodes_cuda_reference.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.trace.emulator import decode

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm
from .opcodes_cuda_reference import (
    atomics_wide,
    bf16_arithmetic,
    bf16_compares,
    cg_tiles,
    collective,
    jump_table,
    video_ops,
    warp_ops,
)

LAB = TRACE_DATA / "opcodes_cuda"
LAUNCHES = [L["id"] for L in lab.manifest(LAB)["launches"]]


def _inputs(name: str, dtype: type) -> np.ndarray:
    return np.fromfile(LAB / "inputs" / f"{name}.bin", dtype=dtype)


# in `make test` one launch of each cubin (cuda90's bf16 arithmetic, cuda90b's wide atomics,
# the -O0 and the -G collective sections); the others are slow
FAST = {"bf16_ops", "atomics_wide", "collective", "cg_tiles_debug"}


@needs_nvdisasm
@pytest.mark.parametrize(
    "launch_id", [x if x in FAST else pytest.param(x, marks=pytest.mark.slow) for x in LAUNCHES]
)
def test_the_lab_kernels_compute_what_the_h200_computed(launch_id: str) -> None:
    """Every buffer a launch wrote, byte for byte as the H200 wrote it (outputs/: each launch
    run twice there, both runs the same)."""
    _, out = lab.run(launch_id, LAB)
    assert out
    for i, data in out.items():
        assert data == lab.gpu_output(launch_id, i, LAB), f"{launch_id} argument {i}"


@needs_nvdisasm
@pytest.mark.parametrize(
    "launch_id,inputs", [("video_ops", "video"), ("video_ops_random", "video2")]
)
def test_simd_video_minimum_maximum_and_dot_products_against_numpy(
    launch_id: str, inputs: str
) -> None:
    """VABSDIFF4 (``.ACC``), VABSDIFF, IDP (``.4A``, ``.2A.LO/.HI``, signed and unsigned),
    VIMNMX3 and VIMNMX on 32-bit and 16x2 lanes with ``.RELU`` and the predicates of
    ``__vibmax_s16x2``, VIADD.16x2 and VIADDMNMX.16x2: bytes and halves at their bounds."""
    data = _inputs(inputs, np.uint32)
    a, b, c = data[:64], data[64:128], data[128:]
    with decode.recording() as seen:
        _, out = lab.run(launch_id, LAB)
    got = np.frombuffer(out[0], dtype=np.uint32).reshape(38, 64)
    want = video_ops(a, b, c)
    for row, expected in enumerate(want):
        assert got[row].tolist() == expected.tolist(), f"row {row}"
    assert {"VABSDIFF4", "VABSDIFF", "IDP", "VIMNMX3", "VIMNMX", "VIADDMNMX", "VIADD"} <= seen


@needs_nvdisasm
def test_a_switch_jump_table_on_a_divergent_warp_against_python() -> None:
    """BRX: two dense switches become jump tables (an offset from a constant bank, then an
    indirect branch); the lanes of each warp take every case, once and in a loop."""
    x = _inputs("switch", np.int32)
    with decode.recording() as seen:
        _, out = lab.run("jump_table", LAB)
    assert np.frombuffer(out[0], dtype=np.int32).tolist() == jump_table(x, 9).tolist()
    assert "BRX" in seen


@needs_nvdisasm
def test_warp_reductions_and_64_bit_matches_against_numpy() -> None:
    """REDUX (the plain one is the AND) and MATCH.ANY/ALL.U64, on whole warps and on the lanes
    a branch on the data keeps; one warp of one 64-bit value but a lane."""
    x, wide = _inputs("warp_ints", np.uint32), _inputs("warp_wide", np.uint64)
    with decode.recording() as seen:
        _, out = lab.run("warp_ops", LAB)
    got = np.frombuffer(out[0], dtype=np.uint32).reshape(12, 64)
    want = warp_ops(x, wide)
    for row in range(12):
        assert got[row].tolist() == want[row].tolist(), f"row {row}"
    assert {"REDUX", "MATCH"} <= seen


PRINTF80_CU = """
#include <cstdio>
__global__ void noisy(int *out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x * 3;
  __syncthreads();
  int v = s[(threadIdx.x * 5) & 63];
  if (v % 7 == 1) printf("lane %d sees %d\\n", threadIdx.x, v);
  out[threadIdx.x] = v;
}
"""


@needs_nvcc
def test_printf_in_sm80_code_is_stepped_over(tmp_path: Path) -> None:
    """sm_80 code computes a call's return point from ``LEPC Rd`` (the LEPC's own address,
    sm_90 code names the label): the call to ``vprintf`` is stepped over and listed, and
    the shared accesses around it are traced."""
    src = tmp_path / "noisy.cu"
    src.write_text(PRINTF80_CU)
    with decode.recording() as seen:
        done = CliRunner().invoke(
            main, ["trace", str(src), "--arch", "sm_80", "-b", "64", "-f", "json"]
        )
    assert done.exit_code == 0, done.output
    kernel = json.loads(done.output)["files"][0]["kernels"][0]
    assert "LEPC" in seen
    assert [n["callee"] for n in kernel["not_modelled"]] == ["vprintf"]
    assert kernel["totals"]["load"]["requests"] == 2 == kernel["totals"]["store"]["requests"]


@pytest.mark.slow  # make test compares atomics_wide with the H200 byte for byte
@needs_nvdisasm
def test_64_bit_and_float_global_atomics_against_numpy() -> None:
    """ATOMG/REDG on doubles (``.F64``, the old value used or not), floats and 64-bit
    integers (``.64``, ``.S64``: add, min, max, and, or, xor, exchange, compare-and-swap)."""
    dsum, u64 = _inputs("dsum", np.float64), _inputs("u64_init", np.uint64)
    s64, dv, lv = _inputs("s64_init", np.int64), _inputs("dv", np.float64), _inputs("lv", np.int64)
    _, out = lab.run("atomics_wide", LAB)
    want = atomics_wide(dsum, u64, s64, dv, lv)
    for i, expected in want.items():
        assert out[i] == expected.tobytes(), f"argument {i}"


@pytest.mark.slow  # make test compares collective with the H200 byte for byte
@needs_nvdisasm
def test_collective_sections_of_o0_code_against_numpy() -> None:
    """-O0 code writes each warp-collective operation of cooperative groups as a collective
    section (WARPSYNC.COLLECTIVE ... ENDCOLLECTIVE) and the block's barrier with its id and
    count in a register (BAR.SYNC R7, R7); tiles of 8 and a coalesced group of the lanes a
    branch on the data keeps."""
    x = _inputs("collective", np.uint32)
    with decode.recording() as seen:
        _, out = lab.run("cg_tiles", LAB)
    assert np.frombuffer(out[0], dtype=np.uint32).tolist() == cg_tiles(x).tolist()
    assert {"ENDCOLLECTIVE", "BAR"} <= seen


@needs_nvdisasm
def test_a_divergent_warps_collective_sections_against_numpy() -> None:
    """-O0 code on a warp a branch splits: each side's collective sections (WARPSYNC.COLLECTIVE
    with ``__activemask()``'s lanes ... ENDCOLLECTIVE) run for its lanes alone, REDUX, SHFL,
    VOTE, MATCH and ELECT seeing those lanes; a shuffle from a lane of the other side reads
    0, as on the H200."""
    x = _inputs("collective", np.uint32)
    with decode.recording() as seen:
        _, out = lab.run("collective", LAB)
    assert np.frombuffer(out[0], dtype=np.uint32).tolist() == collective(x).tolist()
    assert {"ENDCOLLECTIVE", "ELECT", "SHFL", "MATCH", "REDUX"} <= seen


@needs_nvdisasm
def test_the_modules_global_data_is_loaded_as_the_driver_loads_it() -> None:
    """Double sin/cos read the CUDA math library's coefficient tables, and a ``__device__``
    array is read and another written, through the addresses the driver writes into constant
    bank 4 (relocations against ``.nv.global.init`` and ``.nv.global``): the values within
    the 2 ulp the CUDA Math API documents for sin and cos, the integers exact."""
    x = _inputs("trig", np.float64)
    _, out = lab.run("module_data", LAB)
    got = np.frombuffer(out[0], dtype=np.float64)
    ulp = np.spacing(np.abs(np.concatenate([np.sin(x), np.cos(x)])))
    assert (np.abs(got - np.concatenate([np.sin(x), np.cos(x)])) <= 2 * ulp).all()
    table = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    t = np.arange(64)
    hits = table[t & 7] * t
    want = hits[63 - t] + table[(t * 3) & 7]
    assert np.frombuffer(out[1], dtype=np.int32).tolist() == want.tolist()


@needs_nvdisasm
def test_half_and_bf16_compares_written_as_values_against_numpy() -> None:
    """HSET2 (``.BF``: 1.0 per lane in the lanes' format; else a 0xffff mask), on half and
    bf16 lanes (``.BF16_V2``), ordered and unordered, with NaN, infinities, -0 and equal
    pairs."""
    x, h = _inputs("bf16", np.uint16), _inputs("half", np.uint16)
    with decode.recording() as seen:
        _, out = lab.run("bf16_ops", LAB)
    got = np.frombuffer(out[0], dtype=np.uint32).reshape(17, 32)
    for row, expected in bf16_compares(x, h).items():
        assert got[row].tolist() == expected.tolist(), f"row {row}"
    assert "HSET2" in seen


@needs_nvdisasm
@pytest.mark.parametrize("launch_id,inputs", [("bf16_ops", "bf16"), ("bf16_ops_random", "bf16_2")])
def test_bf16x2_arithmetic_rounds_once_against_exact_arithmetic(
    launch_id: str, inputs: str
) -> None:
    """HADD2/HMUL2/HFMA2 ``.BF16_V2``: each lane the exact sum, product or fused product-sum
    rounded once to nearest even, subnormals kept, -0 where IEEE 754 gives it, past the
    largest finite an infinity (the finite lanes; NaN and infinite inputs are the H200's)."""
    x = _inputs(inputs, np.uint16)
    _, out = lab.run(launch_id, LAB)
    got = np.frombuffer(out[0], dtype=np.uint32).reshape(17, 32)
    for row, expected in bf16_arithmetic(x).items():
        lanes = [(int(got[row][k // 2]) >> (16 * (k % 2))) & 0xFFFF for k in range(64)]
        pairs = [(g, w) for g, w in zip(lanes, expected, strict=True) if w is not None]
        assert [g for g, _ in pairs] == [w for _, w in pairs], f"row {row}"
