"""What every command shares: exit statuses, the usage-error style, the output options,
the "no such file" check and writing a report.

Commands import these from here (never from :mod:`shmem_cli.cli`, which only
lists the commands). Exit statuses, the same for every command, are documented
once, in README.md ("Exit status").
"""

from __future__ import annotations

import enum
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from ..plumbing.fsutil import missing
from .environment import current_environment, say

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..analysis.analyze import RequestChoice
    from ..plumbing.errors import ShmemError
    from ..render.options import RenderOptions
    from ..spec.spec_files import SpecFiles
    from .environment import Environment

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

#: the path that stands for standard input (an input) or standard output (``-o -``, ``--svg -``),
#: as other tools read it
STDIO = "-"
#: the most worker processes or compiles a command may be asked for (``lint -j``, ``sweep
#: -j``): each may take up to the 1 GiB shmem bounds itself to, and more than the machine's
#: cores only add processes (``lint -j 1000000000`` over 10,000 specs started 625 workers)
MAX_JOBS = 256


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
        from ..render.plain import visible  # the value typed, quoted: no escape sent raw

        stream = file if file is not None else current_stream()
        see = f"\n(see: {self.ctx.command_path} --help)" if self.ctx is not None else ""
        say(f"shmem: error: {visible(_cut_runs(self.format_message()))}{see}", stream)


#: the longest run of non-blank characters an argument error shows (click's "Invalid value"
#: quotes the value typed whole: 100,000 characters of it made one line)
_LONGEST_RUN = 400


def _cut_runs(message: str) -> str:
    """``message`` with each run of more than :data:`_LONGEST_RUN` non-blank characters cut
    to its start, ``...`` and its length."""
    return re.sub(
        rf"\S{{{_LONGEST_RUN + 1},}}",
        lambda m: f"{m.group()[: _LONGEST_RUN // 2]}... ({len(m.group()):,} characters)",
        message,
    )


def _show_help(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--help``: the command's help on standard output, written as every output is."""
    if value and not ctx.resilient_parsing:
        current_environment().out(ctx.get_help(), color=ctx.color)
        ctx.exit()


def help_written_safely(option: click.Option | None) -> click.Option | None:
    """click's help option, its page written by :meth:`Environment.out` (click's own write
    raised on a full disk or a closed pipe: a traceback, or exit status 1)."""
    if option is not None:
        option.callback = _show_help
    return option


class ShmemCommand(click.Command):
    """A shmem command (``@click.command(cls=ShmemCommand)``): its ``--help`` is written
    as every output is (:func:`help_written_safely`)."""

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        return help_written_safely(super().get_help_option(ctx))

    def invoke(self, ctx: click.Context) -> Any:
        """The command, once no file or folder it is given is named by an empty string (an
        unset variable of a CI script): ``-o ""`` wrote to standard output, ``--baseline ""``
        read none, ``examples --copy ""`` copied into the current folder."""
        named: list[tuple[str, Sequence[object]]] = [  # the pictures: not in params
            (f"--{fmt}", (path,)) for fmt, path in pictures().items()
        ]
        for param in self.params:
            value = ctx.params.get(param.name or "")
            if isinstance(param.type, click.Path):
                option = isinstance(param, click.Option)
                said = param.opts[-1] if option else param.human_readable_name
                named.append((said, value if isinstance(value, tuple | list) else (value,)))
        for said, given in named:
            if "" in given:
                fail_usage(f"{said}: the name is empty; name a file or folder")
        return super().invoke(ctx)


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


def emit_report(
    report: Any, options: RenderOptions, *, fmt: str, output: str | None, title: str
) -> None:
    """Draw ``report`` in ``fmt`` (the report-format registry) to ``output`` or standard
    output."""
    from ..render.report_formats import render_report

    emit(render_report(report, fmt, options, title=title), output, color=options.color)


def emit_simple_report(
    result: Any, *, fmt: str, output: str | None, no_color: bool, width: int | None, title: str
) -> None:
    """Emit a report drawn with the default options (a ranked sweep of a spec or of a
    compiled kernel) in ``fmt``, and its pictures."""
    from ..render.options import RenderOptions

    env = current_environment()
    color = env.color(no_color, output) and fmt == "text"
    options = RenderOptions(color=color, width=env.width(width, color, output))
    emit_report(result, options, fmt=fmt, output=output, title=title)
    write_pictures(result, RenderOptions(width=width), title=title)


def require_paths(paths: Iterable[str], *, stdin: bool = True, note: str = "") -> None:
    """The one "no such file" check: every path exists (``-``, standard input, too)."""
    gone = [p for p in paths if not (stdin and p == STDIO or os.path.exists(p))]
    for p in gone[:-1]:  # each missing path its own line, none hidden by the first
        UsageError(f"{missing(p)}: {p}{note}").show()
    if gone:  # the last, with "(see: ... --help)"; exit status 2
        fail_usage(f"{missing(gone[-1])}: {gone[-1]}{note}")


def require_file(path: str, *, folder: bool = False) -> None:
    """A kernel file (or, with ``folder``, a Triton cache folder) exists and is one: a FIFO or
    a device is refused by its kind, never waited on or read."""
    from ..plumbing.errors import shorten

    try:
        mode = os.stat(path).st_mode
    except OSError:
        fail_usage(f"{missing(path, 'no such file')}: {shorten(path, 200)}")
    if stat.S_ISREG(mode) or folder and stat.S_ISDIR(mode):
        return
    kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, device or socket)"
    fail_usage(f"{shorten(path, 200)} is {kind}; give a kernel file")


