"""A test helper for kernel libraries' CI: fail when a kernel's shared memory has bank conflicts.

::

    import shmem_cli
    from shmem_cli.testing import assert_no_bank_conflicts

    def test_softmax_has_no_bank_conflicts():
        result = shmem_cli.trace("cache/softmax_entry", grid=(4,), args={"n_cols": 1000})
        assert_no_bank_conflicts(result, allow=["kernels.py:52"])

The failure names every conflicting instruction (its source line, offset and SASS, or the
spec access), how many wavefronts it cost against its ideal, and the bank table of its worst
request: which lanes met in which bank.
"""

from __future__ import annotations

import string
from collections.abc import Iterable

from .model import FileResult, SiteCost
from .plumbing.errors import file_line, shorten
from .trace.result import KernelTrace, TraceAccess, TraceResult

Selector = int | str  # a source line, "file:line", a pc "0x01a0", an opcode prefix, a name


def _trace_matches(a: TraceAccess, selector: Selector) -> bool:
    """Whether ``selector`` names the access: its line (or the user's line that called it
    through a helper, ``SassSite.caller``), its pc or its opcode."""
    lines = [(a.site.file, a.site.line), a.site.caller or (None, None)]
    if isinstance(selector, int):
        return any(line == selector for _, line in lines)
    s = selector.strip()
    if s[:2].lower() == "0x" and len(s) <= 18 and all(c in string.hexdigits for c in s[2:]):
        return a.site.pc == int(s, 16) if len(s) > 2 else False
    where, _, line = s.rpartition(":")
    if where and line.isdigit():
        return any(_same_file(f, where) for f, n in lines if f is not None and n == int(line))
    return a.site.opcode == s or a.site.opcode.startswith(s + ".")


def _same_file(file: str, written: str) -> bool:
    path = file.replace("\\", "/")
    return path == written or path.endswith("/" + written.lstrip("./"))


def _describe(acc: SiteCost, what: str, width: int) -> str:
    from .render.plain import layout
    from .render.text import bank_tables

    r = acc.cost
    head = (
        f"{what}: {r.max_ways}-way, {r.wavefronts:,} wavefronts for an ideal of "
        f"{r.ideal_wavefronts:,} ({r.excess_wavefronts:,} excess) in {r.requests:,} requests, "
        f"{r.conflicted_requests:,} of them with conflicts"
    )
    if r.detail is None or r.shown is None:
        return head
    where = f"worst request: {r.shown.describe()}, {len(r.detail.wavefronts)} wavefronts"
    table = layout(bank_tables(r.detail, width=width), width) or ""
    cells = "cells: the lanes each bank serves in each wavefront (rows)"
    return f"{head}\n  {where}; bank table ({cells}):\n" + "\n".join(
        "    " + line for line in table.rstrip("\n").splitlines()
    )


def _check(result: object, allow: object, call: str) -> list[Selector]:
    """The arguments' types, said as a :class:`ShmemError` naming the parameter; ``allow``
    as a list (read once: it may be a generator)."""
    from .plumbing import arguments

    if not isinstance(result, TraceResult | KernelTrace | FileResult):
        raise arguments.fail(
            call, "result", "what shmem_cli.trace or shmem_cli.analyze returns", result
        )
    listed = isinstance(allow, Iterable) and not isinstance(allow, str | bytes)
    items = list(allow) if listed else []  # type: ignore[call-overload]
    if not listed or not all(isinstance(s, int | str) and not isinstance(s, bool) for s in items):
        raise arguments.fail(
            call, "allow", "a list of source lines (52, 'k.py:52'), pcs, opcodes or names", allow
        )
    return items


def _kernels(result: TraceResult | KernelTrace) -> tuple[KernelTrace, ...]:
    if isinstance(result, TraceResult):
        return tuple(k for f in result.files for k in f.kernels)
    return (result,)


def conflicts(
    result: TraceResult | KernelTrace | FileResult, allow: Iterable[Selector] = ()
) -> list[str]:
    """One description per access with bank conflicts that ``allow`` does not name."""
    allowed = _check(result, allow, "conflicts")
    found: list[str] = []
    if isinstance(result, FileResult):
        for acc in result.accesses:
            if not acc.cost.conflict_free and acc.site.name not in allowed:
                found.append(_describe(acc, f"{result.path}: access {acc.site.name!r}", 200))
        return found
    for k in _kernels(result):
        for a in k.accesses:
            if a.cost.conflict_free or any(_trace_matches(a, s) for s in allowed):
                continue
            site = a.site
            line = file_line(site.file, site.line) if site.file and site.line else "(no line)"
            what = f"{k.name} {line} pc 0x{site.pc:04x} {site.sass}"
            found.append(_describe(a, what, 200))
    return found


def assert_no_bank_conflicts(
    result: TraceResult | KernelTrace | FileResult, *, allow: Iterable[Selector] = ()
) -> None:
    """Raise ``AssertionError`` naming each access with bank conflicts (a request costing more
    wavefronts than its phases with an active lane; an ``ok*`` excess passes) unless ``allow``
    names it: a source line (``52`` or ``"kernels.py:52"``), a pc (``"0x01a0"``), an opcode
    (``"STS"``, ``"LDSM.16.M88.4"``) or, for a spec, an access name.
    """
    allowed = _check(result, allow, "assert_no_bank_conflicts")
    found = conflicts(result, allowed)
    if found:
        idle = _unmatched(result, allowed)  # a mistyped line or pc: said where it is looked for
        said = f"\nallow names no access of the result: {_listed(idle)}" * bool(idle)
        raise AssertionError(
            f"{len(found)} shared-memory access(es) with bank conflicts:\n"
            + "\n".join(found)
            + said
        )


def _listed(selectors: list[Selector], most: int = 20) -> str:
    """The first ``most`` selectors, each short (an int past the 4,300 digits Python writes in
    hexadecimal; a long text cut), and how many more."""
    shown = [shorten(s if isinstance(s, int) else repr(s)) for s in selectors[:most]]
    more = len(selectors) - most
    return ", ".join(shown) + (f" and {more:,} more" if more > 0 else "")


def _unmatched(
    result: TraceResult | KernelTrace | FileResult, allowed: list[Selector]
) -> list[Selector]:
    """The selectors of ``allowed`` that name no access of ``result`` at all."""
    if isinstance(result, FileResult):
        return [s for s in allowed if s not in {acc.site.name for acc in result.accesses}]
    accesses = [a for k in _kernels(result) for a in k.accesses]
    return [s for s in allowed if not any(_trace_matches(a, s) for a in accesses)]
