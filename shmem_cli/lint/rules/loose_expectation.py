"""An access's own bound is looser than what the access needs.

The access states `max_ways: N` or `max_wavefronts_per_request: N` and
conflicts, but less than N allows: the bound would let the access get worse
without a finding. Tighten it to the measured value given in the message.

Informational only (fails a run only with `--fail-on info`). A conflict-free
access with a conflict-accepting expectation is reported by SH003 instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...checks.report import Severity
from ._base import AccessCheck, Hit, access_facts

CODE = "SH004"
NAME = "loose-expectation"
SEVERITY = Severity.INFO
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    own, r = item.own, item.result
    if own is None or r.cost.requests == 0 or r.cost.conflict_free:
        return
    loose: list[str] = []
    if own.max_ways is not None and r.cost.max_ways < own.max_ways:
        loose.append(f"max_ways {own.max_ways} could be {r.cost.max_ways}")
    worst = r.cost.max_wavefronts_per_request
    if own.max_wavefronts_per_request is not None and worst < own.max_wavefronts_per_request:
        loose.append(
            f"max_wavefronts_per_request {own.max_wavefronts_per_request} could be {worst}"
        )
    if not loose:
        return
    pos = own.pos
    yield Hit(
        f"{r.site.name!r} has a loose expectation: " + "; ".join(loose),
        access_facts(r),
        line=pos.line if pos else None,
        column=pos.column if pos else None,
    )
