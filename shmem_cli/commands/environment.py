"""Where a command's input comes from and its output goes: one object, handed to each command.

As httpie does, the streams, the terminal questions (is it a terminal? how wide?) and
the color rule are answered in one place, :class:`Environment`, instead of each
command asking ``sys`` and ``os`` itself. The ``shmem`` group puts one on the click
context; a test passes its own (``CliRunner().invoke(main, args, obj=Environment(...))``).
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from typing import IO, Any

import click


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _same_file(a: Any, b: Any) -> bool:
    """Whether two streams write to the same open file or pipe (``cmd > log 2>&1``)."""
    if a is b:
        return True
    try:
        sa, sb = os.fstat(a.fileno()), os.fstat(b.fileno())
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation is both
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


@dataclass
class Environment:
    """The streams and terminal of one shmem run.

    ``stdout``/``stderr``/``stdin`` default to the process's streams at the time the
    object is made; ``env`` to ``os.environ`` (read for NO_COLOR and FORCE_COLOR).
    """

    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    stdin: IO[str] = field(default_factory=lambda: sys.stdin)
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    #: the terminal's width in columns; None: ask the terminal when needed
    columns: int | None = None

    @property
    def stdout_isatty(self) -> bool:
        return _isatty(self.stdout)

    @property
    def stderr_isatty(self) -> bool:
        return _isatty(self.stderr)

    @property
    def stderr_is_stdout(self) -> bool:
        """Standard error and output reach the same file, pipe or terminal."""
        return _same_file(self.stdout, self.stderr)

    def color(self, no_color: bool = False, output: str | None = None) -> bool:
        """Color only for standard output on a terminal, never with --no-color or
        NO_COLOR set, always with FORCE_COLOR (unless --output names a file)."""
        if no_color or output is not None or self.env.get("NO_COLOR"):
            return False
        if self.env.get("FORCE_COLOR"):
            return True
        # TERM=dumb (an editor's shell buffer) shows escape codes as text, as rich knows too
        return self.stdout_isatty and self.env.get("TERM") != "dumb"

    def width(self, width: int | None, color: bool, output: str | None = None) -> int | None:
        """--width if given, else the terminal's width when printing to it: in color, or
        plain on a terminal (NO_COLOR and --no-color take the color away, not the width:
        text laid out 200 wide wrapped on an 80-column terminal).

        None leaves the width to the renderer (200 columns for plain text: a pipe, a file).
        """
        if width is not None:
            return width
        to_terminal = (output is None or output == "-") and self.stdout_isatty
        if not color and not to_terminal:
            return None
        if self.columns is not None:
            return self.columns
        import shutil  # only here: it pulls in the compression modules

        return shutil.get_terminal_size().columns

    def out(self, text: str, *, nl: bool = True, color: bool | None = None) -> None:
        """Write to standard output (ANSI codes kept when ``color`` is True; what its
        encoding cannot hold as backslash escapes). A failed write (a full disk, a closed
        pipe, a closed standard output) is an :class:`~shmem_cli.plumbing.fsutil.OutputError`,
        whatever the command (a report, ``--help``, ``shmem schema``), said as every bad
        output is, status 2."""
        from ..plumbing.fsutil import OutputError, printable, stdout_guard

        if self.stdout is None and text:  # `>&-`: Python found standard output closed
            # click.echo writes to no stream silently: the report was lost with status 0
            raise OutputError("cannot write the report: it is closed", "<standard output>")
        with stdout_guard(self.stdout):
            click.echo(printable(text, self.stdout), file=self.stdout, nl=nl, color=color)

    def err(self, text: str) -> None:
        """Write a message to standard error; control characters in it (from a spec, a
        path) are shown as ``\\xNN`` escapes, never sent to the terminal raw."""
        from ..render.plain import visible

        say(visible(text), self.stderr)


def say(text: str, stream: IO[str] | None) -> None:
    """Write a line to standard error (``stream``, else the process's): where it cannot be
    written (a full disk, a closed pipe) the message is lost but never the exit status (a
    failed write raised, and a refused spec exited 1, the status of findings)."""
    from ..plumbing.json_text import spelled  # a file name's stray byte: \xff, as in JSON

    with contextlib.suppress(OSError, ValueError):  # ValueError: the stream is closed
        click.echo(spelled(text), file=stream, err=True)


def current_environment() -> Environment:
    """The Environment of the running command (made on first use when there is none)."""
    ctx = click.get_current_context()
    found = ctx.find_object(Environment)
    if found is None:
        found = ctx.find_root().ensure_object(Environment)
    return found
