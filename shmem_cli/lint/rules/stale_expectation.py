"""An access's own expectation accepts bank conflicts, but it has none.

The access states ``conflict_free: false`` or a ``max_ways`` /
``max_wavefronts_per_request`` bound, yet every request costs exactly its
ideal wavefronts. The conflict was fixed (or never there): replace the
expectation with ``expect: {conflict_free: true}`` (or drop it) so that a
conflict coming back fails the lint.

Only an access's own ``expect:`` is checked; a spec-wide or configured
default applies to many accesses and is not stale because some are clean.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Hit, Severity
from ._base import AccessCheck, access_facts

CODE = "SH003"
NAME = "stale-expectation"
SEVERITY = Severity.WARNING
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    r = item.result
    if item.own is None or item.own.empty or r.requests == 0:
        return
    if not (r.conflict_free and item.conflicts_accepted):
        return
    own = item.own
    accepted = own.conflict_free is False or (
        own.conflict_free is None
        and (own.max_ways is not None or own.max_wavefronts_per_request is not None)
    )
    if not accepted:
        return  # the acceptance comes from a spec-wide or configured default
    pos = own.pos
    yield Hit(
        f"{r.name!r} accepts bank conflicts but is conflict-free ({r.wavefronts} wavefronts, "
        f"the ideal); state expect: {{conflict_free: true}} so a regression fails",
        access_facts(r),
        line=pos.line if pos else None,
        column=pos.column if pos else None,
    )
