"""Calls that are not inlined (tests/data/trace/calls/calls.cu, built for sm_80 and sm_90):
a ``__noinline__`` function (``CALL.REL.NOINC `(label)``), a call through a function
pointer (``CALL.REL.NOINC R8 `(kernel)``), a recursion, each run into its callee's shared
accesses; and calls of a function outside the cubin (``assert``'s ``__assertfail``,
``printf``'s ``vprintf``: ``CALL.ABS.NOINC R2`` to the address a constant bank holds, the
return point made by ``LEPC``), which took the proof of alike blocks down with them: such a
kernel's float division, whose slow-path subroutine returns by a register the data's branch
wrote, made every block of a grid run (its return was proven only where no call of the
function went through a register). The proof now holds each return for the calls it is
proven for, and reads each thread's call frame at the return.

The expected requests and wavefronts are counted below from the kernels' own indices
(4-byte words, 32 banks); the reference for a grid proven alike is every block run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.trace.emulator import execute
from shmem_cli.trace.result import KernelTrace

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_datapaths import DATA_WORD, words_launch
from .test_trace_grid import every_block, traced
from .trace_util import numbered

DATA = TRACE_DATA / "calls"
ARCHES = ["calls.sm_80.cubin", "calls.sm_90.cubin"]
THREADS = 64  # two warps


def wavefronts(words: Iterable[int]) -> int:
    """One warp's 4-byte access: the most distinct words any bank holds."""
    per_bank: dict[int, set[int]] = {}
    for w in words:
        per_bank.setdefault(w % 32, set()).add(w)
    return max(len(v) for v in per_bank.values())


