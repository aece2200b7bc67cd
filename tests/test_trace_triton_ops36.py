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
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.state import GlobalMemory, Launch
from shmem_cli.trace.kernel.launch import plan_launch
from shmem_cli.trace.pipeline import TraceRequest, load_kernel
from shmem_cli.trace.tracer import find_function
from shmem_cli.trace.triton.launch import triton_launch

from .conftest import TEST_DATA

DATA = TEST_DATA / "triton" / "ops36"
SORT_F16_64 = DATA / "cache" / "BEZLELASMD6OVQLZB7YPQK2MIOZMEYTZRIDJLGYPAH7KDRNEECDQ"

pytestmark = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


def run(entry: Path, inputs: dict[str, np.ndarray[Any, Any]], tmp: Path) -> GlobalMemory:
    """One program of ``entry`` with these input buffers; the global memory after it."""
    loaded = load_kernel(TraceRequest(entry), tmp)
    assert loaded.triton is not None
    args = []
    for name, array in inputs.items():
        path = tmp / f"{name}.npy"
        np.save(path, array)
        args.append(f"{name}=@{path}")
    made = triton_launch(
        loaded.triton, loaded.params, block=None, grid=(1, 1, 1), dynamic_smem=None, args=args
    )
    plan = plan_launch(
        loaded.kernel,
        loaded.params,
        block=made.block,
        grid=made.grid,
        args=made.args,
        dynamic_smem=made.dynamic_smem,
        buffer_size=1 << 16,
    )
    memory = GlobalMemory()
    launch = Launch(
        block=plan.block,
        grid=plan.grid,
        params=plan.param_bytes(memory),
        param_base=loaded.kernel.param_base,
        static_smem=loaded.kernel.static_shared_bytes,
        dynamic_smem=plan.dynamic_smem,
        shared_base=loaded.kernel.reserved_shared_bytes,
        memory=memory,
    )
    function = find_function(loaded.disassembly, loaded.kernel, str(DATA))
    execute.run(function, launch, grid=True, every_block=True)
    return memory


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
