"""Plain text without rich (shmem_cli/render/plain.py) against rich's own layout.

The text report is described once (shmem_cli/render/text.py: ``report_view``)
and laid out either by ``plain.layout`` (no color) or by rich. These tests check
that, for every example spec and option, the two give the same characters, that
``layout`` declines exactly what it cannot lay out, and that plain output does
not import rich.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.analysis.analyze import RequestChoice, analyze, analyze_many
from shmem_cli.analysis.suggest import suggest_report
from shmem_cli.model import Report
from shmem_cli.plumbing.errors import brief_name
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.plain import Block, Column, Styled, Table, layout
from shmem_cli.render.rich_blocks import to_rich
from shmem_cli.render.text import render_text, report_view, to_string

from .conftest import ROOT

SPECS = sorted((ROOT / "access_specs").glob("*.yaml"))


def by_rich(view: Sequence[Block], width: int) -> str:
    """What rich prints for the view with color off (as before plain.py existed)."""
    return to_string([to_rich(b) for b in view], color=False, width=width)


def same_both_ways(view: Sequence[Block], width: int) -> str:
    plain = layout(view, width)
    assert plain is not None, "the plain layout declined a report that fits"
    assert plain == by_rich(view, width)
    return plain


# the switches of `shmem analyze` that change the text: --words, --no-tables,
# --no-heatmap/--heatmap (heat), --suggest (hints)
OPTIONS: dict[str, dict[str, Any]] = {
    "default": {"heat": True},
    "words": {"words": True, "heat": True},
    "no-heatmap": {"heat": False},
    "no-tables": {"tables": False},
    "no-tables --heatmap": {"tables": False, "heat": True},
}


# in `make test` the examples that exercise a different part of the layout (a heat map,
# word cells, ldmatrix, atomics, a wide access), and every example at once
# (test_all_examples_together_and_at_their_narrowest_width); the others are marked slow
FAST_SPECS = {"transpose_naive", "tutorial_atomics", "ldmatrix_swizzled_128B", "tutorial_wide"}


@pytest.mark.parametrize(
    "spec",
    [p if p.stem in FAST_SPECS else pytest.param(p, marks=pytest.mark.slow) for p in SPECS],
    ids=[p.stem for p in SPECS],
)
def test_every_example_is_laid_out_as_rich_does(spec: Path) -> None:
    report = analyze_many([str(spec)])
    hints = suggest_report(report)
    for kw in OPTIONS.values():
        same_both_ways(report_view(report, RenderOptions(**kw)), 200)
    for kw in (OPTIONS["default"], OPTIONS["no-tables"]):
        same_both_ways(report_view(report, RenderOptions(hints=hints, **kw)), 200)
    # --request: another warp or iteration (an invalid choice is a located error)
    for choice in (RequestChoice(warp=1, iteration=0), RequestChoice(warp=0, iteration=1)):
        chosen = analyze_many([str(spec)], choice=choice)
        same_both_ways(report_view(chosen, RenderOptions(words=True, heat=True)), 200)


@pytest.mark.slow  # 3-8 s; each example's plain rendering stays fast
def test_all_examples_together_and_at_their_narrowest_width() -> None:
    report = analyze_many([str(ROOT / "access_specs")])
    view = report_view(report, RenderOptions(words=True, heat=True))
    wide = layout(view, 1000)
    assert wide is not None
    # at exactly the longest line's width nothing wraps yet, in either
    narrowest = max(len(line) for line in wide.splitlines())
    assert narrowest < 200
    assert same_both_ways(view, narrowest) == wide


def test_table_layout() -> None:
    # worked out by hand: 'n' right-justified, 'name' left, 'c' centered with at
    # least 3 columns; one blank on each side between columns, none at the edges
    table = Table([Column("n", "right"), Column("name"), Column("c", "center", min_width=3)])
    table.add_row("1", Styled("ab", "bold"), "x")
    table.add_row("10", "a", Styled("xy\nz", "red"))
    table.caption = "cap"
    # (lines end at their last character: the blank after a centered 'c' is not written)
    assert layout([table], 80) == (
        " n  name   c\n"  # the header; 'c' centered in 3 columns
        " 1  ab     x\n"
        "10  a     xy\n"
        + " " * 11
        + "z\n"  # the second line of a two-line cell; the others stay blank
        + " " * 5
        + "cap\n"  # the caption, centered under the 13-column table
    )


def test_padding_only_after_cells() -> None:
    table = Table(
        [Column("wf", "right"), Column("0", "center", min_width=2)], pad_left=0, pad_right=1
    )
    table.add_row("0", Styled("0-3\n@7"))
    assert layout([table], 80) == "wf  0\n 0 0-3\n   @7\n"


def test_a_short_header_sits_on_the_last_line_of_a_tall_one() -> None:
    table = Table([Column("two\nlines"), Column("x", "right")])
    table.add_row("a", "1")
    assert layout([table], 80) == "two\nlines  x\na      1\n"
    assert layout([table], 80) == by_rich([table], 80)


def test_lines_are_kept_as_written() -> None:
    text = Styled("a ", "dim").append(" b ", "black on yellow")
    assert layout([text, Styled(), Styled("x")], 10) == "a  b\n\nx\n"


def test_what_does_not_fit_is_left_to_rich() -> None:
    table = Table([Column("a"), Column("b")])
    table.add_row("1234", "5678")  # 4 + 2 blanks + 4 = 10 columns
    assert layout([table], 10) is not None
    assert layout([table], 9) is None  # rich would narrow the columns
    assert layout([Styled("x" * 11)], 10) is None  # rich would wrap the line
    table.caption = "c" * 11
    assert layout([table], 80) is None  # a caption wider than its table wraps
    for odd in ("café", "wide \u4e00"):
        assert layout([Styled(odd)], 80) is None
    # control characters are shown as escapes, which plain text can lay out
    assert layout([Styled("tab\there"), Styled("cr\r")], 80) == "tab\\x09here\ncr\\x0d\n"


def test_a_bank_table_needs_98_columns() -> None:
    # one wavefront, lane i in bank i: 'wf' (2) + 1 blank, 31 banks of 2 + 1 blank, the last 2
    spec = {
        "block": [32],
        "arrays": {"a": {"dtype": "float", "shape": [32]}},
        "accesses": [{"name": "row", "array": "a", "index": ["lane"]}],
    }
    view = report_view(Report(files=(analyze(spec),)))
    table = next(b for b in view if isinstance(b, Table) and b.columns[0].header == "wf")
    assert layout([table], 98) is not None
    assert layout([table], 97) is None
    assert layout([table], 98) == by_rich([table], 98)


def test_render_text_falls_back_to_rich_for_what_plain_cannot_do() -> None:
    spec = {
        "block": [32],
        "arrays": {"a": {"dtype": "float", "shape": [1024]}},
        "accesses": [{"name": "col\u00e9", "array": "a", "index": ["lane * 32"]}],
    }
    report = Report(files=(analyze(spec),))
    out = render_text(report, RenderOptions(width=200))
    assert "col\u00e9" in out and "32-way" in out
    assert out == by_rich(report_view(report), 200)
    narrow = render_text(report, RenderOptions(width=60))  # the bank table folds to fit
    assert narrow == by_rich(report_view(report, RenderOptions(width=60)), 60)
    assert max(len(line) for line in narrow.splitlines()) <= 60


def imported_by(*args: str) -> set[str]:
    """Top-level packages and shmem modules that ``shmem analyze ARGS`` imports (no terminal)."""
    code = (
        "import sys\n"
        "from shmem_cli.cli import main\n"
        f"try:\n    main({list(args)!r})\n"
        "except SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "FORCE_COLOR"}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, check=True
    )
    assert "1 file(s)" in run.stdout or '"files"' in run.stdout
    return set(run.stderr.split())


@pytest.mark.slow
def test_plain_output_does_not_import_rich(tmp_path: Path) -> None:
    one = str(ROOT / "bench" / "specs" / "one.yaml")
    for args in (["analyze", one], ["analyze", one, "-f", "json"], ["analyze", one, "--no-color"]):
        modules = imported_by(*args)
        assert "shmem_cli.analysis.analyze" in modules
        unwanted = {
            "rich",
            "lark",
            "jsonschema",
            "shmem_cli.analysis.sweep",
            "shmem_cli.lint",
            "shmem_cli.render.export",
        }
        assert not unwanted & modules, args
    # a report with color or a picture still draws with rich
    assert "rich" in imported_by("analyze", one, "--svg", str(tmp_path / "one.svg"))


def test_a_long_kernel_name_is_shown_with_its_inner_template_arguments_cut() -> None:
    inner = "cute::Copy_Atom<cute::Copy_Traits<cute::SM90_TMA_LOAD, cute::C<65536> >, half_t>"
    long = f"tma_load<cute::TiledCopy<{inner}, cute::Layout<cute::C<1> > >, float, 8>"
    long = long.replace("float", "cute::Tensor<cute::ViewEngine<" + "x" * 60 + "> >")
    assert len(long) > 120
    assert brief_name(long) == "tma_load<cute::TiledCopy<...>, cute::Tensor<...>, 8>"
    # short names are kept whole; a name still too long is cut at the first level
    assert brief_name("MatrixMulCUDA<32>") == "MatrixMulCUDA<32>"
    assert brief_name("k<" + "a, " * 60 + "b>") == "k<...>"
    assert brief_name("operator>>" + "x" * 200) == "operator>>" + "x" * 200  # no template
