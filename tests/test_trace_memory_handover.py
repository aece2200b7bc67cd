"""The bytes a launch reads from files (``--memory ADDR=@FILE``, ``--arg NAME=@FILE``) are
held once for the trace: the emulator's arena copies them in, and the launch plan hands its
own copy over, keeping no reference (docs/robustness.md: a 128 MiB ``--memory`` file peaked
at twice its size for the whole trace while the plan still held it)."""

from __future__ import annotations

import os
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.global_memory import GlobalMemory
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.kernel.param_block import read_memory
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


BIG = 4 << 20  # past buffers.IN_PLACE_BYTES: read straight into the arena


def _preloaded(path: Path) -> tuple[int, int, bytes]:
    """Plan ``--memory 0x10000000=@path`` and preload it into a fresh memory: (the most
    bytes Python held while planning; the most it held while preloading past what stays,
    the arena's own arrays; what the arena holds there)."""
    tracemalloc.start()
    try:
        (given,) = read_memory([f"0x10000000=@{path}"])
        planned = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        memory = GlobalMemory()
        memory.preload(given.address, given.held, "--memory")
        now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    off = memory.offsets(np.array([given.address], dtype=np.int64), 1, INS)[0]
    return planned, peak - now, memory.data[off : off + given.size].tobytes()


def test_a_large_file_is_read_straight_into_place_never_held_apart(tmp_path: Path) -> None:
    """A file of 4 MiB (raw, or a C-order .npy's data) is neither read when the launch is
    planned nor copied in: the arena's pages are the only copy, ever (a Fortran-order array,
    reordered, is read whole as before)."""
    raw = np.random.default_rng(7).integers(0, 256, BIG, dtype=np.uint8).tobytes()
    (tmp_path / "raw.bin").write_bytes(raw)
    array = np.arange(BIG // 4, dtype=np.int32).reshape(1024, -1)
    np.save(tmp_path / "c.npy", array)
    np.save(tmp_path / "f.npy", np.asfortranarray(array))
    for name, data in (("raw.bin", raw), ("c.npy", array.tobytes())):
        planned, loaded, got = _preloaded(tmp_path / name)
        assert got == data
        assert planned < BIG // 8 and loaded < BIG // 8, (planned, loaded)  # the file: 8x
    planned, loaded, got = _preloaded(tmp_path / "f.npy")
    assert got == array.tobytes()
    assert planned >= BIG  # reordered in Python: held before it is copied in


def test_a_large_file_that_changes_before_it_is_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.bin"
    path.write_bytes(bytes(BIG))
    (given,) = read_memory([f"0x10000000=@{path}"])
    path.write_bytes(bytes(BIG - 1))  # cut while shmem ran
    with pytest.raises(ShmemError) as err:
        GlobalMemory().preload(given.address, given.held, "--memory 0x10000000")
    message = err.value.message
    assert message.startswith("--memory 0x10000000: cannot read ") and str(path) in message
    assert "it changed while shmem ran (4,194,304 bytes, now 4,194,303)" in message
    assert err.value.code == "invalid-launch"


def test_a_large_file_rewritten_at_its_size_before_it_is_read_is_refused(tmp_path: Path) -> None:
    """The same size is not the same file: one written again (or replaced) after the
    launch was planned is refused, not read as if it were the one planned (whose .npy
    header said where the data lie)."""
    path = tmp_path / "m.bin"
    path.write_bytes(bytes(BIG))
    (given,) = read_memory([f"0x10000000=@{path}"])
    os.utime(path, ns=(0, 1))  # written again, as far as the file system tells
    with pytest.raises(ShmemError) as err:
        GlobalMemory().preload(given.address, given.held, "--memory 0x10000000")
    assert "it changed while shmem ran (written or replaced since" in err.value.message
