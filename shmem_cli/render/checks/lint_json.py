"""``shmem lint --format json``: the findings as records, with ``schema_version``.

Shape (version 1)::

    {"schema_version": 1, "tool": {"name": "shmem", "version": "..."},
     "fail_on": "error", "failed": true,
     "summary": {"files": 18, "accesses": 62, "findings": 3, "error": 3, "warning": 0,
                 "info": 0, "baselined": 0, "baseline_fixed": 0},
     "files": [{"path": "...", "name": "...", "accesses": 4, "findings": 1}, ...],
     "findings": [{"code": "SH001", "rule": "bank-conflict", "severity": "error",
                   "path": "...", "line": 22, "column": 5, "access": "...", "spec": "...",
                   "message": "...", "fingerprint": "...", "facts": {"max_ways": 32, ...}}]}
"""

from __future__ import annotations

from typing import Any

from ... import __version__
from ...checks.report import CheckReport, Finding, Severity
from ...plumbing import json_text

SCHEMA_VERSION = 1


def finding_record(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "rule": f.rule,
        "severity": f.severity.label,
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "access": f.access,
        "spec": f.spec,
        "message": f.message,
        "fingerprint": f.fingerprint,
        "facts": dict(f.facts),
    }


def render_lint_json(report: CheckReport, *, fail_on: Severity = Severity.ERROR) -> str:
    summary: dict[str, int] = {
        "files": len(report.files),
        "accesses": report.accesses,
        "findings": len(report.findings),
    }
    for sev in sorted(Severity, reverse=True):
        summary[sev.label] = report.count(sev)
    summary["baselined"] = report.baselined
    summary["baseline_fixed"] = report.fixed
    doc = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "shmem", "version": __version__},
        "fail_on": fail_on.label,
        "failed": bool(report.failing(fail_on)),
        "summary": summary,
        "files": [
            {
                "path": f.path,
                "name": f.name,
                "accesses": len(f.accesses),
                "findings": len(f.findings),
            }
            for f in report.files
        ],
        "findings": [finding_record(f) for f in report.findings],
    }
    return json_text.dumps(doc, ensure_ascii=False) + "\n"
