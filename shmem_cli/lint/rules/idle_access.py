"""An access makes no shared-memory request at all.

Its `when:` condition is false for every thread in every loop iteration (or
its loop is empty), so there is nothing to check and any expectation on it
passes vacuously. Usually the condition or a loop range is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...checks.report import Severity
from ._base import AccessCheck, Hit

CODE = "SH005"
NAME = "idle-access"
SEVERITY = Severity.WARNING
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    r = item.result
    if r.cost.requests == 0:
        yield Hit(
            f"{r.site.name!r} makes no requests: no thread is active in any of its "
            f"{r.cost.iterations} loop iteration(s); check its 'when' and 'loop'",
            (("requests", 0), ("warps", r.cost.warps), ("iterations", r.cost.iterations)),
        )
