"""An access's own expectation accepts bank conflicts, but it has none.

The access states `conflict_free: false`, `max_ways` above 1 or a
`max_wavefronts_per_request` above what its requests take, yet no request costs
more wavefronts than its phases with an active lane (the bank-conflict rule,
docs/hardware-model.md section 8; an excess over Nsight's ideal from a partly active
8- or 16-byte request is no conflict). The conflict was fixed (or never there): replace the
expectation with `expect: {conflict_free: true}` (or drop it) so that a
conflict coming back fails the lint.

Only an access's own `expect:` is checked; a spec-wide or configured
default applies to many accesses and is not stale because some are clean.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...checks.report import Severity
from ._base import AccessCheck, Hit, access_facts, plural

CODE = "SH003"
NAME = "stale-expectation"
SEVERITY = Severity.WARNING
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    r, own = item.result, item.own
    if own is None or own.empty or r.cost.requests == 0 or not r.cost.conflict_free:
        return
    if not item.conflicts_accepted:
        return  # conflict_free: true somewhere above keeps conflicts out anyway
    # does the access's own entry allow more than the clean access it is?
    allows = [
        own.conflict_free is False,
        own.max_ways is not None and own.max_ways > 1,
        own.max_wavefronts_per_request is not None
        and own.max_wavefronts_per_request > r.cost.max_wavefronts_per_request,
    ]
    if not any(allows):
        return
    pos = own.pos
    c = r.cost
    yield Hit(
        f"{r.site.name!r} accepts bank conflicts but has none: its "
        f"{plural(c.requests, 'request')} cost {c.wavefronts} wavefronts, none more than its "
        f"phases with an active lane ({c.phases} in all); state expect: "
        f"{{conflict_free: true}} so a regression fails",
        access_facts(r),
        line=pos.line if pos else None,
        column=pos.column if pos else None,
    )