def kernel_inputs(path: str, args: Iterable[str], *more: str | None) -> list[str]:
    """What a trace reads that an output must never replace: the kernel file (or a Triton
    folder), every ``@FILE`` of ``--arg`` (a tensor map's ``data=@FILE`` too) and ``more``
    (``--compare``'s CSV)."""
    out = [path, *(m for m in more if m)]
    for arg in args:
        value = arg.partition("=")[2].strip()
        if value.startswith("@"):
            out.append(value[1:])
        out += [p.strip()[6:] for p in value.split(",") if p.strip().startswith("data=@")]
    return out


def require_specs(paths: tuple[str, ...], command: str) -> SpecFiles:
    """Every path exists and together they name at least one spec file (what the walk
    skipped said on standard error first)."""
    from ..spec.spec_files import find_specs

    require_paths(paths)
    found = find_specs(paths)
    say_skipped(found, command)
    if not found.paths:
        fail_usage("no *.yaml or *.yml spec files found in " + ", ".join(paths))
    return found


def say_skipped(found: SpecFiles, command: str) -> None:
    """One line on standard error for each name like a spec's the walk did not take (the
    first 20, then how many more), so that none is passed over unseen."""
    from ..plumbing.errors import MAX_LISTED, shorten

    env = current_environment()
    for path, why in found.skipped[:MAX_LISTED]:
        env.err(f"shmem {command}: skipped {shorten(str(path), 200)}: {why}")
    more = len(found.skipped) - MAX_LISTED
    if more > 0:
        env.err(f"shmem {command}: ... and {more:,} more names like a spec's skipped")


class LiveChoice(click.Choice):  # type: ignore[type-arg]
    """A choice among the names a registry holds when the command runs, not when it was
    built: a format registered later is offered too."""

    def __init__(self, names: Callable[[], Sequence[str]]) -> None:
        self._names = names
        super().__init__(tuple(names()))

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._names())

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        del value  # the registry decides


def check_format_names() -> tuple[str, ...]:
    """The --format choices of the commands whose report can fail a check (lint, verify):
    their text and JSON, and every format of the check-format registry."""
    from ..render.checks.formats import FORMATS

    return ("text", "json", *FORMATS)


def report_format_names() -> tuple[str, ...]:
    """The --format choices of the commands whose reports the report-format registry draws."""
    from ..render.report_formats import report_formats

    return report_formats()


