"""The bytes a launch reads from files (``--memory ADDR=@FILE``, ``--arg NAME=@FILE``) are
held once for the trace: the emulator's arena copies them in, and the launch plan hands its
own copy over, keeping no reference (docs/robustness.md: a 128 MiB ``--memory`` file peaked
at twice its size for the whole trace while the plan still held it)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.trace.emulator.global_memory import GlobalMemory
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.tracer import find_function, trace_kernel

from .conftest import needs_nvdisasm
from .test_trace_measured import cubin
from .test_trace_memory import CUBIN, INS, PROBLEMS, _files


@needs_nvdisasm
def test_file_bytes_are_referenced_by_nothing_once_preloaded(tmp_path: Path) -> None:
    files = _files(tmp_path)
    out = tmp_path / "out.bin"  # the grouped kernel's output, given as a buffer file
    out.write_bytes(bytes(range(256)) * 16)
    info, disassembly = cubin(CUBIN)
    k = find_kernel(info, None)
    plan = plan_launch(
        k,
        kernel_params(k, None),
        block=(64, 1, 1),
        grid=(4, 1, 1),
        params_file=f"@{files['params']}",
        args=[f"2=@{out}"],
        memory=[f"{PROBLEMS:#x}=@{files['problems']}"],
    )
    (given,) = plan.memory
    (buffer,) = [b.content for b in plan.buffers if b.content is not None]
    data, content = given.data, buffer.data
    assert sys.getrefcount(data) > 2 and sys.getrefcount(content) > 2  # the plan holds them
    memory = GlobalMemory()
    kt = trace_kernel(find_function(disassembly, k, info.path), k, info.arch, plan, memory=memory)
    # only `data` / `content` here and getrefcount's own argument refer to them now
    assert (sys.getrefcount(data), sys.getrefcount(content)) == (2, 2)
    assert given.held.taken and buffer.taken
    with pytest.raises(AssertionError, match="handed over"):
        _ = given.data
    # what the report says of the range stays; the bytes are the arena's now
    assert kt.launch.memory == ((PROBLEMS, len(data), str(files["problems"])),)
    at = memory.offsets(np.array([PROBLEMS]), 1, INS)[0]
    assert memory.data[at : at + len(data)].tobytes() == data
