"""Every opcode the emulator registers runs on real SASS in a test (issue 26).

The opcode table (``trace/emulator/op_table.TABLE``) is filled by the families in
``trace/emulator/ops/``. An opcode is registered only where nvcc or ptxas really emits it
and a test runs it: :func:`test_every_registered_opcode_runs_on_real_sass` runs the
emulator's tests with an opcode recorder (tests/opcode_recorder.py) and requires each
registered opcode among those executed.

The opcodes no other kept kernel reaches come from tests/data/trace/opcodes: the
project's own kernels built to make CUDA 13.0 emit them (saturating narrowings, half2
multiplies, minima and compares, a local array, fences and a profiler trigger, the uniform
datapath's UPOPC/UBREV/UFLO on a TMA copy's coordinates, cp.async arrivals on an mbarrier,
bulk prefetches, a TMA reduction; IMNMX and UPOPC of sm_80 code), whose outputs the H200
computed (outputs/, the harness of tests/data/trace/hopper/lab).

Not registered, because no compiler we have emits them for sm_75..sm_90a (tried: nvcc 13.0
and Triton's ptxas 12.4 and 12.8 on the kernels above, uniform values feeding TMA
coordinates, CUTLASS's CuTe tutorials, and every kept cubin of tests/data): the 32-bit
immediate forms FADD32I, FMUL32I, FFMA32I, MOV32I; the pre-Volta IADD, IMUL, SHL, SHR; the
uniform UIABS, UIADD, UIMUL, UIMNMX, UVIADD, UVIMNMX, UP2R, UR2P, USHL, USHR; DMNMX,
JMP, KILL, CCTLL, ACQBULK and WARPGROUPSET. (ENDCOLLECTIVE, which -O0 code and CUTLASS's
fallbacks reach, and the rest of what real CUDA code emits: tests/test_trace_opcodes_cuda.py.)
An unregistered opcode stops a trace with a located error when a thread reaches it, never
silently.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator import decode
from shmem_cli.trace.emulator.state import GlobalMemory
from shmem_cli.trace.kernel.launch import plan_launch
from shmem_cli.trace.pipeline import TraceRequest, load_kernel
from shmem_cli.trace.tracer import find_function, trace_kernel

from . import hopper_lab as lab
from .conftest import ROOT, TRACE_DATA, needs_nvcc, needs_nvdisasm

OPCODES = TRACE_DATA / "opcodes"
LAUNCHES = [L["id"] for L in lab.manifest(OPCODES)["launches"]]


def test_every_builder_lives_in_an_ops_module() -> None:
    modules = {fn.__module__ for fn in decode.registered().values()}
    assert modules and all(m.startswith("shmem_cli.trace.emulator.ops.") for m in modules), modules


@needs_nvdisasm
@pytest.mark.parametrize("launch_id", LAUNCHES)
def test_the_opcode_kernels_compute_what_the_h200_computed(launch_id: str) -> None:
    """Every buffer a kernel wrote, byte for byte as the H200 wrote it."""
    _, out = lab.run(launch_id, OPCODES)
    assert out
    for i, data in out.items():
        assert data == lab.gpu_output(launch_id, i, OPCODES), f"{launch_id} argument {i}"


@needs_nvdisasm
def test_add_then_minimum_or_maximum_against_numpy() -> None:
    """VIADDMNMX (``__viaddmin_s32`` and friends, and a causal mask's ``min(row + k, n)``):
    the wrapping 32-bit sum, then a minimum or maximum, signed or unsigned, with .RELU;
    the expected values are the intrinsics' definitions written out in NumPy."""
    _, out = lab.run("add_min_max", OPCODES)
    got = np.frombuffer(out[0], dtype=np.int32)[: 7 * 32].reshape(7, 32)
    data = np.fromfile(OPCODES / "inputs" / "amm.bin", dtype=np.int32)
    a, c = data[:32].astype(np.int64), data[32:].astype(np.int64)

    def wrap(x: np.ndarray) -> np.ndarray:  # to int32, as the register holds it
        return ((x + 2**31) % 2**32 - 2**31).astype(np.int64)

    s = wrap(a + 5)
    us, uc = s % 2**32, c % 2**32
    want = [
        np.minimum(s, c),
        np.maximum(s, c),
        wrap(np.minimum(us, uc)),
        wrap(np.maximum(us, uc)),
        np.maximum(np.maximum(s, c), 0),
        np.maximum(np.minimum(s, c), 0),
        np.minimum(wrap(a + 8), c),
    ]
    assert got.tolist() == [w.tolist() for w in want]


@needs_nvdisasm
def test_a_breakpoint_stops_the_trace_where_it_stands() -> None:
    """``__brkpt()`` compiles to BPT.TRAP: the GPU stops the kernel there, the trace with a
    located error."""
    change = {"args": [{"zeros": 128}, {"int": 7}]}
    with pytest.raises(ShmemError) as info:
        lab.run("fences", OPCODES, **change)
    assert "breakpoint" in info.value.message


@needs_nvdisasm
def test_sm80_minimum_maximum_and_popc_against_numpy() -> None:
    """IMNMX and UPOPC exist in sm_80 code (sm_90 has VIMNMX and POPC); the H200 cannot run
    it, so the expected values are the kernel's arithmetic written out in NumPy."""
    cubin = OPCODES / "ops80.sm_80.cubin"
    rng = np.random.default_rng(80)
    data = rng.integers(-(2**31), 2**31 - 1, 64, dtype=np.int64).astype(np.int32)
    a, b, u = -17, 40, 0xF0F0_0F0F
    folder = Path(os.environ.get("TMPDIR", "/tmp"))
    source = folder / f"shmem-ops80-{os.getpid()}.bin"
    source.write_bytes(data.tobytes())
    try:
        loaded = load_kernel(
            TraceRequest(str(cubin), kernel="min_max_popc", block=(32, 1, 1)), folder
        )
        plan = plan_launch(
            loaded.kernel,
            loaded.params,
            block=(32, 1, 1),
            grid=(1, 1, 1),
            args=(f"1=@{source}", f"2={a}", f"3={b}", f"4={u}"),
            dynamic_smem=0,
        )
        memory = GlobalMemory()
        function = find_function(loaded.disassembly, loaded.kernel, str(cubin))
        with decode.recording() as seen:
            trace_kernel(function, loaded.kernel, loaded.arch, plan, memory=memory)
    finally:
        source.unlink()
    out = np.frombuffer(memory.read(loaded.params[0].name or "param0"), dtype=np.int32)[:32]
    t = np.arange(32)
    idx = (bin(u).count("1") + min(a, b) + max(a, 0)) & 31
    with np.errstate(over="ignore"):
        want = (
            np.minimum(data[t], data[t + 32])
            + np.maximum(data[t], np.int32(a)) * np.int32(3)
            + data[(t + idx) & 63]
        ).astype(np.int32)
    assert out.tolist() == want.tolist()
    assert {"IMNMX", "UPOPC"} <= seen


@pytest.mark.slow
@needs_nvdisasm
def test_every_registered_opcode_runs_on_real_sass(tmp_path: Path) -> None:
    """The emulator's tests (tests/test_trace_*.py, this file's fast tests included) run
    with the opcode recorder; every registered opcode must be among those executed."""
    out = tmp_path / "executed.txt"
    env = dict(os.environ, SHMEM_OPCODES_OUT=str(out))
    this = "tests/test_trace_opcodes.py::test_every_registered_opcode_runs_on_real_sass"
    tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_trace_*.py"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "tests.opcode_recorder",
            "-m",
            "not slow",
            "--deselect",
            this,
            *tests,
        ],  # fmt: skip
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    executed = set(out.read_text().split())
    with_cluster = executed | _cluster_opcodes()
    assert sorted(set(decode.registered()) - with_cluster) == []


