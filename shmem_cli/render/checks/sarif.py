"""``shmem lint --format sarif``: SARIF 2.1.0 for GitHub code scanning and other viewers.

One run, tool ``shmem`` with every registered rule (id, name, short and full
description, help in text and Markdown, default level); one result per finding
with ``ruleId``/``ruleIndex``, ``level``, ``message.text``, a physical location
(repository-relative URI against ``%SRCROOT%``, region with start line and
column) and a ``partialFingerprints`` entry that stays the same when the access
moves within its file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from ... import __version__
from ...checks.report import CheckReport, Finding, RuleInfo, Severity
from ...plumbing import json_text

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "shmemFinding/v1"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def artifact_location(path: str) -> dict[str, str]:
    """A relative path becomes a URI against ``%SRCROOT%``; an absolute one a file: URI."""
    p = PurePosixPath(path)
    if p.is_absolute():
        return {"uri": "file://" + quote(str(p), errors="surrogateescape")}
    return {"uri": quote(str(p), errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}


def rule_descriptor(rule: RuleInfo) -> dict[str, Any]:
    details = rule.details
    full = rule.summary + ("\n\n" + details if details else "")
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": {"text": full, "markdown": f"**{rule.code} {rule.name}**: {full}"},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {
            "tags": ["shared-memory", "bank-conflicts", "performance"],
            "precision": "very-high",
        },
    }


def result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    region: dict[str, int] = {"startLine": f.line or 1}
    if f.line is not None and f.column is not None:
        region["startColumn"] = f.column
    properties: dict[str, Any] = {"rule": f.rule, "severity": f.severity.label}
    if f.access is not None:
        properties["access"] = f.access
    if f.spec is not None:
        properties["spec"] = f.spec
    properties.update(dict(f.facts))
    return {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVEL[f.severity],
        "message": {"text": f.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact_location(f.path),
                    "region": region,
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
        "properties": properties,
    }


def render_sarif(report: CheckReport, *, rules: Sequence[RuleInfo]) -> str:
    """The findings as one SARIF run; ``rules`` are every rule the tool can report."""
    index = {rule.code: i for i, rule in enumerate(rules)}
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "shmem",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [rule_descriptor(r) for r in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "invocations": [{"executionSuccessful": True}],
                "results": [result(f, index) for f in report.findings],
            }
        ],
    }
    return json_text.dumps(doc, ensure_ascii=False) + "\n"
