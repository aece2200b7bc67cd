"""Regular expressions read over anyone's text in linear time (an adversarial round of 2026-12-05).

A pattern whose neighbouring quantifiers can both take a run of blanks (``^\\s*`` over line
ends in multi-line mode, ``[^\\n]*?[ \\t]*``, ``\\s*(?:...|\\s)*``) backtracks through the run
at each place it is tried: quadratic. Each case below took a minute or more with the pattern
it had (measured: 8,000 blank lines 3.5 s, so 40,000 about 90 s); the time asserted is the
liveness guard :data:`~tests.conftest.HANG_S`, and each result is checked too.
"""

from __future__ import annotations

import time

from shmem_cli.trace.fixes import arrays, declared

from .conftest import HANG_S

PTX = """
.visible .entry _Z1kPf(
\t.param .u64 _Z1kPf_param_0
)
{
\t.shared .align 4 .b8 _ZZ1kPfE4tile[4096];
\t.shared .align 16 .b8 _ZZ1kPfE3acc[512];
\tret;
}
"""


def test_a_ptx_section_of_zeros_read_as_line_ends() -> None:
    # static_arrays reads a cubin's .nv_debug_ptx_txt with each NUL as a line end: a section
    # of 500 KB of zeros never ended (a trace --suggest of it ran past 100 s)
    blank = "\n" * 40_000
    start = time.perf_counter()
    found = arrays.ptx_shared_arrays(blank + PTX + blank, "_Z1kPf")
    assert time.perf_counter() - start < HANG_S
    assert found == [("_ZZ1kPfE4tile", 4096, 4), ("_ZZ1kPfE3acc", 512, 16)]
    assert arrays.ptx_shared_arrays(" \n" * 40_000, "_Z1kPf") == []


def test_a_define_with_a_long_run_of_blanks() -> None:
    text = "#define TILE 32   // the tile\n#define A x" + " " * 40_000 + "y\n#define B a/b // c\n"
    start = time.perf_counter()
    found = declared.macros(text, {})
    assert time.perf_counter() - start < HANG_S
    assert found == {"TILE": "32", "A": "x" + " " * 40_000 + "y", "B": "a/b"}


def test_a_template_head_before_a_long_run_of_blanks() -> None:
    text = "template <int A>" + " " * 40_000 + "x\ntemplate <int PAD> __global__ void k(float *o)"
    start = time.perf_counter()
    found = declared.template_bindings(text, "k<2>")
    assert time.perf_counter() - start < HANG_S
    assert found == {"PAD": "2"}