def expected(index: Callable[[int], int | None]) -> tuple[int, int]:
    """(requests, wavefronts) of one shared access of the block, lane t at s[index(t)]
    (None: the lane does not take part; a warp with no lane makes no request)."""
    requests = waves = 0
    for w in range(THREADS // 32):
        words = [x for t in range(w * 32, w * 32 + 32) if (x := index(t)) is not None]
        requests, waves = requests + bool(words), waves + (wavefronts(words) if words else 0)
    return requests, waves


def by_line(k: KernelTrace) -> dict[int, tuple[int, int]]:
    """(requests, wavefronts) per source line, summed over the line's instructions."""
    out: dict[int, tuple[int, int]] = {}
    for a in k.accesses:
        r, w = out.get(a.line or 0, (0, 0))
        out[a.line or 0] = (r + a.cost.requests, w + a.cost.wavefronts)
    return out


def _trace(cubin: str, kernel: str, *args: str) -> KernelTrace:
    return traced(DATA / cubin, kernel, THREADS, (1, 1, 1), args)


@needs_nvdisasm
@pytest.mark.parametrize("cubin", ARCHES)
def test_a_noinline_function_is_run_into(cubin: str) -> None:
    lines = by_line(_trace(cubin, "noinline_call"))
    assert lines == {
        12: expected(lambda t: t * 33 % 256),  # the callee's store
        13: expected(lambda t: (t + 1) % 256),  # and its load
        39: expected(lambda t: t),
    }


@needs_nvdisasm
@pytest.mark.parametrize("cubin", ARCHES)
@pytest.mark.parametrize("which", [0, 1])
def test_a_call_through_a_function_pointer_goes_to_each_threads_own(cubin: str, which: int) -> None:
    """Lane t calls table[(which + t) & 1]: twice (stores s[t], loads s[t ^ 1]) or thrice
    (stores s[2t % 256], loads s[t]); the accesses are generic (through the pointer s)."""
    k = _trace(cubin, "pointer_call", f"which={which}")
    calls_twice: Callable[[int], bool] = lambda t: (which + t) & 1 == 0  # noqa: E731
    assert by_line(k) == {
        17: expected(lambda t: t if calls_twice(t) else None),
        18: expected(lambda t: t ^ 1 if calls_twice(t) else None),
        22: expected(lambda t: None if calls_twice(t) else t * 2 % 256),
        23: expected(lambda t: None if calls_twice(t) else t),
        48: expected(lambda t: t),
    }


@needs_nvdisasm
@pytest.mark.parametrize("cubin", ARCHES)
def test_a_recursion_runs_every_level(cubin: str) -> None:
    """Lane t goes d = n + (t & 3) calls deep (n = 2: 2 to 5); at call depth k every lane
    still going stores s[(t + (d - k + 1) * 32) % 256], and the lanes of one d load s[t] at
    depth d + 1. Threads run together where their call paths are one (the emulator's rule:
    docs/trace-emulator-notes.md), so each depth is a request of its own."""
    trace = _trace(cubin, "recursive_call", "n=2")
    d: Callable[[int], int] = lambda t: 2 + (t & 3)  # noqa: E731
    stores = [
        expected(lambda t, c=c: (t + (d(t) - c + 1) * 32) % 256 if d(t) >= c else None)
        for c in range(1, 6)
    ]
    loads = [expected(lambda t, e=e: t if d(t) == e else None) for e in range(2, 6)]
    assert by_line(trace) == {
        29: (sum(r for r, _ in stores), sum(w for _, w in stores)),
        28: (sum(r for r, _ in loads), sum(w for _, w in loads)),
        58: expected(lambda t: t),  # s[i] = 0
    }


def _rows(tmp_path: Path, blocks: int) -> str:
    """Rows of 64 floats: every third block's row has denormal divisors (the division's slow
    path, a subroutine behind a branch on the data), the others normal values."""
    x = np.tile(np.arange(1, 65, dtype=np.float32), (blocks, 1))
    x[::3, 1::2] = 1e-40
    path = tmp_path / "x.bin"
    x.tofile(path)
    return f"0=@{path}"  # (by position: the line table names calls.cu as it was built)


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("cubin", ARCHES)
@pytest.mark.parametrize("kernel", ["divide_asserted", "divide_printed"])
def test_a_call_outside_the_cubin_leaves_the_division_proven(
    cubin: str, kernel: str, tmp_path: Path
) -> None:
    blocks = 12
    args = (_rows(tmp_path, blocks), "2=5")
    alike = traced(DATA / cubin, kernel, THREADS, (blocks, 1, 1), args)
    cov = alike.launch.coverage
    assert cov is not None and (cov.mode, cov.run) == ("alike", 1), cov.differs
    ran = every_block(DATA / cubin, kernel, THREADS, (blocks, 1, 1), args)
    store, load = (70, 72) if kernel == "divide_asserted" else (80, 82)
    per_block = {
        store: expected(lambda t: t * 2 % 256),
        load: expected(lambda t: (t + 1) * 2 % 256),
    }
    want = {line: (r * blocks, w * blocks) for line, (r, w) in per_block.items()}
    assert by_line(alike) == by_line(ran) == want
    assert not alike.not_modelled  # the assert did not fail, the printf was not reached


#: a subroutine whose return is proven for its call at 0xf0 (the return address MOV'd just
#: before it), entered first through a register (a function pointer) with a return address
#: in R20 chosen by the block's word of a: blocks 1-3 (a = 0) come back to the store at 0xd0,
#: block 0 (a = 1) to 0xe0, past it. The proof must not cover the threads that came by the
#: register (before, any call through a register left every return unproven).
_POINTER_INTO_PROVEN = (
    DATA_WORD
    + """MOV R21, 0xe0
SEL R20, R21, 0xd0, P0
MOV R8, 0x110
CALL.REL.NOINC R8 `(k)
EXIT
STS [R2], R0
MOV R20, 0x100
CALL.REL.NOINC `($k$sub)
EXIT
$k$sub:
RET.REL.NODEC R20 `(k)"""
)


def test_a_return_proven_for_one_call_is_not_for_a_pointer_into_it() -> None:
    function = numbered(_POINTER_INTO_PROVEN)
    ins = function.instructions
    assert [ins[k].pc for k in (11, 13, 14, 15, 16, 17)] == [0xB0, 0xD0, 0xE0, 0xF0, 0x100, 0x110]
    for every in (False, True):
        tr = execute.run(function, words_launch([1, 0, 0, 0]), grid=True, every_block=every)
        assert [(r.instruction.opcode, r.n) for r in tr.records] == [("STS", 3)]  # by hand
        assert tr.coverage is not None and tr.coverage.mode == "whole"
