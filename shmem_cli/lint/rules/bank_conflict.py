"""An access has bank conflicts that nothing accepts.

By default every access must be conflict-free: each warp-level request costs
exactly one wavefront per phase that has active lanes (a full warp: 1 for
1/2/4-byte accesses, 2 for 8-byte, 4 for 16-byte, fewer for loads whose lanes
pair up on equal addresses, one per matrix for ldmatrix/stmatrix). An access
whose requests cost more is reported with its worst conflict
degree (ways), the totals, and the worst request's busiest bank and the lanes
that pile onto it.

Fix the layout (padding, an XOR swizzle, a different index order), or, if
the conflict is known and accepted, say so in the spec:

    expect: {max_ways: 2}            # accepts up to 2-way conflicts
    expect: {conflict_free: false}   # accepts any conflict

`conflict_free: true` (or no `expect:` at all) keeps this rule on.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...checks.report import Severity
from ._base import AccessCheck, Hit, access_facts, describe_worst

CODE = "SH001"
NAME = "bank-conflict"
SEVERITY = Severity.ERROR
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    r = item.result
    c = r.cost
    if c.conflict_free or item.conflicts_accepted:
        return
    message = (
        f"{c.max_ways}-way bank conflict in {r.site.name!r}: {c.wavefronts} wavefronts where "
        f"{c.ideal_wavefronts} would do ({c.conflicted_requests} of {c.requests} requests "
        f"conflicted)"
    )
    worst = describe_worst(r)
    if worst:
        message += f"; {worst}"
    message += f". If this is intended, state expect: {{max_ways: {c.max_ways}}}"
    yield Hit(message, access_facts(r))
