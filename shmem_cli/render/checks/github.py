"""``shmem lint --format github``: GitHub Actions workflow commands.

Each finding becomes ``::error file=F,line=L,col=C,title=T::message`` (``warning``
and ``notice`` for the lower severities), which GitHub shows as an annotation
on the line; findings are grouped per file in the log. Values are escaped as
the runner requires: in the message ``%``, CR and LF; in properties also ``:``
and ``,``. :func:`render_step_summary` builds the Markdown table appended to
``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

from itertools import groupby

from ...checks.report import CheckReport, Finding, Severity
from ..plain import visible
from .lint_text import location, summary_line

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message (other control characters, a file name's terminal
    escape, shown as ``\\x1b``: the log is read on terminals too)."""
    return visible(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (``file=``, ``title=``, ...)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    props = [f"file={escape_property(f.path)}"]
    if f.line is not None:
        props.append(f"line={f.line}")
        if f.column is not None:
            props.append(f"col={f.column}")
    props.append(f"title={escape_property(f.title)}")
    return f"::{COMMAND[f.severity]} {','.join(props)}::{escape_data(f.message)}"


def render_github(report: CheckReport, *, tool: str = "shmem lint") -> str:
    lines: list[str] = []
    for path, group in groupby(report.findings, key=lambda f: f.path):
        found = list(group)
        n = len(found)
        lines.append(f"::group::{escape_data(path)} ({n} finding{'s' if n != 1 else ''})")
        lines.extend(annotation(f) for f in found)
        lines.append("::endgroup::")
    lines.append(f"{tool}: " + summary_line(report))
    return "\n".join(lines) + "\n"


def markdown_cell(text: str) -> str:
    """Text safe inside a Markdown table cell: no pipes, no line breaks, no raw HTML."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        .replace("\r", " ")
        .replace("\n", " ")
    )


def render_step_summary(report: CheckReport, *, fail_on: Severity = Severity.ERROR) -> str:
    """A Markdown section for the job summary page: a headline and a table of findings."""
    failed = bool(report.failing(fail_on))
    verdict = "failed" if failed else "passed"
    out = [f"### shmem lint {verdict}", "", summary_line(report) + ".", ""]
    if report.findings:
        out += [
            "| Severity | Rule | Location | Access | Message |",
            "| --- | --- | --- | --- | --- |",
        ]
        for f in report.findings:
            cells = (
                f.severity.label,
                f"{f.code} {f.rule}",
                location(f),
                f.access or "",
                f.message,
            )
            out.append("| " + " | ".join(markdown_cell(c) for c in cells) + " |")
        out.append("")
    return "\n".join(out) + "\n"
