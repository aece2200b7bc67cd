"""Debug builds (``nvcc -G``), traced as the GPU runs them (issue 29).

A -G build keeps every device function a function of its own: the kernel calls it with
``CALL.ABS.NOINC`` after writing the return address into R20:R21 (relocated halves), it
returns with ``RET.ABS.NODEC R20``, saves the convergence barrier it reuses with ``BMOV``,
keeps its frame on the stack in local memory and passes pointers to shared memory and to
the stack as generic addresses (the local window's base is ``c[0x0][0x20]``). The trace
links the functions a kernel calls into one address space (shmem_cli/cuda/sass_link.py),
runs them, and reads generic addresses in the local window from the thread's local memory.

The H200's buffers of the CUDA opcode lab's -G launches (cooperative groups' tiles and
collective sections: ``collective_debug``, ``cg_tiles_debug``) are compared byte for byte
in tests/test_trace_opcodes_cuda.py; here the project's own kernels built both ways
(tests/data/trace/debug_builds): the same shared requests and wavefronts as the -O3 build,
buffers as NumPy computes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import sass
from shmem_cli.cuda.sass_link import ALIGN, link
from shmem_cli.cuda.sass_operands import Imm, Label
from shmem_cli.trace.emulator import decode, execute
from shmem_cli.trace.emulator.state import LOCAL_WINDOW, Launch, TraceError
from shmem_cli.trace.kernel import cubin
from shmem_cli.trace.result import KernelTrace

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm

LAB = TRACE_DATA / "debug_builds"


def _inputs(name: str, dtype: type) -> np.ndarray:
    return np.fromfile(LAB / "inputs" / f"{name}.bin", dtype=dtype)


def _walk(tile: list[int], i: int, n: int) -> int:
    """``walk`` of kernels/debug_builds.cu, in Python."""
    v = tile[i & 31]
    if n > 0 and v & 1:
        v += _walk(tile, i + v, n - 1)
    return v


def _expected(kernel: str) -> np.ndarray:
    """Each kernel's output buffer, worked out in NumPy from its source."""
    words = _inputs("words", np.uint32).astype(np.int64)
    if kernel == "transpose":
        return np.ascontiguousarray(_inputs("matrix", np.float32).reshape(64, 64).T)
    if kernel == "reduce":
        return np.asarray(words[:512].reshape(2, 256).sum(1) % 2**32, dtype=np.uint32)
    if kernel == "nested":
        lane = np.arange(64)
        return words[np.where(lane & 1, lane * 2, lane * 33 % 1024)].astype(np.uint32)
    if kernel == "stack_array":
        out = np.zeros(256, dtype=np.int64)
        for t in range(256):
            seed = (int(words[t]) % 97 + t) % 2**32
            out[t] = sum(int(words[seed * (2 * i + 1) % 256]) << i for i in range(4)) % 2**32
        return out.astype(np.uint32)
    if kernel == "fptr":
        lane, s = np.arange(64), words[:64]
        return np.where(words[:64] & 1, 2 * s, 3 * s[lane * 2 % 64]).astype(np.uint32)
    if kernel == "virtual_call":  # Row's at (s[t]) for odd words, Col's for even ones
        t = np.arange(64)
        col = words[(t * 32) % 1024 + t // 32]
        return np.where(words[:64] & 1, words[:64], col).astype(np.uint32)
    if kernel == "cub_block":
        ints = _inputs("ints", np.int32).astype(np.int64)
        before = np.concatenate([[0], np.cumsum(ints)[:-1]])
        before[0] += ints.sum()
        return before.astype(np.int32)
    walk = _inputs("walk", np.int32).tolist()
    return np.array([_walk(walk[:32], t, walk[32]) for t in range(32)], dtype=np.int32)


#: op_misc wavefronts the -O3 build adds: its tree reduction predicates the step's two LDS
#: and its STS (hardware.misc.PREDICATED_OFF: 1 a warp with no lane on) where the -G build
#: branches around them: warps of 8 with no thread under k = 128, 64, 32, 16, 8, 4, 2, 1,
#: 4 + 6 + 7 * 6 = 52 a block, 2 blocks
MISC_PREDICATED_OFF = {"reduce": 3 * 52 * 2, "cub_block": 2 * 3}
#: load requests (one wavefront each) the -O3 build does without: CUB's block reduce reads
#: two of the warp aggregates with one LDS.64 (-G: an LD.E each), and the raking thread of
#: its block scan keeps the four values it copied in registers to reduce them (-G reads
#: them again); the -O3 reduce's aggregate loads are guarded (!P0: warp 0's lane 0), so the
#: other 3 warps reach its LDS.64 and LDS with no lane on (MISC_PREDICATED_OFF)
LOADS_OPTIMISED_AWAY = {"cub_block": 1 + 4}


#: op_misc rows that follow the code each build emits rather than what the kernel does: the
#: special registers each -G function reads again, shuffles, a guarded-off global access, the
#: generic atomics' space queries (docs/hardware-model.md 9e)
PER_BUILD = ("S2R", "SHFL", "STG", "ST", "LDG", "QSPC")


def _structural_misc(kernel: KernelTrace) -> int:
    """op_misc wavefronts but those of :data:`PER_BUILD`: warps' ends, barriers, fences and
    shared instructions reached with no lane on."""
    return sum(r.wavefronts for r in kernel.misc_rows if _opcode(r.sass) not in PER_BUILD)


def _opcode(sass: str) -> str:
    words = sass.split()
    return words[1 if words[0].startswith("@") else 0].split(".")[0]


@needs_nvdisasm
@pytest.mark.parametrize(
    "kernel",
    [
        # seconds each: 4 blocks; every step a call; CUB's whole block (the measured test
        # runs both builds of each in make test)
        pytest.param("transpose", marks=pytest.mark.slow),
        pytest.param("reduce", marks=pytest.mark.slow),
        "nested",
        "stack_array",
        "fptr",
        "virtual_call",
        pytest.param("cub_block", marks=pytest.mark.slow),
        "recursive_walk",
    ],
)
def test_a_debug_build_makes_the_requests_of_the_optimised_one(kernel: str) -> None:
    """The same kernel built with -G and with -O3: the same shared requests and
    wavefronts per op (but what -O3 optimises away), the buffer NumPy computes. nested: two
    sides of a divergent branch inside a called function call one function that reads
    shared memory, each side a request of its own; stack_array: a stack array filled
    through a generic pointer; fptr: a function pointer, each lane's own (-G: CALL.ABS
    through the address, -O3: CALL.REL through the offset); virtual_call: a virtual call
    (-G: through the virtual table the loader fills with the functions' addresses);
    cub_block: CUB's block reduce and scan, whose -G functions take the address of objects
    in the module's .nv.global; recursive_walk: a recursion. BMOV saves and restores a
    convergence barrier in reduce's and nested's -G functions and in the -O3 recursion."""
    with decode.recording() as seen:
        debug, out_g = lab.run(f"{kernel}_g", LAB)
        optimised, out_o3 = lab.run(f"{kernel}_o3", LAB)
    want = _expected(kernel).tobytes()
    assert out_g[0] == want
    assert out_o3[0] == want
    ops_g, ops_o3 = lab.per_op(debug), lab.per_op(optimised)
    ops_g.pop("misc"), ops_o3.pop("misc")
    misc_g, misc_o3 = _structural_misc(debug), _structural_misc(optimised)
    fewer = LOADS_OPTIMISED_AWAY.get(kernel, 0)
    assert ops_g.pop("load") == tuple(n + fewer for n in ops_o3.pop("load"))
    assert ops_g == ops_o3
    # the -G build's exit fence (MEMBAR.SC.VC before EXIT): 1 a warp (hardware/misc.py)
    launch = lab.launch(f"{kernel}_g", LAB)
    warps = int(np.prod(launch["grid"])) * -(-int(np.prod(launch["block"])) // 32)
    assert misc_o3 - misc_g == MISC_PREDICATED_OFF.get(kernel, 0) - warps
    assert {"CALL", "RET"} <= seen
    if kernel in ("reduce", "nested", "recursive_walk"):
        assert "BMOV" in seen  # -G's step and pick, -O3's walk


# --- linking and the local window on small programs ----------------------------------------

_LISTING = """\
\t.section\t.text._Z4leafv,"ax",@progbits
_Z4leafv:
	//## File "/usr/local/cuda/include/leaf.h", line 3
        /*0000*/                   IADD3 R4, R4, 0x1, RZ ;
        /*0010*/                   RET.ABS.NODEC R20 0x0 ;
.L_x_9:
        /*0020*/                   BRA `(.L_x_9);
\t.section\t.text._Z1kv,"ax",@progbits
_Z1kv:
	//## File "k.cu", line 5
        /*0000*/                   MOV R4, RZ ;
        /*0010*/                   MOV R20, 32@lo((_Z1kv + .L_x_1@srel)) ;
        /*0020*/                   MOV R21, 32@hi((_Z1kv + .L_x_1@srel)) ;
        /*0030*/                   CALL.ABS.NOINC `(_Z4leafv) ;
.L_x_1:
        /*0040*/                   STS [R4.X4], R4 ;
        /*0050*/                   EXIT ;
"""


def test_linking_places_each_called_function_after_the_kernel() -> None:
    fns = {f.name: f for f in sass.parse(_LISTING)}
    linked = link(fns["_Z1kv"], fns.get)
    # the kernel's 6 instructions end at 0x60; the leaf starts at the next 0x80 boundary
    assert ALIGN == 0x80
    assert [i.pc for i in linked.instructions] == [0, 0x10, 0x20, 0x30, 0x40, 0x50] + [
        0x80,
        0x90,
        0xA0,
    ]
    assert linked.labels["_Z4leafv"] == 0x80 and linked.labels[".L_x_9"] == 0xA0
    lo, hi = linked.instructions[1].operands[1], linked.instructions[2].operands[1]
    assert isinstance(lo, Imm) and isinstance(hi, Imm)
    assert (lo.int_value, hi.int_value, lo.reloc, hi.reloc) == (0x40, 0, None, None)
    assert linked.instructions[3].operands == (Label("_Z4leafv"),)
    assert link(fns["_Z4leafv"], fns.get) is fns["_Z4leafv"]  # it calls none
    # the leaf is called from one place: its lines are reported there, as if inlined
    assert linked.instructions[6].locations == (("/usr/local/cuda/include/leaf.h", 3), ("k.cu", 5))
    assert (linked.instructions[6].file, linked.instructions[6].line) == ("k.cu", 5)


def test_a_linked_call_runs_the_function_and_returns_after_the_call() -> None:
    fns = {f.name: f for f in sass.parse(_LISTING)}
    trace = execute.run(link(fns["_Z1kv"], fns.get), Launch(block=(32, 1, 1), static_smem=64))
    (sts,) = trace.records
    assert sts.n == 1 and sts.addr.tolist() == [[4] * 32]  # R4 = 0 + 1, stored at 4 * R4


def _program(body: str) -> sass.Function:
    lines = ['.section\t.text._Z1kv,"ax",@progbits']
    lines += [f"        /*{16 * i:04x}*/  {t} ;" for i, t in enumerate(body.strip().splitlines())]
    (fn,) = sass.parse("\n".join(lines))
    return fn


def test_a_generic_address_in_the_local_window_reaches_the_threads_stack() -> None:
    # a -G frame: the stack pointer made generic with the window base c[0x0][0x20]; each
    # thread stores its index through it, reads it back as local memory, and stores at it
    fn = _program(
        """LDC R1, c[0x0][0x28]
IADD3 R1, R1, -0x10, RZ
S2R R0, SR_TID.X
LDC.64 R2, c[0x0][0x20]
IADD3 R4, P0, R1, R2, RZ
IADD3.X R5, RZ, R3, RZ, P0, !PT
ST.E desc[UR4][R4.64], R0
LDL R6, [R1]
QSPC.E.L P1, RZ, [R4]
@P1 STS [R6.X4], R6
EXIT"""
    )
    assert LOCAL_WINDOW >> 32 != 0  # a 64-bit window, above every buffer's address
    trace = execute.run(fn, Launch(block=(32, 1, 1), static_smem=128))
    (sts,) = trace.records
    assert sts.n == 1 and sts.addr.tolist() == [[4 * t for t in range(32)]]


@needs_nvdisasm
def test_a_large_cubins_kernel_is_disassembled_with_the_functions_it_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # past WHOLE_CODE nvdisasm goes through the kernel's functions only: the -G build's
    # nested, and pick and peek that its relocations name (their sections are their own)
    monkeypatch.setattr(cubin, "WHOLE_CODE", 0)
    path = str(LAB / "debug_builds.g.sm_90.cubin")
    info = cubin.read_cubin(path)
    kernel = next(k for k in info.kernels if k.name == "nested")
    scope = cubin.disassembly_scope(info, (kernel,))
    assert len(scope) == 3 and scope[0] == kernel.symbol
    ran = CliRunner().invoke(main, ["trace", path, "-k", "nested", "-b", "64", "-f", "json"])
    assert ran.exit_code == 0, ran.output
    totals = json.loads(ran.output)["files"][0]["kernels"][0]["totals"]
    assert (totals["load"]["requests"], totals["load"]["wavefronts"]) == (4, 6)


def test_a_call_through_a_null_pointer_is_refused_not_run_as_the_kernel() -> None:
    # address 0 is the kernel's first instruction, but a kernel is no function to call (a
    # virtual table the trace did not fill reads 0)
    fn = _program("MOV R4, RZ\nMOV R5, RZ\nCALL.ABS.NOINC R4\nEXIT")
    with pytest.raises(TraceError, match="calls a function outside it at 0x0"):
        execute.run(fn, Launch(block=(32, 1, 1)))


_NESTED = """\
__device__ __noinline__ unsigned peek(const unsigned *s, int i) { return s[i]; }
__device__ __noinline__ unsigned pick(const unsigned *s, int t) {
  return (t & 1) ? peek(s, t * 2) : peek(s, t * 33 % 1024);
}
__global__ void nested(unsigned *out, const unsigned *in) {
  __shared__ unsigned s[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = in[i];
  __syncthreads();
  out[threadIdx.x] = pick(s, threadIdx.x);
}
"""


@needs_nvcc
@needs_nvdisasm
@pytest.mark.parametrize(
    "flags",
    [["--nvcc-arg=-G"], pytest.param([], marks=pytest.mark.slow)],  # -O3: as -G's
)
@pytest.mark.slow
def test_a_cu_file_built_with_g_traces_as_its_optimised_build(
    tmp_path: Path, flags: list[str]
) -> None:
    # the two sides of pick's branch read shared memory through peek: 2 warps x 2 sides, the
    # odd lanes' reads 2 words apart (2-way: 2 wavefronts), the even lanes' 33 apart (1)
    src = tmp_path / "nested.cu"
    src.write_text(_NESTED)
    ran = CliRunner().invoke(main, ["trace", str(src), "-b", "64", "-f", "json", *flags])
    assert ran.exit_code == 0, ran.output
    totals = json.loads(ran.output)["files"][0]["kernels"][0]["totals"]
    assert (totals["load"]["requests"], totals["load"]["wavefronts"]) == (4, 6)
