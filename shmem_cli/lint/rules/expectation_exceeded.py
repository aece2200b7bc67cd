"""An access is worse than the bound its expectation states.

`expect: {max_ways: N}` accepts conflicts up to N-way: the most distinct
4-byte words any one bank must deliver in one phase of any request.
`expect: {max_wavefronts_per_request: N}` accepts up to N wavefronts for the
worst warp-level request (mind the ideal: a conflict-free 16-byte access costs
4 per request, an 8-byte one 2, ldmatrix.x4 4).

The bounds come from the access's own `expect:`, else from the spec's
top-level `expect:`, else from `[tool.shmem] expect` in pyproject.toml. The
finding names the bound, the measured value and the worst request's busiest
bank with its lanes.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...checks.report import Severity
from ._base import AccessCheck, Hit, access_facts, describe_worst

CODE = "SH002"
NAME = "expectation-exceeded"
SEVERITY = Severity.ERROR
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    e, r = item.expect, item.result
    if e is None:
        return
    broken: list[str] = []
    if e.max_ways is not None and r.cost.max_ways > e.max_ways:
        broken.append(f"max_ways is {e.max_ways} but the access is {r.cost.max_ways}-way")
    worst = r.cost.max_wavefronts_per_request
    if e.max_wavefronts_per_request is not None and worst > e.max_wavefronts_per_request:
        broken.append(
            f"max_wavefronts_per_request is {e.max_wavefronts_per_request} but the worst "
            f"request takes {worst}"
        )
    if not broken:
        return
    message = f"{r.site.name!r} exceeds its expectation: " + "; ".join(broken)
    detail = describe_worst(r)
    if detail:
        message += f" ({detail})"
    yield Hit(message, access_facts(r))
