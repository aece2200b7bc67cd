"""What the kept Triton kernels compute in the emulator, against NumPy.

The bank-conflict figures need only the addresses, but a kernel that runs as Triton compiled
it also computes its result: the tiled matmuls' C = A @ B (f16 inputs, and fp32 inputs
through tf32 mma.sync m16n8k8, whose fragment layout the emulator has to get right), and the
softmax rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shmem_cli.cuda import toolchain
from shmem_cli.trace.emulator.state import GlobalMemory

from .conftest import TEST_DATA
from .triton_run import run_entry

DATA = TEST_DATA / "triton"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}

pytestmark = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


def run(ident: str, inputs: dict[str, np.ndarray[Any, Any]], tmp: Path) -> GlobalMemory:
    """The launch of ``ident`` with these input buffers; the global memory after it."""
    L = LAUNCHES[ident]
    args = [f"{k}={v}" for k, v in L["args"].items()]
    return run_entry(
        DATA / L["entry"],
        inputs,
        tmp,
        source_root=DATA,
        grid=(L["grid"][0], L["grid"][1], L["grid"][2]),
        args=args,
        buffer_size=1 << 20,
    )


def tf32(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """fp32 with the low 13 mantissa bits dropped (what tf32 keeps, rounding aside)."""
    return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.mark.parametrize("ident", ["matmul_f16", "matmul_tf32"])
def test_the_tiled_matmul_computes_the_product(ident: str, tmp_path: Path) -> None:
    m, n, k = (LAUNCHES[ident]["args"][key] for key in ("m", "n", "k"))
    rng = np.random.default_rng(7)
    dtype = np.float16 if ident == "matmul_f16" else np.float32
    # values exact in tf32 and f16 (few mantissa bits), so the product is exact in float32
    a = (rng.integers(-8, 8, size=(m, k)) / 8).astype(dtype)
    b = (rng.integers(-8, 8, size=(k, n)) / 8).astype(dtype)
    memory = run(ident, {"a_ptr": a, "b_ptr": b}, tmp_path)
    c = np.frombuffer(memory.read("c_ptr"), dtype=dtype)[: m * n].reshape(m, n)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(c.astype(np.float64), want)


def test_tf32_inputs_lose_their_low_mantissa_bits(tmp_path: Path) -> None:
    m, n, k = (LAUNCHES["matmul_tf32"]["args"][key] for key in ("m", "n", "k"))
    rng = np.random.default_rng(11)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    memory = run("matmul_tf32", {"a_ptr": a, "b_ptr": b}, tmp_path)
    c = np.frombuffer(memory.read("c_ptr"), dtype=np.float32)[: m * n].reshape(m, n)
    truncated = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
    np.testing.assert_allclose(c, truncated, rtol=1e-5, atol=1e-5)
    # and it is not the fp32 product: tf32 keeps 10 mantissa bits
    full = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - full).max() > 1e-4


def test_softmax_rows_sum_to_one(tmp_path: Path) -> None:
    L = LAUNCHES["softmax_w4"]
    cols, stride, rows = L["args"]["n_cols"], L["args"]["row_stride"], L["grid"][0]
    x = np.random.default_rng(3).standard_normal((rows, stride)).astype(np.float32)
    memory = run("softmax_w4", {"in_ptr": x}, tmp_path)
    out = np.frombuffer(memory.read("out_ptr"), dtype=np.float32)[: rows * stride]
    got = out.reshape(rows, stride)[:, :cols]
    e = np.exp(x[:, :cols] - x[:, :cols].max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
