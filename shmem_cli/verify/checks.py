"""``shmem verify``'s outcomes as a check report, for the check formats (GitHub, SARIF, JUnit).

Each spec file is a file of the report, each access one case, and each access whose
prediction the GPU did not confirm a finding under one of :data:`CHECKS`: a mismatch
fails the run (an error, as ``shmem verify`` exits 1); an access that could not be
measured is a warning, an error with ``--strict`` (which makes verify fail on it too).
"""

from __future__ import annotations

from ..checks.report import AccessSummary, CheckedFile, CheckReport, Finding, Severity
from ..plumbing.frozen import frozen
from .compare import MATCH, MISMATCH, NOT_MEASURED, UNMEASURABLE, Outcome, VerifyReport


@frozen
class Check:
    """One way a verified access can fail, with the words a format shows for it."""

    code: str
    name: str
    severity: Severity
    summary: str
    details: str = ""


MISMATCHED = Check(
    "SV001",
    "prediction-mismatch",
    Severity.ERROR,
    "The GPU counted other requests or wavefronts than shmem predicted for the access.",
    "Nsight Compute's per-op counters of the access's kernel disagree with shmem's "
    "prediction (wavefronts are the raw counter, or the raw counter less the arbitration "
    "passes where that is what matches). The spec, the rule or the measurement is wrong.",
)
NOT_CHECKED = Check(
    "SV002",
    "not-measured",
    Severity.WARNING,
    "The access could not be measured: the compiler emitted other instructions, or the "
    "profile has no counters for its kernel.",
)
CHECKS = (MISMATCHED, NOT_CHECKED)


def _finding(o: Outcome, check: Check, severity: Severity, message: str) -> Finding:
    pos = o.target.access.pos
    return Finding(
        code=check.code,
        rule=check.name,
        severity=severity,
        path=o.target.spec.path,
        line=pos.line if pos else None,
        column=pos.column if pos else None,
        message=message,
        access=o.target.access.name,
        spec=o.target.spec.name,
    )


def outcome_finding(o: Outcome, *, strict: bool = False) -> Finding | None:
    """The finding of one outcome, None for a match."""
    if o.status == MATCH:
        return None
    p = o.target.predicted
    if o.status == MISMATCH and o.measured is not None:
        m = o.measured
        message = (
            f"{o.target.access.name!r} ({o.target.expected.label}): predicted {p.cost.requests} "
            f"requests and {p.cost.wavefronts} wavefronts, measured {m.requests} requests and "
            f"{m.wavefronts_raw} wavefronts (raw; arbitration {m.arbitration})"
        )
        return _finding(o, MISMATCHED, MISMATCHED.severity, message)
    assert o.status in (UNMEASURABLE, NOT_MEASURED)
    why = o.note or o.status
    message = f"{o.target.access.name!r} ({o.target.expected.label}) was not measured: {why}"
    return _finding(o, NOT_CHECKED, Severity.ERROR if strict else NOT_CHECKED.severity, message)


def check_report(report: VerifyReport, *, strict: bool = False) -> CheckReport:
    """The outcomes grouped by spec file, in order, with a finding for each one not matched."""
    files: dict[str, tuple[str, list[AccessSummary], list[Finding]]] = {}
    for o in report.outcomes:
        spec = o.target.spec
        _, cases, findings = files.setdefault(spec.path, (spec.name, [], []))
        cases.append(AccessSummary.of(o.target.predicted))
        found = outcome_finding(o, strict=strict)
        if found is not None:
            findings.append(found)
    return CheckReport(
        files=tuple(
            CheckedFile(path, name, tuple(cases), tuple(found))
            for path, (name, cases, found) in files.items()
        )
    )
