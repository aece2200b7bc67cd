"""A bound on how many problems of one file are reported.

A spec with 49,000 unknown keys has 49,000 problems; listing them all gives
megabytes of errors and helps nobody. The first :data:`MAX_LISTED` are listed;
one more line, placed at the first problem left out, counts the rest.
"""

from __future__ import annotations

import re

from .errors import ShmemError

#: Problems listed per file before the rest are only counted.
MAX_LISTED = 20

_QUOTED = re.compile(r"""\s*(['"]).*""")


def kind_of(problem: ShmemError) -> str:
    """What a problem is about, without its particulars: "unknown key" for
    "unknown key 'k0' at top level"."""
    return _QUOTED.sub("", problem.message).strip().rstrip(":")


def cap(problems: list[ShmemError], limit: int = MAX_LISTED) -> list[ShmemError]:
    """``problems`` as they are if there are at most ``limit``; else the first
    ``limit`` and a problem that counts the others."""
    if len(problems) <= limit:
        return problems
    rest = problems[limit:]
    kinds = {kind_of(p) for p in rest}
    what = f"{kinds.pop()} problems" if len(kinds) == 1 else "problems"
    first = rest[0]
    summary = ShmemError(
        f"... and {len(rest):,} more {what} (the first {limit} are listed; fix them and run again)",
        path=first.path,
        pos=first.pos,
        code=first.code,
    )
    return [*problems[:limit], summary]
