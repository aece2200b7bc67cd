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


def test_a_shared_library_line_goes_to_the_nearest_instruction_of_one_caller() -> None:
    lib = (LIB, 293)
    callers = {(LIB, 191): ((USER, 16),), lib: ((USER, 16), (USER, 18))}
    lines = {
        0x10: (USER, 16),
        0x20: (LIB, 191),  # one caller
        0x30: lib,  # nearest caller's instruction: 0x10 (USER 16), two before
        0x40: lib,  # 0x10, three before (0x50 and 0x60, USER 17, call no sum)
        0x50: (USER, 17),
        0x60: (USER, 17),
        0x70: lib,  # 0x80 (USER 18), next to it
        0x80: (USER, 18),
        0x90: (USER, 99),
    }
    placed = place(lines, callers)
    assert placed[0x20] == (USER, 16)
    assert placed[0x30] == placed[0x40] == (USER, 16)
    assert placed[0x70] == (USER, 18)
    assert placed[0x50] == (USER, 17) and placed[0x90] == (USER, 99)
    # both callers at one distance: the library's line stays
    tie = {0x10: (USER, 16), 0x20: lib, 0x30: (USER, 18)}
    assert place(tie, callers)[0x20] == lib
    # no caller anywhere near: stays
    assert place({0x10: lib, 0x20: (USER, 3)}, callers)[0x10] == lib


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
