"""Triton 3.6 ops of the sweep of issue 27 (tests/data/triton/ops36): what the emulator
computes from the project's own kernels, compiled ahead of time for sm_90.

``sort_k`` sorts 64 float16 values with one warp (``tl.sort``): Triton's bitonic network
compares packed halves with ``HSETP2.LEU.XOR P0, P1, R5, R6, P0``, whose second predicate
combines the high halves' compare with the P0 read before the instruction wrote its first.
The emulator read that P0 as a view of the predicate file and combined with the new value,
so the sorted row came out with values lost and others repeated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shmem_cli.cuda import toolchain
from shmem_cli.trace.emulator.state import GlobalMemory

from .conftest import TEST_DATA
from .triton_run import run_entry

DATA = TEST_DATA / "triton" / "ops36"
SORT_F16_64 = DATA / "cache" / "BEZLELASMD6OVQLZB7YPQK2MIOZMEYTZRIDJLGYPAH7KDRNEECDQ"

pytestmark = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


def run(entry: Path, inputs: dict[str, np.ndarray[Any, Any]], tmp: Path) -> GlobalMemory:
    """One program of ``entry`` with these input buffers; the global memory after it."""
    return run_entry(entry, inputs, tmp, source_root=DATA)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_float16_sort_keeps_every_value_in_order(seed: int, tmp_path: Path) -> None:
    # distinct small integers, exact in float16: the sorted row is np.sort's, value for value
    x = (np.random.default_rng(seed).permutation(64) - 32).astype(np.float16)
    memory = run(SORT_F16_64, {"in_ptr": x}, tmp_path)
    got = np.frombuffer(memory.read("o_ptr"), dtype=np.float16)[:64]
    np.testing.assert_array_equal(got, np.sort(x))


def test_a_float16_sort_of_a_reversed_row(tmp_path: Path) -> None:
    x = np.arange(64, dtype=np.float16)[::-1].copy()
    memory = run(SORT_F16_64, {"in_ptr": x}, tmp_path)
    got = np.frombuffer(memory.read("o_ptr"), dtype=np.float16)[:64]
    np.testing.assert_array_equal(got, np.arange(64, dtype=np.float16))


# tl.clamp(x, -0.5, 0.5), symmetric bounds: Triton lowers it to PTX's min.xorsign.abs.f32,
# SASS FMNMX.XORSIGN R6, |R2|, 0.5, PT (float16 inputs are clamped in float32 too); the
# emulator took the minimum of |x| and 0.5 and dropped x's sign
CLAMP_F32 = DATA / "cache" / "MVAZ74VXDEPJGSML5QZAOTQXFE4XXXJGFIZA55P6343PGXR3XCBA"
CLAMP_F16 = DATA / "cache" / "3UHVT2OASQSTMU4TA4CYPVHKOTLJNHJODSYDMMNI5ACOSKWCCKHA"


@pytest.mark.parametrize(("entry", "dtype"), [(CLAMP_F32, np.float32), (CLAMP_F16, np.float16)])
def test_a_symmetric_clamp_keeps_the_sign(entry: Path, dtype: Any, tmp_path: Path) -> None:
    x = np.linspace(-2, 2, 256).astype(dtype)
    x[:4] = [-0.0, 0.0, -0.25, 0.25]
    memory = run(entry, {"in_ptr": x}, tmp_path)
    got = np.frombuffer(memory.read("o_ptr"), dtype=dtype)[:256]
    want = np.clip(x, dtype(-0.5), dtype(0.5))
    np.testing.assert_array_equal(got, want)
    # the sign of a zero is x's, as the XOR of x's and 0.5's signs gives it
    assert np.signbit(got[0]) and not np.signbit(got[1])


# tl.dot of float64, one warp, 32 x 32 x 32: sixteen DMMA.16x8x16 (eight of them accumulating),
# which the emulator refused before ("instruction DMMA.16x8x16 is not modelled")
DOT_F64 = DATA / "cache" / "FAWAU4HHIAX4QUMH4AYMEOVQSN4JXVOGSUDV6XHW4FXTAFYBDJGQ"


def test_a_float64_dot_is_the_product(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((32, 32)), rng.standard_normal((32, 32))
    memory = run(DOT_F64, {"a_ptr": a, "b_ptr": b}, tmp_path)
    got = np.frombuffer(memory.read("c_ptr"), dtype=np.float64)[: 32 * 32].reshape(32, 32)
    # float64 products summed in another order: equal to the last few bits
    np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12)


def test_a_float64_dot_of_exact_values_is_exact(tmp_path: Path) -> None:
    # small integers: every partial sum exact, so the order of the sum cannot matter
    rng = np.random.default_rng(4)
    a = rng.integers(-50, 50, (32, 32)).astype(np.float64)
    b = rng.integers(-50, 50, (32, 32)).astype(np.float64)
    memory = run(DOT_F64, {"a_ptr": a, "b_ptr": b}, tmp_path)
    got = np.frombuffer(memory.read("c_ptr"), dtype=np.float64)[: 32 * 32].reshape(32, 32)
    np.testing.assert_array_equal(got, a @ b)
