"""Text rendering of a verify report (strings only, no I/O); JSON: report_formats.render_json."""

from __future__ import annotations

from .compare import MATCH, MISMATCH, NOT_MEASURED, STATUSES, UNMEASURABLE, Outcome, VerifyReport
from .ncu import LESS_ARBITRATION

_MARK = {
    MATCH: "ok",
    MISMATCH: "MISMATCH",
    UNMEASURABLE: "unmeasurable",
    NOT_MEASURED: "not measured",
}
NAME_WIDTH = 52


def _pair(predicted: int, measured: int | None) -> str:
    if measured is None:
        return f"{predicted} / -"
    sign = "=" if predicted == measured else "!="
    return f"{predicted} {sign} {measured}"


def _line(o: Outcome) -> str:
    name = o.target.access.name
    if len(name) > NAME_WIDTH:
        name = name[: NAME_WIDTH - 3] + "..."
    m = o.measured
    req = _pair(o.predicted_requests, m.requests if m else None)
    wf = _pair(o.predicted_wavefronts, m.wavefronts_raw if m else None)
    if m is not None and o.basis == LESS_ARBITRATION:
        wf = f"{o.predicted_wavefronts} = raw {m.wavefronts_raw} - arbitration {m.arbitration}"
    elif m is not None and m.arbitration and not o.basis:
        sign = "=" if o.predicted_wavefronts == m.wavefronts_raw else "!="
        wf = f"{o.predicted_wavefronts} {sign} raw {m.wavefronts_raw}"
    label = o.target.expected.label
    text = f"  {_MARK[o.status]:<13}{name:<{NAME_WIDTH}}  {label:<15} requests {req:<13} "
    text += f"wavefronts {wf}"
    extra = []
    if m is not None and m.arbitration:
        extra.append(f"arbitration {m.arbitration}")
        if o.basis:
            extra.append(f"matched: {o.basis}")
    if m is not None and m.bank_conflicts:
        extra.append(f"bank conflicts {m.bank_conflicts}")
    if (
        m is not None
        and m.requests_with_predicated_off is not None
        and m.requests_with_predicated_off != m.requests
    ):
        off = m.requests_with_predicated_off - m.requests
        extra.append(f"+{off} warp instructions with every lane predicated off, not requests")
    if o.note:
        extra.append(o.note)
    if extra:
        text += "  (" + "; ".join(extra) + ")"
    return text.rstrip()


def render_text(report: VerifyReport) -> str:
    """Predicted vs measured per access (requests, then wavefronts), grouped by spec file."""
    out = []
    where = report.device or "recorded counters"
    if report.arch:
        where += f"; built for {report.arch}"
    out.append(f"shmem verify: {where}")
    out.append(
        "  columns: predicted = or != measured; wavefronts are the raw per-op counter "
        "(a match may take the arbitration off, and says so)"
    )
    current = None
    for o in report.outcomes:
        if o.target.spec.path != current:
            current = o.target.spec.path
            out.append("")
            out.append(current)
        out.append(_line(o))
    total = len(report.outcomes)
    counts = ", ".join(
        f"{report.count(s)} {s}" for s in STATUSES if report.count(s) or s in (MATCH, MISMATCH)
    )
    out.append("")
    out.append(f"{total} access{'es' if total != 1 else ''}: {counts}")
    return "\n".join(out) + "\n"
