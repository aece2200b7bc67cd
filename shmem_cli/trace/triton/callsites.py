"""Which line of the kernel called a line of Triton's library, from the TTGIR's locations.

A Triton cubin's line table places the shared-memory traffic of ``tl.max`` and ``tl.sum`` at
their lines in ``triton/language/standard.py``, with no inlining chain (Triton 3.2-3.6): the
kernel's line that called them is known only to the TTGIR, whose location aliases say it::

    #loc11 = loc("/.../triton/language/standard.py":191:40)
    #loc12 = loc("/.../kernels.py":16:37)
    #loc39 = loc("row_minus_max"(#loc12))
    #loc47 = loc(callsite(#loc11 at #loc39))

:func:`library_callers` maps each library line to the kernel's lines that called it, and
:func:`place` moves each instruction there: to the one caller, or, where several calls share
the library's lines (two ``tl.sum``), to the caller the nearest instruction placed at one of
them names (the ``/ n_cols`` after the first sum's exchange is the first call's line); with
none within :data:`NEAR` instructions, or two at one distance, it stays the library's. The
TTGIR comes from a cache anyone can commit: only whole ``#loc`` alias lines are read, each
pattern linear, and a chain is followed at most :data:`MAX_DEPTH` levels.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

Location = tuple[str, int]

MAX_DEPTH = 64  # levels of a callsite chain followed
NEAR = 256  # instructions looked at on each side for a shared library line's caller
_FILE = re.compile(r'^#loc(\d{0,9})\s*=\s*loc\("([^"\n]{1,4096})":(\d{1,9}):\d{1,9}\)\s*$', re.M)
_NAMED = re.compile(r'^#loc(\d{0,9})\s*=\s*loc\("[^"\n]{0,4096}"\(#loc(\d{0,9})\)\)\s*$', re.M)
_CALL = re.compile(
    r"^#loc(\d{0,9})\s*=\s*loc\(callsite\(#loc(\d{0,9})\s+at\s+#loc(\d{0,9})\)\)\s*$", re.M
)


def library_callers(
    text: str, library: Callable[[str], bool]
) -> dict[Location, tuple[Location, ...]]:
    """library (file, line) -> the kernel's (file, line)s that called it (sorted), for every
    library line (``library(file)``) of a callsite of the TTGIR ``text``."""
    files = {m.group(1): (m.group(2), int(m.group(3))) for m in _FILE.finditer(text)}
    named = {m.group(1): m.group(2) for m in _NAMED.finditer(text)}
    calls = {m.group(1): (m.group(2), m.group(3)) for m in _CALL.finditer(text)}
    memo: dict[str, tuple[Location, ...]] = {}

    def frames(alias: str, depth: int = 0) -> tuple[Location, ...]:
        """The locations of an alias, innermost first (none: unknown, too deep, a loop)."""
        if alias in memo:
            return memo[alias]
        memo[alias] = ()  # a loop of aliases resolves to nothing
        out: tuple[Location, ...] = ()
        if depth < MAX_DEPTH:
            if alias in files:
                out = (files[alias],)
            elif alias in named:
                out = frames(named[alias], depth + 1)
            elif alias in calls:
                callee, caller = calls[alias]
                out = (*frames(callee, depth + 1), *frames(caller, depth + 1))
        out = out[:MAX_DEPTH]
        memo[alias] = out
        return out

    seen: dict[Location, set[Location]] = {}
    for alias in calls:
        chain = frames(alias)
        user = next((i for i, (file, _) in enumerate(chain) if not library(file)), None)
        if user is None:
            continue
        for where in chain[:user]:
            seen.setdefault(where, set()).add(chain[user])
    return {lib: tuple(sorted(users)) for lib, users in seen.items()}


def place(
    lines: Mapping[int, Location], callers: Mapping[Location, tuple[Location, ...]]
) -> dict[int, Location]:
    """``lines`` (pc -> the line the line table gives) with each library line moved to the
    kernel's line that called it (see the module docstring)."""
    pcs = sorted(lines)
    out = {}
    for i, pc in enumerate(pcs):
        where = lines[pc]
        users = callers.get(where, ())
        if len(users) == 1:
            where = users[0]
        elif users:
            for d in range(1, NEAR + 1):
                near = {lines[pcs[j]] for j in (i - d, i + d) if 0 <= j < len(pcs)}
                hits = near.intersection(users)
                if hits:
                    where = hits.pop() if len(hits) == 1 else where
                    break
        out[pc] = where
    return out