def output_options(formats: Callable[[], Sequence[str]]) -> Callable[[F], F]:
    """--format (the names ``formats`` gives when the command runs), --output and
    --no-color, shared by the commands that print reports."""

    def deco(fn: F) -> F:
        fn = click.option(
            "--no-color", is_flag=True, help="Plain text even on a terminal (also: NO_COLOR=1)."
        )(fn)
        fn = click.option(
            "-o",
            "--output",
            type=click.Path(dir_okay=False, writable=True),
            help="Write the report to FILE (atomically) instead of standard output (-: "
            "standard output).",
        )(fn)
        fn = click.option(
            "-f",
            "--format",
            "fmt",
            type=LiveChoice(formats),
            default=formats()[0],
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
        width=env.width(width, color, output),
        words=words,
        tables=not no_tables,
        heat=heatmap if heatmap is not None else not no_tables,
        rows=rows,
        hints=hints or {},
        sources=sources or {},
    )


PICTURES = "shmem.pictures"  # where the picture options keep their paths (ctx.meta)


def _keep_picture(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def keep(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None:
            ctx.meta.setdefault(PICTURES, {})[name] = value
        return value

    return keep


def picture_options(fn: F) -> F:
    """--svg FILE and --html FILE: one option per picture format of the report-format
    registry, shared by the commands whose report can be saved as a picture; the paths
    are read with :func:`pictures`."""
    from ..render.report_formats import picture_formats

    for f in reversed(picture_formats()):
        fn = click.option(
            f"--{f.name}",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            expose_value=False,
            callback=_keep_picture(f.name),
            help=f.help,
        )(fn)
    return fn


def pictures() -> dict[str, str]:
    """Picture format -> the file it goes to, as this command's options asked."""
    ctx = click.get_current_context(silent=True)
    return dict(ctx.meta.get(PICTURES, {})) if ctx is not None else {}


def write_pictures(report: Any, options: RenderOptions, *, title: str) -> None:
    """Each picture this command was asked for, ``report`` drawn in color (``options.width``:
    the page's width, None for the content's)."""
    from ..render.report_formats import render_report

    for name, path in pictures().items():
        write_report(path, render_report(report, name, options, title=title), color=True)


def table_options(site: str, repeat: str) -> Callable[[F], F]:
    """--no-tables, --rows, --words, --heatmap/--no-heatmap and --width: how the bank tables
    and heat maps of a report are drawn, shared by analyze and trace (``site``: what a
    report lists, ``repeat``: what its heat map puts down the rows)."""

    def deco(fn: F) -> F:
        fn = width_option(fn)
        fn = click.option(
            "--heatmap/--no-heatmap",
            default=None,
            help=f"Under each conflicting {site} with several requests, a warp x {repeat} map "
            "of the wavefronts of every request (default: on, off with --no-tables).",
        )(fn)
        fn = click.option(
            "--words", is_flag=True, help="Show the word index under each lane list in bank tables."
        )(fn)
        fn = click.option(
            "--rows",
            default="16",
            show_default=True,
            metavar="N|all",
            help="The most rows (wavefronts) of a bank table, also in --svg and --html (the "
            "first and the last are always shown); 'all' shows every row.",
        )(fn)
        return click.option(
            "--no-tables", is_flag=True, help="Only the summaries, no bank tables."
        )(fn)

    return deco


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
    write_report(output, text, color)


def write_report(path: str | None, text: str, color: bool | None = None) -> None:
    """``text`` to the file ``path`` (atomically), or to standard output where ``path`` is
    None or :data:`STDIO` (it wrote a file named ``-``)."""
    if path and path != STDIO:
        from ..plumbing.fsutil import write_atomic

        write_atomic(path, text)
    else:
        current_environment().out(text, nl=False, color=color)


def parse_request(value: str | None) -> RequestChoice | None:
    """--request WARP[:ITERATION]."""
    if value is None:
        return None
    from ..analysis.analyze import RequestChoice

    warp_text, _, it_text = value.partition(":")
    try:
        return RequestChoice(warp=int(warp_text), iteration=int(it_text) if it_text else 0)
    except ValueError:
        from ..plumbing.errors import shorten

        fail_usage(f"--request expects WARP or WARP:ITERATION (integers), got {shorten(value)!r}")
