"""``shmem analyze`` of several specs (``make run``): one screen of what was found.

The expected rows are worked out by hand from the specs: a 32x32 float tile read by
columns puts the 32 lanes of each of its 32 warps into one bank (32 wavefronts per
request, 1,024 in all, ideal 32); one float of padding per row (32 rows x 4 B = 128 B)
makes it conflict-free.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shmem_cli.cli import main

from .conftest import ROOT

SPECS = "access_specs"
COLUMN = f"{SPECS}/column_read_32x32.yaml"
PADDED = f"{SPECS}/column_read_32x33.yaml"


def analyze(*args: str) -> Result:
    import os

    old = Path.cwd()
    os.chdir(ROOT)
    try:
        return CliRunner().invoke(main, ["analyze", *args], env={"NO_COLOR": "1"})
    finally:
        os.chdir(old)


def test_two_specs_give_the_conflict_its_cost_and_its_fix() -> None:
    result = analyze(COLUMN, PADDED)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "2 specs, 4 accesses: 1 access in 1 spec with bank conflicts"
    assert lines[2].split() == [
        "spec",
        "(in",
        "access_specs/)",
        "access",
        "wavefronts",
        "ideal",
        "suggested",
        "fix:",
        "wavefronts",
        "then",
    ]
    row = lines[3]
    assert row.split()[:6] == [
        "column_read_32x32.yaml",
        "32-way",
        "column",
        "read",
        "tile[tx][ty]",
        "1,024",
    ]
    # the zero-byte fix first: the XOR swizzle synthesized for the column read (issue 31)
    assert row.split()[-9:] == [
        "1,024",
        "32",
        "swizzle",
        "tile",
        "none",
        "->",
        "Swizzle<5,2,5>:",
        "32",
        "ok",
    ]
    assert lines[5] == "no bank conflicts in 1 spec (in access_specs/): column_read_32x33.yaml"
    assert lines[7].startswith(f"bank tables and heat maps: shmem analyze {COLUMN} (one spec)")
    assert "--tables" in lines[7] and len(lines) == 8


def test_one_spec_keeps_its_full_report() -> None:
    result = analyze(COLUMN)
    assert result.exit_code == 0
    assert result.output.startswith(COLUMN)
    assert "\n wf " in result.output or "\nwf " in result.output  # a bank table
    assert "suggested fix" not in result.output


def test_tables_no_tables_and_table_options_give_the_full_report() -> None:
    full = analyze(COLUMN, PADDED, "--tables").output
    assert full.startswith(COLUMN) and PADDED in full and "wf" in full
    summaries = analyze(COLUMN, PADDED, "--no-tables").output
    assert "fill tile[ty][tx] (row store)" in summaries and "suggested fix" not in summaries
    for option in (["--words"], ["--heatmap"], ["--request", "0"], ["--rows", "all"]):
        shown = analyze(COLUMN, PADDED, *option).output
        assert shown.startswith(COLUMN), option
    both = analyze(COLUMN, PADDED, "--tables", "--no-tables")
    assert both.exit_code == 2 and "--tables and --no-tables exclude each other" in both.output


def test_json_of_several_specs_is_the_full_report() -> None:
    data = json.loads(analyze(COLUMN, PADDED, "--format", "json").output)
    assert [f["path"] for f in data["files"]] == [COLUMN, PADDED]


def test_an_invalid_spec_is_shown_and_the_others_still_counted(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nblock: [32]\narrays: {a: {dtype: float, shape: [32]}}\n")
    result = analyze(COLUMN, str(bad))
    assert result.exit_code == 2
    assert result.output.startswith("2 specs, 2 accesses: 1 access in 1 spec with bank")
    assert ", 1 invalid" in result.output.splitlines()[0]
    assert f"{bad}:1:1: error: missing required top-level key" in result.output
    assert "column read tile[tx][ty]" in result.output


@pytest.mark.slow
def test_make_run_fits_one_screen_and_lists_every_conflict() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "$(SHMEM) analyze access_specs/\n" in makefile
    text = analyze(f"{SPECS}/").output
    report = json.loads(analyze(f"{SPECS}/", "-f", "json").output)
    conflicts = [
        (f["path"], a["name"])
        for f in report["files"]
        for a in f["accesses"]
        if not a["conflict_free"]
    ]
    assert conflicts
    rows = [line for line in text.splitlines() if "-way  " in line]
    assert len(rows) == len(conflicts)
    for (_, name), row in zip(conflicts, rows, strict=True):
        assert name[:20] in row
    assert len(text.splitlines()) <= len(conflicts) + 10  # one line per conflict, little else
    assert all(len(line) <= 200 for line in text.splitlines())


def test_overview_picture(tmp_path: Path) -> None:
    svg = tmp_path / "o.svg"
    result = analyze(COLUMN, PADDED, "--svg", str(svg))
    assert result.exit_code == 0
    picture = svg.read_text().replace("&#160;", " ")
    assert picture.startswith("<svg") and "suggested" in picture and "32-way" in picture
