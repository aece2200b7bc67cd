"""What every command shares: exit statuses, the usage-error style, the output options,
the "no such file" check and writing a report.

Commands import these from here (never from :mod:`shmem_cli.cli`, which only
lists the commands). Exit statuses, the same for every command, are documented
once, in README.md ("Exit status").
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from .environment import current_environment

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..analysis.analyze import RequestChoice
    from ..plumbing.errors import ShmemError
    from ..render.options import RenderOptions
    from .environment import Environment

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

#: the path that stands for standard input
STDIN = "-"


class ExitCode(enum.IntEnum):
    """Exit statuses, the same for every command."""

    OK = 0
    FINDINGS = 1  # lint findings at or above --fail-on, verify mismatches
    USAGE = 2  # bad arguments, unreadable or invalid specs


class UsageError(click.UsageError):
    """A bad argument, shown the one way shmem shows them all::

        shmem: error: no such file or directory: x.yaml
        (see: shmem analyze --help)

    click's own argument errors (a missing argument, an unknown option) are
    turned into this by :class:`shmem_cli.cli.ShmemGroup`.
    """

    def show(self, file: IO[Any] | None = None) -> None:
        stream = file if file is not None else current_stream()
        click.echo(f"shmem: error: {self.format_message()}", file=stream, err=True)
        if self.ctx is not None:
            click.echo(f"(see: {self.ctx.command_path} --help)", file=stream, err=True)


def current_stream() -> IO[str] | None:
    ctx = click.get_current_context(silent=True)
    return current_environment().stderr if ctx is not None else None


def fail_usage(message: str) -> NoReturn:
    """A bad argument: ``shmem: error: message`` on standard error, exit status 2."""
    raise UsageError(message, click.get_current_context(silent=True))


def fail_input(err: ShmemError) -> NoReturn:
    """Bad input: ``file:line:column: error: message`` on standard error, with the source
    line and a caret under the column; exit status 2."""
    from ..render.snippet import with_source
    from ..spec.source import error_sources

    current_environment().err(with_source(err, error_sources(err)))
    raise SystemExit(ExitCode.USAGE)


def fail(err: ShmemError) -> NoReturn:
    """A refused input: located (``fail_input``) when it names a file, else a usage error."""
    if err.path:
        fail_input(err)
    fail_usage(err.message)


def emit_ranking(
    result: Any,
    render_text: Callable[..., str],
    *,
    fmt: str,
    output: str | None,
    no_color: bool,
    width: int | None,
) -> None:
    """Emit a ranked sweep (of a spec or of a compiled kernel) as JSON or as ``render_text``."""
    env = current_environment()
    color = env.color(no_color, output) and fmt == "text"
    if fmt == "json":
        from ..render.json_out import render_json

        text = render_json(result)
    else:
        text = render_text(result, color=color, width=env.width(width, color))
    emit(text, output, color=color)


def require_paths(paths: Iterable[str], *, stdin: bool = True, note: str = "") -> None:
    """The one "no such file" check: every path exists (``-``, standard input, too)."""
    for p in paths:
        if stdin and p == STDIN:
            continue
        if not os.path.exists(p):
            fail_usage(f"no such file or directory: {p}{note}")


def require_file(path: str, *, folder: bool = False) -> None:
    """A kernel file (or, with ``folder``, a Triton cache folder) exists and is one: a FIFO or
    a device is refused by its kind, never waited on or read."""
    import stat

    from ..plumbing.errors import shorten

    try:
        mode = os.stat(path).st_mode
    except OSError:
        fail_usage(f"no such file: {shorten(path, 200)}")
    if stat.S_ISREG(mode) or folder and stat.S_ISDIR(mode):
        return
    kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, device or socket)"
    fail_usage(f"{shorten(path, 200)} is {kind}; give a kernel file")


def require_specs(paths: tuple[str, ...]) -> None:
    """Every path exists and together they name at least one spec file."""
    from ..analysis.analyze import collect_specs

    require_paths(paths)
    if not collect_specs(paths):
        fail_usage("no *.yaml or *.yml spec files found in " + ", ".join(paths))


def output_options(formats: tuple[str, ...]) -> Callable[[F], F]:
    """--format, --output and --no-color, shared by the commands that print reports."""

    def deco(fn: F) -> F:
        fn = click.option(
            "--no-color", is_flag=True, help="Plain text even on a terminal (also: NO_COLOR=1)."
        )(fn)
        fn = click.option(
            "-o",
            "--output",
            type=click.Path(dir_okay=False, writable=True),
            help="Write the report to FILE (atomically) instead of standard output.",
        )(fn)
        fn = click.option(
            "-f",
            "--format",
            "fmt",
            type=click.Choice(formats),
            default=formats[0],
            show_default=True,
            help="Output format.",
        )(fn)
        return fn

    return deco


def report_options(
    env: Environment,
    *,
    fmt: str,
    no_color: bool,
    output: str | None,
    width: int | None,
    words: bool,
    no_tables: bool,
    heatmap: bool | None,
    rows: int | None,
    hints: Mapping[str, Mapping[str, str]] | None = None,
    sources: Mapping[str, tuple[str, ...] | None] | None = None,
) -> RenderOptions:
    """How a text report is drawn, from the flags that analyze and trace share: color
    only for text on a terminal (or forced), heat maps with the tables unless said."""
    from ..render.options import RenderOptions

    color = env.color(no_color, output) and fmt == "text"
    return RenderOptions(
        color=color,
        width=env.width(width, color),
        words=words,
        tables=not no_tables,
        heat=heatmap if heatmap is not None else not no_tables,
        rows=rows,
        hints=hints or {},
        sources=sources or {},
    )


def picture_options(fn: F) -> F:
    """--svg and --html, shared by the commands whose text report can be saved as a picture."""
    fn = click.option(
        "--html",
        "html_path",
        metavar="FILE",
        type=click.Path(dir_okay=False),
        help="Also write the text report, in color, as a standalone HTML page to FILE.",
    )(fn)
    return click.option(
        "--svg",
        "svg_path",
        metavar="FILE",
        type=click.Path(dir_okay=False),
        help="Also write the text report, in color, as an SVG picture to FILE.",
    )(fn)


def width_option(fn: F) -> F:
    """--width, shared by the commands that print tables."""
    return click.option(
        "--width",
        type=click.IntRange(60, 1000),
        help="Text width (default: terminal width or 200).",
    )(fn)


def emit(text: str, output: str | None, color: bool | None = None) -> None:
    """Write a rendered report to ``output`` (atomically) or standard output.

    ``color=True`` keeps ANSI codes even when standard output is a pipe (the
    renderer only emits them when color was asked for: FORCE_COLOR, a terminal).
    """
    if output:
        from ..plumbing.fsutil import write_atomic

        write_atomic(output, text)
    else:
        from ..plumbing.fsutil import printable, stdout_guard

        env = current_environment()
        with stdout_guard(env.stdout):
            env.out(printable(text, env.stdout), nl=False, color=color)


def parse_request(value: str | None) -> RequestChoice | None:
    """--request WARP[:ITERATION]."""
    if value is None:
        return None
    from ..analysis.analyze import RequestChoice

    warp_text, _, it_text = value.partition(":")
    try:
        return RequestChoice(warp=int(warp_text), iteration=int(it_text) if it_text else 0)
    except ValueError:
        fail_usage(f"--request expects WARP or WARP:ITERATION (integers), got {value!r}")
