"""``cvt.rn.relu.bf16x2.f32`` and ``cvt.rn.relu.f16x2.f32`` (``F2FP.RELU.BF16.F32.PACK_AB``,
``F2FP.RELU.F16.F32.PACK_AB``): how CUTLASS 3.x's epilogue with a ReLU activation converts its
results to bf16 or half. The emulator refused them (``not modelled``), so such a GEMM
(``LinCombPerColBiasEltAct<ReLu>``) stopped at its first epilogue. tests/data/trace/f2fp_relu
is the project's own kernel; the figures here are the PTX ISA's (``.relu`` clamps a negative
result to +0, a NaN becomes the canonical NaN 0x7fff), worked in NumPy.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.state import GlobalMemory

from .conftest import TRACE_DATA, needs_nvdisasm
from .trace_util import functions, one_block

pytestmark = needs_nvdisasm

DATA = TRACE_DATA / "f2fp_relu"
CUBIN = DATA / "f2fp_relu.sm_90a.cubin"


def _bf16(x: np.ndarray) -> np.ndarray:
    """Round to nearest even on the float's bits, NaN canonical."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    up = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return np.where(np.isnan(x), 0x7FFF, up & 0xFFFF).astype(np.uint32)


def _f16(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        h = x.astype(np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)
    return np.where(np.isnan(x), 0x7FFF, h).astype(np.uint32)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 0, np.float32(0), x).astype(np.float32)  # NaN <= 0 is false


def _run() -> tuple[execute.Trace, np.ndarray, np.ndarray]:
    """The kernel over inputs/in.bin (make_inputs.py): the trace, the inputs, the output."""
    x = np.fromfile(DATA / "inputs" / "in.bin", dtype=np.float32)
    mem = GlobalMemory()
    a_in, a_out = mem.add_buffer(x.tobytes(), "in"), mem.add_buffer(128 * 4, "out")
    run = one_block(struct.pack("<QQ", a_in, a_out), mem, 64, 512)
    fn = functions(CUBIN)["_Z9f2fp_reluPKfPj"]
    trace = execute.run(fn, run)
    return trace, x, np.frombuffer(mem.read("out"), dtype=np.uint32)


def test_relu_conversions_to_bf16x2_and_f16x2() -> None:
    trace, x, words = _run()
    out = words.reshape(64, 2)
    hi, lo = _relu(x[0::2]), _relu(x[1::2])
    np.testing.assert_array_equal(out[:, 0], (_bf16(hi) << 16) | _bf16(lo))
    np.testing.assert_array_equal(out[:, 1], (_f16(hi) << 16) | _f16(lo))
    # the pairs' stores and loads through shared memory: one request each per warp
    assert sorted((r.kind.op, r.n) for r in trace.records if r.n) == [("load", 2), ("store", 2)]


@pytest.mark.skipif(
    not (DATA / "outputs" / "out.bin").exists(), reason="not yet run on a GPU (lab/run.sh)"
)
def test_relu_conversions_as_the_gpu_wrote_them() -> None:
    _, _, words = _run()
    assert words.tobytes() == (DATA / "outputs" / "out.bin").read_bytes()
