"""The output formats of a check, one registry for every command whose report can fail one.

A *check report* is a :class:`~shmem_cli.checks.report.CheckReport`: files, the cases
checked in each (accesses) and the findings, each with a rule code and a severity.
``shmem lint`` makes one from its rules; ``shmem verify`` from its predicted-against-
measured outcomes (:mod:`shmem_cli.verify.checks`). Every format in :data:`FORMATS`
draws any check report, so each command that offers the registry (its ``--format``
choices are ``text``, ``json`` and these) gets every format: GitHub annotations,
SARIF and JUnit work for lint and verify alike. A new format is a renderer from a
check report to text and one entry here (CONTRIBUTING.md, "Adding an output format").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from ...plumbing.frozen import frozen

if TYPE_CHECKING:  # (commands read FORMATS at start-up: nothing heavy at run time)
    from ...checks.report import CheckReport, RuleInfo, Severity


@frozen
class CheckContext:
    """What a check format needs besides the report."""

    tool: str  # the command, as a title: "shmem lint", "shmem verify"
    rules: Sequence[RuleInfo]  # every rule the command can report
    fail_on: Severity  # findings at or above it fail the run


Renderer: TypeAlias = "Callable[[CheckReport, CheckContext], str]"


def _github(report: CheckReport, ctx: CheckContext) -> str:
    from .github import render_github

    return render_github(report, tool=ctx.tool)


def _sarif(report: CheckReport, ctx: CheckContext) -> str:
    from .sarif import render_sarif

    return render_sarif(report, rules=ctx.rules)


def _junit(report: CheckReport, ctx: CheckContext) -> str:
    from .junit import render_junit

    return render_junit(report, fail_on=ctx.fail_on, tool=ctx.tool)


#: format name -> renderer of a check report
FORMATS: dict[str, Renderer] = {
    "github": _github,
    "sarif": _sarif,
    "junit": _junit,
}


def register_format(name: str, renderer: Renderer) -> None:
    """Offer ``renderer`` as ``--format NAME`` in every command that can fail a check."""
    FORMATS[name] = renderer


def unregister_format(name: str) -> None:
    """Stop offering the format ``name`` (one added for a while, e.g. by a test)."""
    FORMATS.pop(name, None)


def render_check(report: CheckReport, fmt: str, ctx: CheckContext) -> str:
    """The check report in format ``fmt`` (a key of :data:`FORMATS`)."""
    return FORMATS[fmt](report, ctx)
