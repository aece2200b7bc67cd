"""Rows of Triton's library lines (tl.max, tl.sum in triton/language/standard.py) placed at the
kernel's line that called them, from the TTGIR's callsite locations: Triton 3.2-3.6 cubins
carry no inlining chain in their line table, so the line table alone says standard.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmem_cli.cuda import toolchain
from shmem_cli.trace.triton.callsites import library_callers, place

LIB = "/site-packages/triton/language/standard.py"
USER = "/home/me/k.py"
TTGIR = f"""#loc = loc("{USER}":6:0)
#loc1 = loc(unknown)
#loc12 = loc("{USER}":16:37)
#loc17 = loc("{USER}":18:29)
#loc30 = loc("n_cols"(#loc))
#loc39 = loc("row_minus_max"(#loc12))
#loc48 = loc(callsite(#loc1 at #loc39))
#loc11 = loc("{LIB}":191:40)
#loc13 = loc("{LIB}":170:27)
#loc16 = loc("{LIB}":293:36)
#loc47 = loc(callsite(#loc11 at #loc39))
#loc51 = loc(callsite(#loc13 at #loc47))
#loc49 = loc(callsite(#loc16 at #loc12))
#loc50 = loc(callsite(#loc16 at #loc17))
#loc60 = loc(callsite(#loc61 at #loc62))
#loc61 = loc(callsite(#loc60 at #loc12))
"""


def _library(file: str) -> bool:
    return "/triton/language/" in file


def test_each_library_line_gets_the_kernel_lines_that_called_it() -> None:
    callers = library_callers(TTGIR, _library)
    assert callers == {
        (LIB, 191): ((USER, 16),),  # through a named location
        (LIB, 170): ((USER, 16),),  # two levels of library: the kernel's line at the end
        (LIB, 293): ((USER, 16), (USER, 18)),  # two sums share the library's line
    }  # a loop of aliases (#loc60, #loc61) and unknown locations resolve to nothing


def test_the_calls_are_in_program_order_a_helpers_at_its_call() -> None:
    # a @triton.jit helper defined above the kernel (line 3) called at line 20, and a
    # direct call at line 10: the helper's sum runs second
    text = f"""#loc16 = loc("{LIB}":293:36)
#loc70 = loc("{USER}":3:5)
#loc71 = loc("{USER}":20:9)
#loc72 = loc(callsite(#loc70 at #loc71))
#loc73 = loc(callsite(#loc16 at #loc72))
#loc74 = loc("{USER}":10:4)
#loc75 = loc(callsite(#loc16 at #loc74))
#loc76 = loc("{USER}":10:30)
#loc77 = loc(callsite(#loc16 at #loc76))
"""
    # two calls on line 10 (columns 4 and 30) are two sites
    assert library_callers(text, _library) == {(LIB, 293): ((USER, 10), (USER, 10), (USER, 3))}


def test_shared_library_lines_go_to_the_calls_in_order() -> None:
    lib = (LIB, 293)
    callers = {(LIB, 191): ((USER, 16),), lib: ((USER, 16), (USER, 18))}
    lines = {
        0x10: (LIB, 191),  # one caller: moved, shared or not
        0x20: lib,
        0x30: lib,  # not a shared-memory instruction: stays
        0x40: lib,
        0x50: (USER, 17),
        0x60: lib,
        0x70: lib,
        0x80: (USER, 99),
    }
    shared = {0x20: "STS", 0x40: "LDS", 0x60: "STS", 0x70: "LDS", 0x80: "STS"}
    placed = place(lines, callers, shared)
    assert placed[0x10] == (USER, 16)
    assert placed[0x20] == placed[0x40] == (USER, 16)
    assert placed[0x60] == placed[0x70] == (USER, 18)
    assert placed[0x30] == lib and placed[0x50] == (USER, 17) and placed[0x80] == (USER, 99)
    # runs that differ, or a count the calls do not divide: the library's line stays
    assert place(lines, callers, {**shared, 0x70: "LDS.64"})[0x60] == lib
    assert place(lines, callers, {0x20: "STS", 0x40: "LDS", 0x60: "STS"})[0x20] == lib


@pytest.mark.slow  # two Triton 3.6 entries traced
@pytest.mark.skipif(toolchain.which("nvdisasm") is None, reason="nvdisasm not found")
@pytest.mark.parametrize(
    ("ident", "lines"), [("softmax_w4", [19, 21]), ("layernorm", [32, 32, 32, 32, 34, 34, 34, 34])]
)
def test_pytorchs_triton_36_entries_report_the_kernels_own_lines(
    ident: str, lines: list[int]
) -> None:
    from .test_trace_triton_jit36 import traced

    kernel = traced("abi7", ident)
    rows = [a for a in kernel.accesses if a.op in ("load", "store")]
    # tests/data/triton/kernels.py: softmax's tl.max (19) and tl.sum (21); layernorm's two
    # tl.sum (32 and 34), whose exchanges share standard.py's lines
    got = [a.line for a in rows] if ident == "layernorm" else sorted({a.line for a in rows})
    assert got == lines
    assert {Path(a.file or "").name for a in rows} == {"kernels.py"}
    assert {Path(a.site.inner[0]).name for a in rows if a.site.inner} == {"standard.py"}


@pytest.mark.slow  # one Triton 3.6 entry traced
@pytest.mark.skipif(toolchain.which("nvdisasm") is None, reason="nvdisasm not found")
def test_two_interleaved_sums_are_told_apart_by_order() -> None:
    """layernorm backward (tests/data/triton/tutorial36b): c1 = tl.sum(...) / n_cols at line
    77 and c2 = tl.sum(...) / n_cols at line 78; ptxas interleaves their warp shuffles and
    shares the division (line 77), but each exchange through shared memory keeps its place
    between barriers: the first four instructions are line 77's sum, the next four 78's."""
    import json

    from shmem_cli.trace.pipeline import TraceRequest, arg_texts, trace_file

    from .conftest import TEST_DATA

    data = TEST_DATA / "triton" / "tutorial36b"
    launches = json.loads((data / "launches.json").read_text())["launches"]
    launch = next(L for L in launches if L["id"] == "lnb_200_g8_w4")
    grid = (*launch["grid"], 1, 1, 1)[:3]
    request = TraceRequest(data / launch["entry"], grid=grid, args=arg_texts(launch["args"]))
    rows = [a for a in trace_file(request).kernels[0].accesses if a.site.inner is not None]
    assert [a.line for a in rows] == [77] * 4 + [78] * 4
    assert {Path(a.site.inner[0]).name for a in rows if a.site.inner} == {"standard.py"}


def test_pytorch_inductors_helpers_are_library_as_tritons_language_is() -> None:
    """An Inductor kernel (a generated .py) calls PyTorch's triton_helpers.py (welford_reduce,
    max_with_index): its rows go to the generated kernel's line, as tl.sum's do."""
    from shmem_cli.trace.triton.callsites import is_library

    helpers = "/venv/lib/python3.12/site-packages/torch/_inductor/runtime/triton_helpers.py"
    kernel = "/tmp/torchinductor_me/pz/cpzq6egztipdnpag.py"
    assert is_library(LIB) and is_library(helpers)
    assert not is_library(kernel) and not is_library(USER)
    text = f"""#loc5 = loc("{helpers}":243:27)
#loc6 = loc("{kernel}":41:48)
#loc7 = loc(callsite(#loc5 at #loc6))
"""
    assert library_callers(text, is_library) == {(helpers, 243): ((kernel, 41),)}
