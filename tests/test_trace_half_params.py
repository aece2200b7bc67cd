"""A ``__half`` parameter read by a half2 instruction straight from the parameter space:
nvdisasm 13.0 prints ``HMUL2 R0, R0.H0_H0, c[0x0] [0x168].H1_H1`` (a space between the
brackets; ``.H1_H1`` the upper half of the word, repeated), as CuTe's sgemm_sm80 tutorial
scales by its ``half_t`` alpha and beta. The operand parses, and the selector picks the half:
the kernel below stores to ``s[lane * b]``, so the store's ways are those of a stride of
``b`` words (worked by hand: 32 lanes at a stride of 2 words meet 2 to a bank, of 4 words 4
to a bank, of 1 or 3 words 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import sass_operands
from shmem_cli.cuda.sass_operands import Const

from .conftest import needs_nvcc, needs_nvdisasm

KERNEL = """#include <cuda_fp16.h>
// a and b share one 32-bit word of the parameter space: b is its upper half
__global__ void half_scaled_index(float *out, __half a, __half b) {
  __shared__ float s[64 * 32];
  __half2 t = __halves2half2(__int2half_rn(threadIdx.x), __int2half_rn(threadIdx.x));
  __half2 p = __hmul2(t, __halves2half2(b, b));  // lane * b
  int i = __half2int_rn(__low2half(p)) + __half2int_rn(__hmul(a, __int2half_rn(0)));
  s[i] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}
"""


def test_a_constant_operand_with_a_space_and_a_half_selector_parses() -> None:
    assert sass_operands.parse_operand("c[0x0] [0x168].H1_H1") == Const(0, 0x168, sel=("H1_H1",))
    assert sass_operands.parse_operand("-c[0x0] [0x16c]") == Const(0, 0x16C, neg=True)


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
@pytest.mark.parametrize(
    ("a", "b", "verdict", "wavefronts"),
    [
        ("1.0", "2.0", "2-way", 2),
        ("2.0", "1.0", "ok", 1),
        ("1.0", "4.0", "4-way", 4),
        ("5.0", "3.0", "ok", 1),
    ],
)
def test_the_upper_half_of_a_parameter_word_is_read(
    tmp_path: Path, a: str, b: str, verdict: str, wavefronts: int
) -> None:
    cu = tmp_path / "half_param.cu"
    cu.write_text(KERNEL)
    res = CliRunner().invoke(
        main,
        [
            "trace",
            str(cu),
            "--arch",
            "sm_80",
            "-b",
            "32",
            "-a",
            f"a={a}",
            "-a",
            f"b={b}",
            "--no-tables",
        ],
    )
    assert res.exit_code == 0, res.output
    (store,) = [line.split() for line in res.output.splitlines() if "STS" in line]
    assert store[0] == verdict and store[1] == "half_param.cu:8"
    bytes_at = store.index("(4")  # op "store (4 B)", then requests and wavefronts
    assert store[bytes_at + 2 : bytes_at + 4] == ["1", str(wavefronts)]