def _cluster_opcodes() -> set[str]:
    """The cluster barriers' opcodes, from the Hopper lab's cluster kernel."""
    with decode.recording() as seen:
        lab.run("cluster_dsmem")
    return seen


ASSERTS_CU = """
#include <cassert>
__global__ void warp_only(float *out) {
  assert(blockDim.x == 32);
  __shared__ float s[32];
  s[threadIdx.x] = out[threadIdx.x];
  __syncwarp();
  out[threadIdx.x] = s[31 - threadIdx.x];
}
"""


@pytest.mark.slow
@needs_nvcc
def test_a_failed_assert_stops_the_trace_at_its_line(tmp_path: Path) -> None:
    """``assert()`` compiles to ``LEPC`` (the return point) and ``CALL.ABS.NOINC`` to the
    driver's ``__assertfail``: a launch that breaks the assumption is said at the assert's
    line; one that keeps it traces."""
    from click.testing import CliRunner

    from shmem_cli.cli import main

    src = tmp_path / "asserts.cu"
    src.write_text(ASSERTS_CU)
    with decode.recording() as seen:
        bad = CliRunner().invoke(main, ["trace", str(src), "-b", "64"])
    assert bad.exit_code == 2, bad.output
    said = " ".join(bad.output.split())
    assert "asserts.cu:4" in said and "outside it, __assertfail: an assert() failed" in said
    assert {"LEPC", "CALL"} <= seen
    good = CliRunner().invoke(main, ["trace", str(src), "-b", "32", "--no-tables"])
    assert good.exit_code == 0, good.output
