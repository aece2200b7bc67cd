"""shmem's one error type: a user-facing problem with a place in a file.

Every fault caused by user input (a spec, an expression, a command-line value)
is raised as :class:`ShmemError`. The CLI renders it as ``file:line:column:
message`` and exits with status 2; nothing else ever reaches the user as a
traceback.

One file may have many problems; a spec with 49,000 unknown keys has 49,000.
:meth:`ShmemError.collect` lists the first :data:`MAX_LISTED` and counts the rest in
one more line, placed at the first problem left out (:func:`cap`). User data and kernel
names in messages are kept short: :func:`shorten`, :func:`brief_name`.
"""

from __future__ import annotations

import re

from .frozen import frozen

MAX_SHOWN = 60

#: Problems listed per file before the rest are only counted.
MAX_LISTED = 20

_QUOTED = re.compile(r"""\s*(['"]).*""")


def one_line(text: str) -> str:
    """``text`` (a path, a name) with its line breaks written as ``\\n`` and ``\\r``: user
    text in a report never starts a line of its own (``::error ...`` at the start of a line
    of a CI log is a command to the runner)."""
    return text.replace("\n", "\\n").replace("\r", "\\r")


def json_reason(message: str) -> str:
    """Python's JSON reader's message in words a user acts on: a UTF-8 byte-order mark (a
    Windows editor's) was "Unexpected UTF-8 BOM (decode using utf-8-sig)", advice to a
    Python programmer."""
    if message.startswith("Unexpected UTF-8 BOM"):
        return (
            "it starts with a UTF-8 byte-order mark, which JSON does not allow (save it as "
            "UTF-8 without one)"
        )
    return message


def file_line(file: str | None, line: int | str) -> str:
    """``copy_sm80.hpp:64``: the last part of a source file's path (as a cubin's line table
    names it: user text, :func:`one_line`) and the line; just the line where no file is
    named."""
    name = one_line((file or "").rsplit("/", 1)[-1])
    return f"{name}:{line}" if name else str(line)


def shorten(value: object, limit: int = MAX_SHOWN) -> str:
    """A bounded, single-line rendering of user data for error messages."""
    text = one_line(value if isinstance(value, str) else _written(value))
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _written(value: object) -> str:
    """``repr(value)``; an integer past the 4,300 decimal digits Python writes (a YAML or
    TOML ``0xfff...`` of 3,600 digits) in hexadecimal, and anything holding one by its type."""
    try:
        return repr(value)
    except ValueError:
        if isinstance(value, int):
            return hex(value)
        return f"a {type(value).__name__} holding an integer of more than 4,300 digits"


#: a kernel name longer than this is shown with its inner template arguments cut (CuTe's run
#: to a thousand characters); the JSON and --list-params keep it whole
NAME_SHOWN = 120


def brief_name(name: str, limit: int = NAME_SHOWN) -> str:
    """``kernel<cute::TiledCopy<...>, float>`` for a name over ``limit`` characters: the
    template arguments nested two deep and more cut to ``...``, then, if still too long,
    all of them."""
    if len(name) <= limit:
        return name
    brief = _cut_templates(name, 2)
    return brief if len(brief) <= limit else _cut_templates(name, 1)


def _cut_templates(name: str, depth: int) -> str:
    """``name`` with each run of template arguments nested ``depth`` deep or more as ``...``."""
    out: list[str] = []
    level = 0
    for ch in name:
        if ch == ">":
            level -= 1
        if level < depth:
            out.append(ch)
        elif not out or out[-1] != "...":
            out.append("...")
        if ch == "<":
            level += 1
    return "".join(out)


@frozen
class SourcePos:
    """1-based line and column in a source file."""

    line: int
    column: int

    def shifted(self, offset: int) -> SourcePos:
        """The position ``offset`` characters further along the same line."""
        return SourcePos(self.line, self.column + offset)


class ShmemError(Exception):
    """A problem with user input, located where possible."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        pos: SourcePos | None = None,
        code: str = "invalid-spec",
        more: tuple[ShmemError, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.pos = pos
        self.code = code
        self.more = more  # further problems found in the same file, in order

    @classmethod
    def collect(cls, problems: list[ShmemError]) -> ShmemError:
        """One error standing for several: the first, carrying the rest in ``more``
        (beyond :data:`MAX_LISTED`, the rest are counted: :func:`cap`)."""
        problems = cap(problems)
        first = problems[0]
        first.more = tuple(problems[1:])
        return first

    @property
    def all(self) -> tuple[ShmemError, ...]:
        """This problem and every further one found with it."""
        return (self, *self.more)

    def located(self, path: str | None = None, pos: SourcePos | None = None) -> ShmemError:
        """Fill in the path and position if they are not known yet (returns self)."""
        if self.path is None and path is not None:
            self.path = path
        if self.pos is None and pos is not None:
            self.pos = pos
        for other in self.more:
            other.located(path)
        return self

    @property
    def line(self) -> int | None:
        return self.pos.line if self.pos else None

    @property
    def column(self) -> int | None:
        return self.pos.column if self.pos else None

    def render_one(self) -> str:
        """``path:line:column: error: message`` with whatever parts are known."""
        where = one_line(self.path or "<input>")
        if self.pos is not None:
            where += f":{self.pos.line}:{self.pos.column}"
        return f"{where}: error: {self.message}"

    def render(self) -> str:
        """Every problem, one ``path:line:column: error: message`` line each."""
        return "\n".join(e.render_one() for e in self.all)

    def __str__(self) -> str:
        return self.render()


#: set, an exception shmem does not expect is raised whole (the tests set it: they find bugs
#: by their tracebacks); unset, it is said in one line, as any bad input is
TRACEBACK_VARIABLE = "SHMEM_TRACEBACK"


def unexpected(exc: Exception) -> str:
    """The one line an exception shmem does not expect (a bug a check missed) is said in."""
    return (
        f"internal error: {type(exc).__name__}: {shorten(str(exc), 200)}; a bug in shmem: "
        f"please report it with the command and its input files ({TRACEBACK_VARIABLE}=1 shows "
        "where it happened)"
    )


def file_bug(exc: Exception, path: str) -> ShmemError:
    """A bug that one input file of several reached, as that file's error, so that it hides
    none of the others' results; raised whole where it should be (:data:`TRACEBACK_VARIABLE`
    set, or ``MemoryError``: the guard of the whole command says it)."""
    import os

    if os.environ.get(TRACEBACK_VARIABLE) or isinstance(exc, MemoryError):
        raise exc
    return ShmemError(unexpected(exc), path=path, code="internal")


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
