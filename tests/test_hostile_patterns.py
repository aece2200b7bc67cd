"""Regular expressions read over anyone's text in linear time (an adversarial round of 2026-12-05).

A pattern whose neighbouring quantifiers can both take a run of blanks (``^\\s*`` over line
ends in multi-line mode, ``[^\\n]*?[ \\t]*``, ``\\s*(?:...|\\s)*``) backtracks through the run
at each place it is tried: quadratic. Each case below took a minute or more with the pattern
it had (measured: 8,000 blank lines 3.5 s, so 40,000 about 90 s); the time asserted is the
liveness guard :data:`~tests.conftest.HANG_S`, and each result is checked too.
"""

from __future__ import annotations

import time

import pytest

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


def test_the_search_for_a_kernel_s_parameter_names_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each place that looks like ``name(`` was scanned up to 64 KiB on for its closing
    parenthesis (and 4 KiB back), a Python loop: 1,000 unclosed ones in a source took 18 s,
    one source of the 2,000 a trace may read. The characters looked at are counted, over
    every source together."""
    from shmem_cli.trace.kernel import signature

    looked: list[int] = []
    scan = signature._parameter_text

    def counted(code: str, open_paren: int, reach: int) -> tuple[str | None, int]:
        inner, n = scan(code, open_paren, reach)
        looked.append(n)
        return inner, n

    monkeypatch.setattr(signature, "_parameter_text", counted)
    hostile = "__global__ void k(" * 1000 + "a" * 70_000
    good = "__global__ void k(float *out, int n) {}\n"
    # the real declaration first is found at once; after the hostile sources, the budget
    # is spent and the answer is the names found so far (none)
    assert signature.param_names([good, hostile], "k", 2) == ["out", "n"]
    assert sum(looked) < 100
    looked.clear()
    assert signature.param_names([hostile] * 3 + [good], "k", 2) is None
    # without the budget: 3,000 candidates of 64 KiB each (196 million characters)
    assert sum(looked) <= signature.MAX_SCAN and len(looked) < 3 * signature.MAX_CANDIDATES
