"""Single-instruction semantics that the kernels exercise only partly."""

from __future__ import annotations

import numpy as np
import pytest

from shmem_cli.cuda import sass
from shmem_cli.hardware.arch import SM90
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.budget import Budget
from shmem_cli.trace.emulator.ops.bits import lut3
from shmem_cli.trace.emulator.state import Launch, TraceError


@pytest.mark.parametrize("lut", range(256))
def test_lop3_truth_tables(lut: int) -> None:
    # the truth-table immediate is the function applied to a = 0xF0, b = 0xCC, c = 0xAA
    a, b, c = np.uint8(0xF0), np.uint8(0xCC), np.uint8(0xAA)
    assert int(np.uint8(lut3(lut, a, b, c))) == lut


def _program(body: str) -> sass.Function:
    lines = ['.section\t.text._Z1kv,"ax",@progbits', '\t//## File "k.cu", line 7']
    lines += [
        f"        /*{16 * i:04x}*/  {text} ;" for i, text in enumerate(body.strip().splitlines())
    ]
    (fn,) = sass.parse("\n".join(lines))
    return fn


def _run(fn: sass.Function, threads: int = 64, per_thread: int | None = None) -> execute.Trace:
    budget = Budget() if per_thread is None else Budget(per_thread=per_thread)
    return execute.run(fn, Launch(block=(threads, 1, 1), static_smem=1024), budget=budget)


def test_an_instruction_outside_the_subset_is_named_with_its_line() -> None:
    fn = _program("JMX R4 0x0\nEXIT")
    with pytest.raises(TraceError) as err:
        _run(fn)
    assert "JMX is not modelled" in err.value.message
    assert err.value.path == "k.cu" and err.value.line == 7


def test_a_barrier_that_never_releases_is_a_deadlock() -> None:
    # threads 0..31 exit, the others wait for them at a barrier with a count of 64
    fn = _program(
        """S2R R0, SR_TID.X
ISETP.GE.U32.AND P0, PT, R0, 0x20, PT
@!P0 EXIT
BAR.SYNC.DEFER_BLOCKING 0x1, 0x40
EXIT"""
    )
    with pytest.raises(TraceError, match="deadlock: 32 threads wait"):
        _run(fn)


def test_an_endless_loop_hits_the_budget() -> None:
    fn = _program("NOP\nBRA `(.text._Z1kv)")
    fn.labels[".text._Z1kv"] = 0
    with pytest.raises(TraceError, match="block \\(0,0,0\\) ran 10,048 thread-instructions") as err:
        _run(fn, per_thread=156)  # 156 x 64 threads = 9,984: the step of 64 past it stops
    assert "budget: 156 per thread x 64 threads), looping in k.cu:7 (pc 0x0000-0x0010)" in str(
        err.value
    )


def test_divergent_threads_reconverge_for_a_shuffle() -> None:
    # odd lanes add 100 on their own path, then every lane reads its neighbour's value
    fn = _program(
        """S2R R0, SR_TID.X
LOP3.LUT P0, RZ, R0, 0x1, RZ, 0xc0, !PT
@!P0 BRA `(.L_x_0)
IADD3 R0, R0, 0x64, RZ
SHFL.BFLY PT, R1, R0, 0x1, 0x1f
STS [R0.X4], R1
EXIT"""
    )
    fn.labels[".L_x_0"] = 0x40
    tr = _run(fn, threads=32, per_thread=312)
    (rec,) = tr.records
    assert rec.n == 1  # one converged request, not one per side
    assert not rec.not_modelled.any()


def test_wgmma_is_one_request_per_warp_costed_by_the_core_matrices_it_reads() -> None:
    # zero descriptors: A and B from shared address 0 (all zeros), K-major, no swizzle
    fn = _program(
        """WARPGROUP.ARRIVE
HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ, !UPT
WARPGROUP.DEPBAR.LE gsb0, 0x0
STS [R0.X4], R25
EXIT"""
    )
    tr = _run(fn, threads=128)
    assert tr.not_modelled == []
    gmma, sts = tr.records
    assert gmma.kind.op == "wgmma" and gmma.n == 4  # one request per warp of the warpgroup
    assert int(gmma.stats(SM90).wavefronts.sum()) == 16 + 2  # A: 16 core matrices, B: 8 / 4
    assert sts.n == 4 and not sts.not_modelled.any()


def test_a_tma_copy_guarded_off_in_a_warp_is_an_execution_without_a_request() -> None:
    # CUTLASS's epilogue issues `@!UP4 UTMASTG` in every warp of a warpgroup, the guard true
    # in one elected warp: Nsight's source view counted 32 executions where 4 copies were
    # issued (example 54 on the H200, 4 CTAs; its raw page: smsp__inst_executed_op_tma_st
    # 200 of which 168 pred_off_all). Here the guard is false in all four warps: 4 executions,
    # no request, and no op_misc wavefront claimed for them (not measured)
    fn = _program(
        """UISETP.NE.U32.AND UP0, PT, URZ, URZ, PT
@UP0 UTMASTG.2D [UR8], [UR10]
EXIT"""
    )
    tr = _run(fn, threads=128)
    (tma,) = tr.records
    assert tma.kind.op == "tma" and tma.n == 0 and tma.predicated_off == 4
