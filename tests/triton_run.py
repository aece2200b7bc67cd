"""Run a kept Triton cache entry in the emulator with input buffers of the test's own, for
tests that check what a kernel computes (tests/test_trace_triton_values.py, ops36's)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.state import GlobalMemory, Launch
from shmem_cli.trace.kernel.launch import plan_launch
from shmem_cli.trace.pipeline import TraceRequest, load_kernel
from shmem_cli.trace.tracer import find_function
from shmem_cli.trace.triton.launch import triton_launch


def run_entry(
    entry: Path,
    inputs: dict[str, np.ndarray[Any, Any]],
    tmp: Path,
    *,
    source_root: Path,
    grid: tuple[int, int, int] = (1, 1, 1),
    args: Sequence[str] = (),
    buffer_size: int = 1 << 16,
) -> GlobalMemory:
    """The launch of the cache entry ``entry`` over ``grid`` with ``args`` (``NAME=VALUE``)
    and each of ``inputs`` as a buffer of its own (saved under ``tmp``; the kernels' sources
    under ``source_root``); every block run, the global memory after it."""
    loaded = load_kernel(TraceRequest(entry), tmp)
    assert loaded.triton is not None
    given = list(args)
    for name, array in inputs.items():
        path = tmp / f"{name}.npy"
        np.save(path, array)
        given.append(f"{name}=@{path}")
    made = triton_launch(
        loaded.triton, loaded.params, block=None, grid=grid, dynamic_smem=None, args=given
    )
    plan = plan_launch(
        loaded.kernel,
        loaded.params,
        block=made.block,
        grid=made.grid,
        args=made.args,
        dynamic_smem=made.dynamic_smem,
        buffer_size=buffer_size,
        cluster=made.cluster,
    )
    memory = GlobalMemory()
    launch = Launch(
        cluster=plan.cluster,
        block=plan.block,
        grid=plan.grid,
        params=plan.param_bytes(memory),
        param_base=loaded.kernel.param_base,
        static_smem=loaded.kernel.static_shared_bytes,
        dynamic_smem=plan.dynamic_smem,
        shared_base=loaded.kernel.reserved_shared_bytes,
        memory=memory,
    )
    function = find_function(loaded.disassembly, loaded.kernel, str(source_root))
    execute.run(function, launch, grid=True, every_block=True)  # its values are read
    return memory
