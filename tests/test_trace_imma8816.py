"""mma.sync m8n8k16 with 8-bit inputs (SASS ``IMMA.8816``: Turing's int8 tensor op, which
CUTLASS 2.x's Sm75 int8 GEMMs, example 08, run on every later GPU). The kernel is ours; the
expected products are NumPy's, from the fragment layout the PTX ISA documents for
m8n8k16 (A row ``lane / 4``, columns ``4 (lane % 4) ..``; B the transpose; C and D row
``lane / 4``, columns ``2 (lane % 4)`` and the next)."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np

from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.state import GlobalMemory, Launch

from .conftest import needs_nvcc, needs_nvdisasm
from .trace_util import functions

KERNEL = """
// d = a x b + c for one warp, m8n8k16: s8 x s8, u8 x s8 saturating, each into 2 words
extern "C" __global__ void imma8816(int *out, const unsigned *a, const unsigned *b,
                                    const int *c) {
  int t = threadIdx.x;
  unsigned fa = a[t], fb = b[t];
  int c0 = c[2 * t], c1 = c[2 * t + 1], d[4];
  asm("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0, %1}, {%2}, {%3}, {%4, %5};"
      : "=r"(d[0]), "=r"(d[1]) : "r"(fa), "r"(fb), "r"(c0), "r"(c1));
  asm("mma.sync.aligned.m8n8k16.row.col.satfinite.s32.u8.s8.s32 {%0, %1}, {%2}, {%3}, "
      "{%4, %5};"
      : "=r"(d[2]), "=r"(d[3]) : "r"(fa), "r"(fb), "r"(c0), "r"(c1));
  for (int k = 0; k < 4; ++k) out[4 * t + k] = d[k];
}
"""


def _pack(values: np.ndarray) -> np.ndarray:
    """(32, 4) int bytes -> 32 words, byte j of each word the value j."""
    v = (values & 0xFF).astype(np.uint32)
    return v[:, 0] | v[:, 1] << 8 | v[:, 2] << 16 | v[:, 3] << 24


@needs_nvcc
@needs_nvdisasm
def test_imma_8816_multiplies_as_the_ptx_layout_says(tmp_path: Path) -> None:
    cu, cubin = tmp_path / "imma8816.cu", tmp_path / "imma8816.sm_80.cubin"
    cu.write_text(KERNEL)
    subprocess.run(["nvcc", "-cubin", "-arch=sm_80", "-O3", "-o", str(cubin), str(cu)], check=True)
    fn = functions(cubin)["imma8816"]
    assert any(i.opcode == "IMMA" and "8816" in i.mods for i in fn.instructions)
    rng = np.random.default_rng(8816)
    a = rng.integers(-128, 128, size=(8, 16))
    b = rng.integers(-128, 128, size=(16, 8))
    c = rng.integers(-(2**31), 2**31, size=(8, 8))
    b[:, 0] = 127  # with c[0, 0] near the int32 bound, the u8 x s8 sum at (0, 0) runs past it
    c[0, 0] = 2**31 - 100
    lane = np.arange(32)
    g, q = lane // 4, lane % 4
    cols = 4 * q[:, None] + np.arange(4)
    fa = _pack(a[g[:, None], cols])
    fb = _pack(b[cols, g[:, None]])
    fc = np.stack([c[g, 2 * q], c[g, 2 * q + 1]], 1).astype(np.int32)
    mem = GlobalMemory()
    pa, pb = mem.add_buffer(fa.tobytes(), "a"), mem.add_buffer(fb.tobytes(), "b")
    pc = mem.add_buffer(fc.tobytes(), "c")
    pd = mem.add_buffer(32 * 16, "d")
    params = struct.pack("<QQQQ", pd, pa, pb, pc)
    launch = Launch(
        block=(32, 1, 1),
        grid=(1, 1, 1),
        params=params,
        param_base=0x160,
        static_smem=0,
        dynamic_smem=0,
        shared_base=0,
        memory=mem,
    )
    execute.run(fn, launch)
    got = np.frombuffer(mem.read("d"), dtype=np.int32).reshape(32, 4).astype(np.int64)
    signed = a @ b + c
    unsigned = np.where(a < 0, a + 256, a) @ b + c  # A read as u8
    clamped = np.clip(unsigned, -(2**31), 2**31 - 1)
    wrapped = (signed + 2**31) % 2**32 - 2**31  # without .satfinite: two's complement
    want = np.stack(
        [wrapped[g, 2 * q], wrapped[g, 2 * q + 1], clamped[g, 2 * q], clamped[g, 2 * q + 1]], 1
    )
    assert unsigned[0, 0] > 2**31 - 1 and got[0, 2] == 2**31 - 1  # .satfinite held it
    np.testing.assert_array_equal(got, want)
