"""docs/hardware-model.md quotes the measurements faithfully and is up to date."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter

import pytest

from .conftest import ROOT
from .hwtruth import DATA, PROBE_SETS, is_cas_loop, loop_invariant, probe_cases, public_cases

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
    for stem in PROBE_SETS
    for r in json.loads((DATA / f"{stem}_results.json").read_text())
}


def case_rows() -> list[dict[str, str]]:
    return [row for t in DOC_TABLES for row in t if "case" in row]


def test_the_doc_has_its_tables() -> None:
    names = {row["case"] for row in case_rows()}
    # a few cases each section leans on
    for name in (
        "f32_offset_col",
        "int4_div4",
        "p16_mixed",
        "ldsm_x4_same_all",
        "a_exch_same",
        "pred_warp1_col",
        "v_a_26_int4",
        "a_add_col",
    ):
        assert name in names, name
    assert len(case_rows()) > 150


def test_measured_wavefronts_match_the_data() -> None:
    checked = 0
    for row in case_rows():
        for column in ("measured", "measured wavefronts", "wavefronts"):
            if column in row:
                assert int(row[column]) == MEASURED[row["case"]]["wavefronts"], (
                    row["case"],
                    column,
                )
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


@pytest.mark.slow  # 4-13 s: regenerates every table; the doc's other checks stay fast
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


PROBE3 = {c["name"] for c in json.loads((DATA / "h200_probe3_cases.json").read_text())}
CASES = {c["name"]: c for c in public_cases() + probe_cases()}
INVARIANT = {name for name, c in CASES.items() if loop_invariant(c)}


def table_with(column: str) -> Table:
    (found,) = [t for t in DOC_TABLES if t and column in t[0]]
    return found


def test_the_evidence_table_counts_the_data_files() -> None:
    rows = {row["set"]: row for row in table_with("files")}
    stems = {
        "rule probes": "h200_probe",
        "random probes": "h200_probe2",
        "probe3 cases": "h200_probe3",
    }
    assert int(rows["public corpus"]["cases"]) == len(public_cases()) == 167
    for label, stem in stems.items():
        assert int(rows[label]["cases"]) == len(
            json.loads((DATA / f"{stem}_cases.json").read_text())
        )
    assert int(rows["probe3 cases"]["cases"]) == len(PROBE3) == 200
    assert (
        int(rows["probe3 cases"]["with a loop"]) == sum(1 for n in PROBE3 if CASES[n]["loop"]) == 81
    )
    assert int(rows["probe3 cases"]["loop-invariant (section 9)"]) == len(INVARIANT) == 29
    everything = rows["all"]
    assert int(everything["cases"]) == len(CASES) == 552
    cas = sum(1 for c in CASES.values() if is_cas_loop(c))
    assert int(everything["compare-and-swap atomics (section 5)"]) == cas == 5
    # everything is reproduced but the refused atomics and the 25 hoisted cases
    assert int(everything["shmem = measured requests and wavefronts"]) == 552 - 5 - 25
    assert "runs every one of the 552 cases" in DOC.read_text()


def test_loop_invariant_table() -> None:
    rows = table_with("hoisted")
    assert {row["case"] for row in rows} == INVARIANT
    assert INVARIANT <= PROBE3
    for row in rows:
        case = CASES[row["case"]]
        _var, lo, hi = case["loop"]
        n = int(row["iterations"])
        assert n == hi - lo, row["case"]
        every = (int(row["shmem requests"]), int(row["shmem wavefronts"]))
        once = (int(row["one iteration: requests"]), int(row["one iteration: wavefronts"]))
        got = (int(row["measured requests"]), int(row["measured wavefronts"]))
        assert got == (case["measured"]["requests"], case["measured"]["wavefronts"]), row["case"]
        # an invariant loop repeats one iteration's requests exactly
        assert every == (n * once[0], n * once[1]), row["case"]
        verdict = row["hoisted"]
        if verdict == "yes":
            assert got == once != every, row["case"]
        elif verdict == "no":
            assert got == every != once, row["case"]
        else:
            assert verdict == "cannot tell (no lane active)" and got == once == every == (0, 0)
    verdicts = Counter(row["hoisted"] for row in rows)
    assert verdicts["yes"] == 25
    assert {row["case"] for row in rows if row["hoisted"] == "no"} == {
        "r3_079_int4_ld",
        "r3_107_int_st",
        "r3_165_float_st",
    }
    assert {row["case"] for row in rows if row["hoisted"].startswith("cannot")} == {
        "r3_102_int_atom"
    }


def test_loop_invariant_rows_worked_by_hand() -> None:
    rows = {row["case"]: row for row in table_with("hoisted")}
    columns = (
        "iterations",
        "shmem requests",
        "shmem wavefronts",
        "one iteration: requests",
        "one iteration: wavefronts",
        "measured requests",
        "measured wavefronts",
        "hoisted",
    )
    # float4 a[32][40], 16 threads: lanes 0-7 read a[0][0], lanes 8-15 a[0][1]; pairs at
    # distance 1 merge into half-warp phases, the first holds 8 words in 8 banks: one
    # wavefront per iteration, five iterations, executed once
    assert [rows["r3_181_float4_ld"][k] for k in columns] == [
        "5",
        "5",
        "5",
        "1",
        "1",
        "1",
        "1",
        "yes",
    ]
    # float a[32][33], 32 threads (4x2x4), tx < 2 keeps 16 lanes, storing to a[0][lane/4]:
    # 8 words in 8 banks, one wavefront per iteration; both iterations executed
    assert [rows["r3_165_float_st"][k] for k in columns] == [
        "2",
        "2",
        "2",
        "1",
        "1",
        "2",
        "2",
        "no",
    ]


def test_model_errors_count_probe3_without_the_loop_invariant_cases() -> None:
    (errors,) = [
        t for t in DOC_TABLES if t and "model" in t[0] and any("probe3" in k for k in t[0])
    ]
    (row,) = [r for r in errors if r["model"] == "shmem"]
    (column,) = [k for k in row if "probe3" in k]
    atomics = {n for n in PROBE3 if CASES[n]["op"] == "atomic"}
    counted = PROBE3 - INVARIANT - atomics
    assert len(counted) == 170
    assert column == f"wrong of {len(counted)} probe3 cases (no atomics, no loop-invariant case)"
    assert row[column] == "0"


def test_ideal_summary_covers_probe3() -> None:
    rows = {row["set"]: row for row in table_with("with arbitration")}
    row = rows["probe3 cases, loop-invariant ones left out"]
    assert int(row["cases (no CAS loop)"]) == len(PROBE3 - INVARIANT) == 171
    arbitrated = {
        n
        for n in PROBE3 - INVARIANT
        if PROBE_COUNTERS[n].get("l1tex__data_bank_conflicts_type_arbitration.sum", 0)
    }
    assert arbitrated == {"r3_014_float4_ld", "r3_022_float4_ld"}
    assert int(row["with arbitration"]) == 2
    # Nsight's conflict counter leaves the phases with active lanes on every case; shmem's
    # ideal is below that where a partly active 8- or 16-byte request's lanes would pack
    # into fewer wavefronts (hardware-model section 8)
    for r in rows.values():
        assert (
            r["wavefronts - bank_conflicts = phases with active lanes"] == r["cases (no CAS loop)"]
        )
    assert int(row["= shmem ideal"]) < int(row["cases (no CAS loop)"])
    assert (
        rows["random probes"]["with arbitration"] == rows["rule probes"]["with arbitration"] == "0"
    )


def test_sections_are_numbered_and_section_9_is_about_hoisting() -> None:
    headings = re.findall(r"^## (\d+)\. (.*)$", DOC.read_text(), re.M)
    assert [int(n) for n, _ in headings] == list(range(1, len(headings) + 1))
    assert dict(headings)["9"] == "Loop-invariant accesses and the compiler"
