"""A check report: what every command that can fail a check reports, and every check
format (text, JSON, GitHub, SARIF, JUnit) draws.

A :class:`Finding` is one problem at one place: which rule, how bad, the file, line
and column, and a message that carries the numbers. A :class:`CheckReport` holds the
files checked, the cases (accesses) checked in each and their findings; ``shmem lint``
builds one from its rules, ``shmem verify`` from its outcomes, and lint's baseline
from the same findings.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import field
from typing import Protocol

from ..model import AccessResult, Totals
from ..plumbing.frozen import frozen

Fact = tuple[str, int | str]


class Severity(enum.IntEnum):
    """How bad a finding is; ``--fail-on`` picks the lowest one that fails the run."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        """``"error"`` -> ``Severity.ERROR``; raises ``ValueError`` for other words."""
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}; use one of {', '.join(LABELS)}") from None


LABELS = tuple(s.label for s in sorted(Severity, reverse=True))


class RuleInfo(Protocol):
    """What an output format may say about a rule (a lint rule, or a check of verify)."""

    @property
    def code(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def severity(self) -> Severity: ...
    @property
    def summary(self) -> str: ...
    @property
    def details(self) -> str: ...


@frozen
class Finding:
    """One rule violation at one place in one spec file."""

    code: str  # stable rule code, e.g. "SH001"
    rule: str  # stable rule name, e.g. "bank-conflict"
    severity: Severity
    path: str  # as shown to the user: repository-relative with '/' where possible
    line: int | None
    column: int | None
    message: str
    access: str | None = None  # the access's name; None for file-level findings
    spec: str | None = None  # the spec's name
    facts: tuple[Fact, ...] = field(default=())

    @property
    def title(self) -> str:
        return f"{self.code} {self.rule}"

    @property
    def fingerprint(self) -> str:
        """Stable identity across runs: rule, file and access (or message), not the line.

        Moving an access within its file keeps the fingerprint; renaming it, or
        moving the file, makes it a new finding.
        """
        subject = self.access if self.access is not None else self.message
        raw = "\x00".join((self.code, self.path, subject))
        return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:32]

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line or 0, self.column or 0, self.code)


@frozen
class AccessSummary:
    """One checked access: where it is and its totals (for formats that list passing
    accesses too)."""

    name: str
    line: int | None
    column: int | None
    totals: Totals

    @classmethod
    def of(cls, result: AccessResult) -> AccessSummary:
        site = result.site
        return cls(site.name, site.line, site.column, result.cost.totals)


@frozen
class CheckedFile:
    """One checked spec file: its accesses (empty if it did not load) and its findings."""

    path: str
    name: str
    accesses: tuple[AccessSummary, ...]
    findings: tuple[Finding, ...]


@frozen
class CheckReport:
    """A whole run: the files in path order, and what the baseline accepted."""

    files: tuple[CheckedFile, ...]
    baselined: int = 0  # findings accepted by the baseline (not in ``files``)
    fixed: int = 0  # baseline entries that no longer occur

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for file in self.files for f in file.findings)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def failing(self, fail_on: Severity) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity >= fail_on)

    @property
    def accesses(self) -> int:
        return sum(len(f.accesses) for f in self.files)
