"""docs/hardware-model.md quotes the measurements faithfully and is up to date."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .hwtruth import DATA, probe_cases, public_cases

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "hardware-model.md"

Table = list[dict[str, str]]


def tables(text: str) -> list[Table]:
    """Every pipe table of a markdown text, as rows keyed by the header cells."""
    out: list[Table] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1]):
            header = _cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(header, _cells(lines[i]), strict=True)))
                i += 1
            out.append(rows)
        else:
            i += 1
    return out


def _cells(line: str) -> list[str]:
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [p.strip() for p in parts]


DOC_TABLES = tables(DOC.read_text())
MEASURED = {c["name"]: c["measured"] for c in public_cases() + probe_cases()}
TIMING = {
    name: (float(cyc), float(wf))
    for name, cyc, wf in (
        line.split()
        for line in (DATA / "h200_timing_public.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
}
PROBE_COUNTERS = {
    r["name"]: r["counters"]
    for stem in ("h200_probe", "h200_probe2")
    for r in json.loads((DATA / f"{stem}_results.json").read_text())
}


def case_rows() -> list[dict[str, str]]:
    return [row for t in DOC_TABLES for row in t if "case" in row]


def test_the_doc_has_its_tables() -> None:
    names = {row["case"] for row in case_rows()}
    # a few cases each section leans on
    for name in ("f32_offset_col", "int4_div4", "p16_mixed", "ldsm_x4_same_all", "a_exch_same",
                 "pred_warp1_col", "v_a_26_int4", "a_add_col"):
        assert name in names, name
    assert len(case_rows()) > 150


def test_measured_wavefronts_match_the_data() -> None:
    checked = 0
    for row in case_rows():
        for column in ("measured", "measured wavefronts", "wavefronts"):
            if column in row:
                assert int(row[column]) == MEASURED[row["case"]]["wavefronts"], (row["case"], column)
                checked += 1
    assert checked > 100


def test_measured_requests_match_the_data() -> None:
    checked = 0
    for row in case_rows():
        if "measured requests" in row:
            assert int(row["measured requests"]) == MEASURED[row["case"]]["requests"], row["case"]
            checked += 1
    assert checked >= 20


def test_timing_columns_match_the_timing_file() -> None:
    checked = 0
    for row in case_rows():
        if "SM cycles/request" in row:
            cycles, wavefronts = TIMING[row["case"]]
            assert float(row["SM cycles/request"]) == cycles, row["case"]
            assert float(row["wavefronts/request"]) == wavefronts, row["case"]
            checked += 1
    assert checked >= 20


def test_bank_conflict_counters_match_the_probe_results() -> None:
    rows = [row for row in case_rows() if "bank_conflicts" in row]
    assert rows
    ops = {c["name"]: c["op"] for c in probe_cases()}
    unit = {"load": "ld", "ldmatrix": "ld", "store": "st", "stmatrix": "st", "atomic": "atom"}
    for row in rows:
        counters = PROBE_COUNTERS[row["case"]]
        key = f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{unit[ops[row['case']]]}.sum"
        assert int(row["bank_conflicts"]) == int(counters[key]), row["case"]


def test_quoted_cases_from_the_prose() -> None:
    """Figures the text states in words, checked against the data files."""
    m = MEASURED
    assert m["double_pairs"]["wavefronts"] == 1
    assert m["float4_bcast"]["wavefronts"] == m["int4_bcast"]["wavefronts"] == 2
    assert m["p16_mixed"]["wavefronts"] == 4
    assert m["p16_vacuous"]["wavefronts"] == 2
    assert (m["v_a_00_int4"]["wavefronts"], m["v_a_03_int4"]["wavefronts"]) == (3, 2)
    assert TIMING["v_a_26_int4"] == (4.24, 1.0)
    assert m["pred_warp1_col"]["requests"] == 1
    assert m["a_f32_same"]["requests"] == 32 and m["a_u64_same"]["requests"] == 31
    assert m["x_double_st_pairs"]["wavefronts"] == 2 and m["p16_st_bcast"]["wavefronts"] == 4


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
def test_tables_are_current() -> None:
    """The generator reproduces the committed tables (shmem columns included)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "tools" / "hardware_tables.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
