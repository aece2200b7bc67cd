"""Calls to functions outside the cubin (tests/data/trace/external/calls.cu): printf's
``vprintf`` is stepped over and named in the report, the shared accesses after it still
trace, and a use of its return value is inexact; a failed ``assert()`` still stops the
trace at its line.

The expected wavefronts come from the pure-Python bank count below, from the kernels' own
index arithmetic (4-byte elements, 32 banks)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.state import TraceError
from shmem_cli.trace.kernel.constants import read_constants
from shmem_cli.trace.kernel.cubin import find_kernel, read_cubin
from shmem_cli.trace.kernel.externals import EXTERNAL_BASE
from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.result import KernelTrace

from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm

DATA = TRACE_DATA / "external"
CUBIN = DATA / "calls.sm_90.cubin"
THREADS = 64  # two warps


def wavefronts(words: list[int]) -> int:
    """One warp's 4-byte access: the most distinct words any bank holds."""
    per_bank: dict[int, set[int]] = {}
    for w in words:
        per_bank.setdefault(w % 32, set()).add(w)
    return max(len(v) for v in per_bank.values())


def expected(index: Callable[[int], int]) -> tuple[int, int]:
    """(requests, wavefronts) of one shared access of the block, lane t at s[index(t)]."""
    warps = [range(w * 32, w * 32 + 32) for w in range(THREADS // 32)]
    return len(warps), sum(wavefronts([index(t) for t in warp]) for warp in warps)


def trace(kernel: str, *args: str, path: Path = CUBIN) -> KernelTrace:
    (k,) = trace_file(TraceRequest(path, kernel=kernel, block=(THREADS, 1, 1), args=args)).kernels
    return k


def by_line(k: KernelTrace) -> dict[int, tuple[int, int]]:
    return {a.line or 0: (a.cost.requests, a.cost.wavefronts) for a in k.accesses}


def test_the_functions_outside_are_found_by_the_bank_relocations() -> None:
    info = read_cubin(CUBIN, use_tools=False)
    consts = read_constants(CUBIN, find_kernel(info, "printf_value").mangled)
    # bank 4 is the module's: it holds the address of every function the kernels call
    assert sorted(consts.externals.values()) == ["__assertfail", "vprintf"]
    bank4 = consts.banks[4]
    for at in consts.externals:
        assert at >= EXTERNAL_BASE
        slots = [o for o in range(0, len(bank4), 8) if bank4[o : o + 8] == at.to_bytes(8, "little")]
        assert len(slots) == 1  # the one slot the driver would fill


@needs_nvdisasm
def test_printf_is_stepped_over_and_the_accesses_after_it_trace() -> None:
    k = trace("printf_value")
    assert by_line(k) == {
        9: expected(lambda t: t),
        11: expected(lambda t: (t * 32) % 1024),  # the value printed
        12: expected(lambda t: (t * 2) % 1024),  # after the call
        14: expected(lambda t: (t * 33) % 1024),
    }
    (call,) = k.not_modelled
    assert (call.callee, call.line, call.executions) == ("vprintf", 11, THREADS // 32)
    assert call.sass.startswith("CALL")
    # printf's return value is stored as data: no address depends on it
    assert all(a.inexact_requests == 0 for a in k.accesses)


@needs_nvdisasm
def test_an_address_that_uses_printf_s_return_value_is_inexact() -> None:
    k = trace("printf_address")
    inexact = {a.line: a.inexact_requests for a in k.accesses}
    assert inexact == {20: 0, 23: THREADS // 32}


@needs_nvdisasm
def test_the_report_names_the_function() -> None:
    res = CliRunner().invoke(
        main, ["trace", str(CUBIN), "-k", "printf_value", "-b", str(THREADS), "--no-tables"]
    )
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "calls.cu:11 calls vprintf, a function outside the kernel: stepped over" in flat
    js = CliRunner().invoke(
        main, ["trace", str(CUBIN), "-k", "printf_value", "-b", str(THREADS), "-f", "json"]
    )
    (row,) = json.loads(js.output)["files"][0]["kernels"][0]["not_modelled"]
    assert (row["callee"], row["line"], row["dsmem_sectors"]) == ("vprintf", 11, None)


@needs_nvdisasm
def test_a_failed_assert_still_stops_the_trace() -> None:
    with pytest.raises(ShmemError, match="__assertfail: an assert\\(\\) failed") as err:
        trace("asserted", "limit=32")
    assert err.value.line == 29
    # what it asserted, read from __assertfail's arguments (the module's strings)
    assert "(assert(threadIdx.x < limit) at calls.cu:29), so this launch breaks" in str(err.value)
    k = trace("asserted", "limit=64")  # every thread keeps the assumption: no call
    assert by_line(k) == {30: expected(lambda t: t), 32: expected(lambda t: (t * 2) % 1024)}
    assert k.not_modelled == ()


@needs_nvdisasm
def test_an_assert_on_a_missing_target_names_it() -> None:
    # CuTe's way: assert(0 && "... SM90A ...") where a build without sm_90a has no wgmma
    with pytest.raises(ShmemError) as err:
        trace("needs_sm90a", path=DATA / "arch_assert.sm_90.cubin")
    said = str(err.value)
    assert '(assert(0 && "Attempting to use this path without TILE_ARCH_SM90A_ENABLED") at ' in said
    assert "arch_assert.cu:13): the code path asserted on is the one a build without " in said
    assert "sm_90a" in said and "(--arch sm_90a, or leave --arch out for a .cu" in said
    assert "check --block" not in said and err.value.line == 13


@needs_nvcc
def test_printf_from_the_cu(tmp_path: Path) -> None:
    src = tmp_path / "calls.cu"
    src.write_bytes((DATA / "calls.cu").read_bytes())
    k = trace("printf_value", path=src)
    assert [n.callee for n in k.not_modelled] == ["vprintf"]
    assert by_line(k)[12] == expected(lambda t: (t * 2) % 1024)


# A cubin built with -rdc=true and not linked names the function in the call itself
# (``CALL.ABS.NOINC `(vprintf)``, as nvdisasm prints it there): hand-written SASS of that
# form, a store before the call and a load whose address is the call's R4 after it.
NAMED_CALL_SASS = """
        .section        .text.named_call,"ax",@progbits
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   S2UR UR4, SR_CgaCtaId ;
        /*0020*/                   UMOV UR5, 0x400 ;
        /*0030*/                   ULEA UR4, UR4, UR5, 0x18 ;
        /*0040*/                   LEA R2, R0, UR4, 0x2 ;
        /*0050*/                   STS [R2], R0 ;
        /*0060*/                   MOV R4, R0 ;
        /*0070*/                   CALL.ABS.NOINC `(vprintf) ;
        /*0080*/                   LEA R3, R4, UR4, 0x2 ;
        /*0090*/                   LDS R5, [R3] ;
        /*00a0*/                   LDS R6, [R2] ;
        /*00b0*/                   EXIT ;
"""


def test_a_call_that_names_a_function_outside_is_stepped_over() -> None:
    from shmem_cli.cuda.sass import parse
    from shmem_cli.trace.emulator import execute
    from shmem_cli.trace.emulator.state import Launch

    function = parse(NAMED_CALL_SASS)[0]
    trace = execute.run(function, Launch(block=(THREADS, 1, 1), static_smem=4 * THREADS))
    assert [(ins.pc, n) for ins, n in trace.not_modelled] == [(0x70, THREADS // 32)]
    assert trace.callees == {0x70: "vprintf"}
    loads = {r.instruction.pc: r for r in trace.records if r.n and r.instruction.opcode == "LDS"}
    assert set(loads) == {0x90, 0xA0}  # both loads after the call ran, in every warp
    assert loads[0x90].not_modelled[: loads[0x90].n].all()  # its address is the call's R4
    assert not loads[0xA0].not_modelled[: loads[0xA0].n].any()
    called = NAMED_CALL_SASS.replace("`(vprintf)", "`(__assertfail)")
    with pytest.raises(TraceError, match="__assertfail: an assert"):
        execute.run(parse(called)[0], Launch(block=(THREADS, 1, 1), static_smem=4 * THREADS))


@needs_nvdisasm
def test_printf_in_a_cubin_linked_with_rdc() -> None:
    """calls.rdc.sm_90.cubin, the device-linked cubin of a -rdc=true build: the call names
    vprintf itself and the format string's address is a relocation (``32@lo($str)``)."""
    k = trace("printf_value", path=DATA / "calls.rdc.sm_90.cubin")
    assert by_line(k) == by_line(trace("printf_value"))
    (call,) = k.not_modelled
    assert (call.sass, call.callee) == ("CALL.ABS.NOINC `(vprintf)", "vprintf")
    assert all(a.inexact_requests == 0 for a in k.accesses)


@needs_nvcc
def test_a_relocatable_cubin_is_said_so(tmp_path: Path) -> None:
    import subprocess

    from shmem_cli.cuda import toolchain

    nvcc = toolchain.which("nvcc")
    assert nvcc is not None
    out = tmp_path / "calls.cubin"
    subprocess.run(
        [nvcc, "-cubin", "-rdc=true", "-arch=sm_90", "-o", str(out), str(DATA / "calls.cu")],
        check=True,
        capture_output=True,
    )
    res = CliRunner().invoke(main, ["trace", str(out), "-k", "printf_value", "-b", "64"])
    assert res.exit_code == 2
    flat = " ".join(res.output.split())
    assert "a relocatable cubin (built with -rdc=true or -dc)" in flat
    assert "trace the linked executable" in flat and "Traceback" not in res.output
