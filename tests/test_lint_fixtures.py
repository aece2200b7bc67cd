"""Every lint rule against its fixture file: tests/lint_fixtures/<CODE>.yaml (sqlfluff style).

One test runs every case of every file; a rule without a fixture file fails
``test_every_rule_has_a_fixture``. The file format is in tests/lint_fixtures/README.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from shmem_cli.lint.core import LintOptions, Target, lint_file
from shmem_cli.lint.rules import RULES

from .conftest import ROOT, TRACE_DATA

FIXTURES = ROOT / "tests" / "lint_fixtures"
FILES = sorted(FIXTURES.glob("SH*.yaml"))


def cases() -> list[Any]:
    out = []
    for path in FILES:
        doc = yaml.safe_load(path.read_text())
        assert doc["rule"] == path.stem, path
        for case in doc["cases"]:
            out.append(pytest.param(doc["rule"], case, id=f"{path.stem}: {case['name']}"))
    return out


def test_every_rule_has_a_fixture() -> None:
    assert [p.stem for p in FILES] == sorted(r.code for r in RULES)


@pytest.mark.parametrize(("code", "case"), cases())
def test_rule_fixture(tmp_path: Path, code: str, case: dict[str, Any]) -> None:
    spec = tmp_path / "spec.yaml"
    # {TRACE_DATA}: tests/data/trace, for specs that name one of its kernels (kernel.source)
    spec.write_text(case["spec"].replace("{TRACE_DATA}", str(TRACE_DATA)))
    # this rule, and invalid-spec, so that a fixture spec with a typo cannot pass silently
    options = LintOptions(rules=frozenset({code, "SH100"}))
    found = lint_file(Target(str(spec), "spec.yaml"), options).findings
    expected = case["findings"]
    assert [f.code for f in found] == [code] * len(expected), [f.message for f in found]
    for finding, want in zip(found, expected, strict=True):
        if "line" in want:
            assert (finding.line, finding.column) == (want["line"], want["column"])
        for phrase in want["message"]:
            assert phrase in finding.message, finding.message
