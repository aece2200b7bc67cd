"""Where nvcc is found: compile a kernel of tests/data/trace/kernels now and trace it (the
other trace tests use the kept cubins and need no nvcc)."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.cuda import toolchain
from shmem_cli.hardware.arch import SM90
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.state import GlobalMemory, Launch

from .conftest import TRACE_DATA as DATA
from .conftest import needs_nvdisasm
from .trace_util import functions

pytestmark = [
    needs_nvdisasm,
    pytest.mark.skipif(toolchain.which("nvcc") is None, reason="nvcc not found"),
]


def test_fresh_cubin_traces_like_the_kept_one(tmp_path: Path) -> None:
    nvcc = toolchain.which("nvcc")
    assert nvcc is not None
    out = tmp_path / "emu_basic.cubin"
    src = DATA / "kernels" / "emu_basic.cu"
    cmd = [nvcc, "-cubin", "-lineinfo", "-O3", "-arch=sm_90", "-o", str(out), str(src)]
    subprocess.run(cmd, check=True, capture_output=True)
    fn = functions(out)["_Z13emu_transposeILi0EEvPKfPf"]
    mem = GlobalMemory()
    src_data = np.arange(1024, dtype=np.float32)
    a_in, a_out = mem.add_buffer(src_data.tobytes(), "in"), mem.add_buffer(4096, "out")
    launch = Launch(
        block=(32, 8, 1), params=struct.pack("<QQ", a_in, a_out), static_smem=4096, memory=mem
    )
    tr = execute.run(fn, launch)
    out_data = np.frombuffer(mem.read("out"), dtype=np.float32).reshape(32, 32)
    np.testing.assert_array_equal(out_data, src_data.reshape(32, 32).T)
    loads = [r for r in tr.records if r.kind.op == "load"]
    assert sum(int(r.stats(SM90).wavefronts.sum()) for r in loads) == 32 * 32
    assert loads[0].instruction.file is not None and loads[0].instruction.file.endswith(
        "emu_basic.cu"
    )
