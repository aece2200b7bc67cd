"""The lint output formats: GitHub workflow commands, SARIF 2.1.0, JUnit XML, JSON and text.

The renderers are tested on hand-made findings (so every expected string here
is written out, not produced by shmem), and once end to end through the CLI.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.checks.report import AccessSummary, CheckedFile, CheckReport, Finding, Severity
from shmem_cli.cli import main
from shmem_cli.lint.rules import RULES
from shmem_cli.model import Totals
from shmem_cli.render.checks.github import (
    escape_data,
    escape_property,
    markdown_cell,
    render_github,
    render_step_summary,
)
from shmem_cli.render.checks.junit import render_junit
from shmem_cli.render.checks.lint_json import render_lint_json
from shmem_cli.render.checks.lint_text import render_lint_text
from shmem_cli.render.checks.sarif import render_sarif


def acc(name: str, line: int) -> AccessSummary:
    return AccessSummary(
        name, line, 5, Totals(requests=1, wavefronts=1, ideal_wavefronts=1, max_ways=1)
    )


CONFLICT = Finding(
    code="SH001",
    rule="bank-conflict",
    severity=Severity.ERROR,
    path="specs/a b.yaml",
    line=9,
    column=5,
    message="2-way bank conflict in 'x, y: z'",
    access="x, y: z",
    spec="A",
    facts=(("max_ways", 2), ("worst_lanes", "0,16")),
)
STALE = Finding(
    code="SH003",
    rule="stale-expectation",
    severity=Severity.WARNING,
    path="specs/a b.yaml",
    line=14,
    column=13,
    message="100% clean\nsecond line\r",
    access="ok",
    spec="A",
)
NOTE = Finding(
    code="SH004",
    rule="loose-expectation",
    severity=Severity.INFO,
    path="specs/c.yaml",
    line=3,
    column=13,
    message="max_ways 8 could be 2",
    access="loose",
    spec="C",
)
BROKEN = Finding(
    code="SH100",
    rule="invalid-spec",
    severity=Severity.ERROR,
    path="specs/z.yaml",
    line=None,
    column=None,
    message="empty spec file",
)
REPORT = CheckReport(
    files=(
        CheckedFile("specs/a b.yaml", "A", (acc("x, y: z", 9), acc("ok", 12)), (CONFLICT, STALE)),
        CheckedFile("specs/c.yaml", "C", (acc("loose", 2),), (NOTE,)),
        CheckedFile("specs/clean.yaml", "D", (acc("fine", 6),), ()),
        CheckedFile("specs/z.yaml", "z", (), (BROKEN,)),
    ),
)


# --- GitHub ---------------------------------------------------------------------------------------


def test_github_escaping() -> None:
    assert escape_data("50% a:b,c\r\nd") == "50%25 a:b,c%0D%0Ad"
    assert escape_property("50% a:b,c\r\nd") == "50%25 a%3Ab%2Cc%0D%0Ad"
    assert escape_data("%0A") == "%250A"  # an already-escaped-looking text stays literal


def test_github_annotations_grouped_per_file() -> None:
    assert render_github(REPORT).splitlines() == [
        "::group::specs/a b.yaml (2 findings)",
        "::error file=specs/a b.yaml,line=9,col=5,title=SH001 bank-conflict::"
        "2-way bank conflict in 'x, y: z'",
        "::warning file=specs/a b.yaml,line=14,col=13,title=SH003 stale-expectation::"
        "100%25 clean%0Asecond line%0D",
        "::endgroup::",
        "::group::specs/c.yaml (1 finding)",
        "::notice file=specs/c.yaml,line=3,col=13,title=SH004 loose-expectation::"
        "max_ways 8 could be 2",
        "::endgroup::",
        "::group::specs/z.yaml (1 finding)",
        "::error file=specs/z.yaml,title=SH100 invalid-spec::empty spec file",
        "::endgroup::",
        "shmem lint: 4 findings (2 errors, 1 warning, 1 info) in 3 of 4 files, 4 accesses",
    ]


def test_github_property_with_comma_and_colon() -> None:
    odd = Finding("SH001", "bank-conflict", Severity.ERROR, "d:1,2/x.yaml", 1, 1, "m")
    line = render_github(CheckReport((CheckedFile(odd.path, "x", (), (odd,)),))).splitlines()[1]
    assert line == "::error file=d%3A1%2C2/x.yaml,line=1,col=1,title=SH001 bank-conflict::m"


def test_step_summary_markdown_table() -> None:
    text = render_step_summary(REPORT)
    lines = text.splitlines()
    assert lines[0] == "### shmem lint failed"
    assert "| Severity | Rule | Location | Access | Message |" in lines
    row = next(ln for ln in lines if "SH003" in ln)
    assert row == (
        "| warning | SH003 stale-expectation | specs/a b.yaml:14:13 | ok "
        "| 100% clean second line  |"
    )
    assert markdown_cell("a|b<c>&\nd") == "a\\|b&lt;c&gt;&amp; d"
    clean = CheckReport((CheckedFile("s.yaml", "s", (acc("a", 1),), ()),))
    assert render_step_summary(clean).splitlines()[0] == "### shmem lint passed"
    assert "|" not in render_step_summary(clean)


def test_github_step_summary_is_appended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "block: [32]\narrays:\n  a: {dtype: float, shape: [64]}\naccesses:\n"
        "  - name: even\n    array: a\n    index: [2 * tid]\n"
    )
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = CliRunner().invoke(main, ["lint", "s.yaml", "--format", "github"])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1].startswith(
        "::error file=s.yaml,line=5,col=5,title=SH001 bank-conflict::"
    )
    text = summary.read_text()
    assert text.startswith("earlier step\n### shmem lint failed\n")
    assert "| error | SH001 bank-conflict | s.yaml:5:5 | even |" in text


# --- SARIF ----------------------------------------------------------------------------------------


def test_sarif_log_structure() -> None:
    log = json.loads(render_sarif(REPORT, rules=RULES.rules))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "shmem" and driver["version"]
    ids = [r["id"] for r in driver["rules"]]
    assert ids == [r.code for r in RULES]
    for rule, desc in zip(RULES, driver["rules"], strict=True):
        assert desc["name"] == rule.name
        assert desc["shortDescription"]["text"] == rule.summary
        assert desc["fullDescription"]["text"].startswith(rule.summary)
        assert rule.details in desc["fullDescription"]["text"]
        assert desc["help"]["text"] and desc["help"]["markdown"]
        assert (
            desc["defaultConfiguration"]["level"]
            == {"error": "error", "warning": "warning", "info": "note"}[rule.severity.label]
        )
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["SH001", "SH003", "SH004", "SH100"]
    for res in results:
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["message"]["text"]
        (loc,) = res["locations"]
        art = loc["physicalLocation"]["artifactLocation"]
        assert art["uriBaseId"] == "%SRCROOT%" and not art["uri"].startswith("/")
        assert "\\" not in art["uri"]
        assert loc["physicalLocation"]["region"]["startLine"] >= 1
        assert len(res["partialFingerprints"]["shmemFinding/v1"]) == 32
    first = results[0]
    assert first["level"] == "error"
    assert first["message"]["text"] == "2-way bank conflict in 'x, y: z'"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "specs/a%20b.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 9, "startColumn": 5},
    }
    assert first["properties"]["max_ways"] == 2 and first["properties"]["access"] == "x, y: z"
    assert [r["level"] for r in results] == ["error", "warning", "note", "error"]
    # a fault without a known place is put at the top of its file
    assert results[3]["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}


def test_sarif_fingerprints_are_stable_and_distinct() -> None:
    a = json.loads(render_sarif(REPORT, rules=RULES.rules))["runs"][0]["results"]
    b = json.loads(render_sarif(REPORT, rules=RULES.rules))["runs"][0]["results"]
    assert a == b
    prints = [r["partialFingerprints"]["shmemFinding/v1"] for r in a]
    assert len(set(prints)) == len(prints)


def test_sarif_absolute_path_is_a_file_uri() -> None:
    far = Finding(
        "SH001", "bank-conflict", Severity.ERROR, "/elsewhere/k.yaml", 2, 3, "m", access="a"
    )
    log = json.loads(
        render_sarif(CheckReport((CheckedFile(far.path, "k", (), (far,)),)), rules=RULES.rules)
    )
    art = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert art == {"uri": "file:///elsewhere/k.yaml"}


def test_sarif_end_to_end_uses_repo_relative_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "kernels" / "specs").mkdir(parents=True)
    (tmp_path / "kernels" / "specs" / "s.yaml").write_text(
        "block: [32]\narrays:\n  a: {dtype: float, shape: [64]}\naccesses:\n"
        "  - name: even\n    array: a\n    index: [2 * tid]\n"
    )
    monkeypatch.chdir(tmp_path / "kernels")  # run from a subdirectory of the repository
    result = CliRunner().invoke(main, ["lint", "specs", "--format", "sarif"])
    assert result.exit_code == 1
    (res,) = json.loads(result.stdout)["runs"][0]["results"]
    assert (
        res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "kernels/specs/s.yaml"
    )
    assert res["locations"][0]["physicalLocation"]["region"] == {"startLine": 5, "startColumn": 5}


# --- JUnit ----------------------------------------------------------------------------------------


def test_junit_suites_cases_and_failures() -> None:
    root = ET.fromstring(render_junit(REPORT))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "2", "0")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [
        "specs/a b.yaml",
        "specs/c.yaml",
        "specs/clean.yaml",
        "specs/z.yaml",
    ]
    a = suites[0]
    assert (a.get("tests"), a.get("failures")) == ("2", "1")
    cases = a.findall("testcase")
    assert [c.get("name") for c in cases] == ["x, y: z", "ok"]
    (failure,) = cases[0].findall("failure")
    assert failure.get("type") == "SH001"
    assert failure.get("message") == "SH001 bank-conflict: 2-way bank conflict in 'x, y: z'"
    assert failure.text is not None and failure.text.startswith("specs/a b.yaml:9:5: error:")
    # a warning below --fail-on is not a failure, but it is shown
    assert cases[1].findall("failure") == []
    out = cases[1].find("system-out")
    assert out is not None and out.text is not None and "SH003" in out.text
    assert suites[2].find("testcase/failure") is None
    broken = suites[3].findall("testcase")
    assert [c.get("name") for c in broken] == ["spec"]
    assert broken[0].find("failure") is not None


def test_junit_fail_on_warning_turns_warnings_into_failures() -> None:
    root = ET.fromstring(render_junit(REPORT, fail_on=Severity.WARNING))
    assert root.get("failures") == "3"


def test_junit_strips_characters_xml_cannot_hold() -> None:
    odd = Finding("SH100", "invalid-spec", Severity.ERROR, "x.yaml", 1, 1, "bad \x00 byte \x1b[0m")
    root = ET.fromstring(render_junit(CheckReport((CheckedFile("x.yaml", "x", (), (odd,)),))))
    failure = root.find("testsuite/testcase/failure")
    assert (
        failure is not None
        and failure.get("message") == "SH100 invalid-spec: bad \ufffd byte \ufffd[0m"
    )


# --- JSON and text --------------------------------------------------------------------------------


def test_json_records() -> None:
    doc = json.loads(render_lint_json(REPORT))
    assert doc["schema_version"] == 1
    assert doc["tool"]["name"] == "shmem"
    assert doc["failed"] is True and doc["fail_on"] == "error"
    assert doc["summary"] == {
        "files": 4,
        "accesses": 4,
        "findings": 4,
        "error": 2,
        "warning": 1,
        "info": 1,
        "baselined": 0,
        "baseline_fixed": 0,
    }
    first = doc["findings"][0]
    assert first == {
        "code": "SH001",
        "rule": "bank-conflict",
        "severity": "error",
        "path": "specs/a b.yaml",
        "line": 9,
        "column": 5,
        "access": "x, y: z",
        "spec": "A",
        "message": "2-way bank conflict in 'x, y: z'",
        "fingerprint": CONFLICT.fingerprint,
        "facts": {"max_ways": 2, "worst_lanes": "0,16"},
    }
    assert doc["findings"][3]["line"] is None


def test_text_lines() -> None:
    lines = render_lint_text(REPORT).splitlines()
    assert (
        lines[0]
        == "specs/a b.yaml:9:5: error: 2-way bank conflict in 'x, y: z' [SH001 bank-conflict]"
    )
    assert (
        lines[1]
        == "specs/a b.yaml:14:13: warning: 100% clean second line [SH003 stale-expectation]"
    )
    assert lines[3] == "specs/z.yaml: error: empty spec file [SH100 invalid-spec]"
    assert lines[-1] == "4 findings (2 errors, 1 warning, 1 info) in 3 of 4 files, 4 accesses."


def test_text_color_only_on_request() -> None:
    assert "\x1b[" not in render_lint_text(REPORT)
    assert "\x1b[" in render_lint_text(REPORT, color=True)
