"""Small facts of the terminal report (shmem_cli/render/text.py) that the pictures rely on."""

from __future__ import annotations

from shmem_cli.analysis.analyze import analyze
from shmem_cli.model import Report
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.text import render_text


def test_access_names_with_brackets_are_printed_as_written() -> None:
    spec = {
        "block": [32],
        "arrays": {"tile": {"dtype": "float", "shape": [32, 32]}},
        "accesses": [{"name": "tile[tx][0] [bold]", "array": "tile", "index": ["lane", 0]}],
    }
    out = render_text(Report(files=(analyze(spec),)), RenderOptions(width=200))
    summary_row = next(line for line in out.splitlines() if line.startswith("32-way"))
    assert "tile[tx][0] [bold]" in summary_row


def test_phase_count_is_singular_for_one_phase() -> None:
    # lanes 2k and 2k+1 load the same double: the pair rule makes the warp one phase
    spec = {
        "block": [32],
        "arrays": {"d": {"dtype": "double", "shape": [32]}},
        "accesses": [{"name": "pairs", "array": "d", "index": ["lane / 2"]}],
    }
    out = render_text(Report(files=(analyze(spec),)), RenderOptions(width=200))
    assert "; 1 phase of 32 lanes (lane pairs share addresses" in out
