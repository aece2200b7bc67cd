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

import numpy as np
import pytest

from shmem_cli.trace.emulator import decode

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm
from .opcodes_cuda_reference import video_ops

LAB = TRACE_DATA / "opcodes_cuda"


def _inputs(name: str, dtype: type) -> np.ndarray:
    return np.fromfile(LAB / "inputs" / f"{name}.bin", dtype=dtype)


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
