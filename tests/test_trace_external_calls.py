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
    k = trace("asserted", "limit=64")  # every thread keeps the assumption: no call
    assert by_line(k) == {30: expected(lambda t: t), 32: expected(lambda t: (t * 2) % 1024)}
    assert k.not_modelled == ()


@needs_nvcc
def test_printf_from_the_cu(tmp_path: Path) -> None:
    src = tmp_path / "calls.cu"
    src.write_bytes((DATA / "calls.cu").read_bytes())
    k = trace("printf_value", path=src)
    assert [n.callee for n in k.not_modelled] == ["vprintf"]
    assert by_line(k)[12] == expected(lambda t: (t * 2) % 1024)
