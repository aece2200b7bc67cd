"""Errors with the source line they point at, and a caret under the column (as rustc,
ruff and mypy show them)::

    spec.yaml:7:13: error: unknown array 'b'; arrays: a
      7 |     array: b
        |            ^

The line is read again from the spec file (or from the standard input already
read) only when an error is shown; a file that cannot be read just gets no quote.
"""

from __future__ import annotations

from ..plumbing.errors import ShmemError
from .plain import visible

#: the most characters of a source line quoted; a longer line is cut around the column
WINDOW = 80


def _lines(path: str) -> tuple[str, ...] | None:
    from ..spec.source import STDIN_NAME, STDIN_PATH, read_spec_bytes

    try:
        raw = read_spec_bytes(STDIN_PATH if path == STDIN_NAME else path)
    except ShmemError:
        return None
    return tuple(raw.decode("utf-8", errors="replace").splitlines())


def quote(err: ShmemError, lines: tuple[str, ...] | None = None) -> list[str]:
    """The source line of one problem and a caret line under its column (empty: no place).

    ``lines``: the file's lines, when the caller has them already."""
    if err.path is None or err.line is None or err.column is None:
        return []
    lines = lines if lines is not None else _lines(err.path)
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


def with_source(err: ShmemError) -> str:
    """Every problem of ``err``: its ``file:line:column: error: message`` line, then the
    source line and a caret."""
    out: list[str] = []
    read: dict[str, tuple[str, ...] | None] = {}  # each file read once per error
    for one in err.all:
        out.append(one.render_one())
        if one.path is not None and one.path not in read:
            read[one.path] = _lines(one.path)
        out.extend(quote(one, read.get(one.path or "")))
    return "\n".join(out)
