"""Errors with the source line they point at, and a caret under the column (as rustc,
ruff and mypy show them)::

    spec.yaml:7:13: error: unknown array 'b'; arrays: a
      7 |     array: b
        |            ^

The caller reads the files an error names (bounded:
:func:`shmem_cli.spec.source.error_sources`) and passes their lines; a file it could not
read just gets no quote. Nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..plumbing.errors import ShmemError
from .plain import visible

#: the most characters of a source line quoted; a longer line is cut around the column
WINDOW = 80

#: file path -> its lines (None: it could not be read)
Sources = Mapping[str, tuple[str, ...] | None]


def quote(err: ShmemError, lines: tuple[str, ...] | None) -> list[str]:
    """The source line of one problem and a caret line under its column (empty: no place,
    or no ``lines``, the lines of the file it names)."""
    if err.path is None or err.line is None or err.column is None:
        return []
    if lines is None or not 0 < err.line <= len(lines):
        return []
    line = lines[err.line - 1]
    col = min(err.column - 1, len(line))
    start = max(0, min(col - WINDOW // 2, len(line) - WINDOW))
    cut = line[start : start + WINDOW]
    lead = "..." if start else ""
    tail = "..." if start + WINDOW < len(line) else ""
    before = lead + visible(line[start:col])
    gutter = " " * len(str(err.line))
    return [
        f"  {err.line} | {lead}{visible(cut)}{tail}".rstrip(),
        f"  {gutter} | {' ' * len(before)}^",
    ]


def with_source(err: ShmemError, sources: Sources) -> str:
    """Every problem of ``err``: its ``file:line:column: error: message`` line, then the
    source line (from ``sources``) and a caret."""
    out: list[str] = []
    for one in err.all:
        out.append(one.render_one())
        out.extend(quote(one, sources.get(one.path or "")))
    return "\n".join(out)
