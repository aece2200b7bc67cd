"""``shmem lint`` as text: one ``file:line:col: severity: message [CODE name]`` line per finding.

The format editors and CI log matchers understand (the gcc style), then a
summary line.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from ...checks.report import CheckReport, Finding, RuleInfo, Severity
from ...plumbing.errors import one_line
from ..plain import visible

STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def location(f: Finding) -> str:
    where = visible(one_line(f.path))  # a file named with a terminal escape: shown, not sent
    if f.line is not None:
        where += f":{f.line}"
        if f.column is not None:
            where += f":{f.column}"
    return where


def count_words(report: CheckReport) -> str:
    """``2 errors, 1 warning`` (only the severities present)."""
    parts = []
    for sev in sorted(Severity, reverse=True):
        n = report.count(sev)
        if n:
            word = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "info"}[
                sev
            ]
            parts.append(f"{n} {word}" + ("s" if n != 1 and sev != Severity.INFO else ""))
    return ", ".join(parts)


def summary_line(report: CheckReport) -> str:
    """One sentence: how many findings of which severity, in how many files, and the baseline."""
    n_files, n_acc = len(report.files), report.accesses
    checked = (
        f"{n_files} file{'s' if n_files != 1 else ''}, {n_acc} access{'es' if n_acc != 1 else ''}"
    )
    findings = report.findings
    if findings:
        with_findings = sum(1 for f in report.files if f.findings)
        n = len(findings)
        text = (
            f"{n} finding{'s' if n != 1 else ''} ({count_words(report)}) in {with_findings} of "
            f"{checked}"
        )
    else:
        text = f"no findings in {checked}"
    if report.baselined:
        text += f"; {report.baselined} accepted by the baseline"
    if report.fixed:
        text += (
            f"; {report.fixed} baseline entr{'ies' if report.fixed != 1 else 'y'} no longer occur"
        )
    return text


def render_lint_text(report: CheckReport, *, color: bool = False) -> str:
    lines = []
    for f in report.findings:
        sev = f.severity.label
        if color:
            head = click.style(location(f) + ":", bold=True)
            sev = click.style(sev, fg=STYLE[f.severity], bold=True)
            tag = click.style(f"[{f.title}]", dim=True)
        else:
            head, tag = location(f) + ":", f"[{f.title}]"
        # one finding, one line; a name or key it quotes (an access's, a kernel argument's)
        # with a NUL or a terminal escape: shown as \x00, \x1b, never sent raw
        message = visible(" ".join(f.message.splitlines()))
        lines.append(f"{head} {sev}: {message} {tag}")
    if lines:
        lines.append("")
    lines.append(summary_line(report) + ".")
    return "\n".join(lines) + "\n"


# --- shmem rules --------------------------------------------------------------------------


def render_rules(rules: Sequence[RuleInfo], fmt: str = "text", *, full: bool = False) -> str:
    """The rules as a table (text), as records (json) or as a Markdown reference."""
    if fmt == "json":
        import json

        records = [
            {
                "code": r.code,
                "name": r.name,
                "severity": r.severity.label,
                "summary": r.summary,
                "description": r.details,
            }
            for r in rules
        ]
        return json.dumps(records, indent=2) + "\n"
    if fmt == "markdown":
        parts = []
        for r in rules:
            parts.append(
                f"### {r.code} {r.name}\n\nSeverity: **{r.severity.label}**. {r.summary}\n"
            )
            if r.details:
                parts.append(r.details + "\n")
        return "\n".join(parts)
    if not full:
        width = max(len(r.name) for r in rules)
        return "".join(
            f"{r.code}  {r.name:<{width}}  {r.severity.label:<7}  {r.summary}\n" for r in rules
        )
    blocks = []
    for r in rules:
        head = f"{r.code} {r.name} ({r.severity.label})\n{r.summary}\n"
        blocks.append(head + (f"\n{r.details}\n" if r.details else ""))
    return "\n".join(blocks)
