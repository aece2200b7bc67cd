"""The command line: argument parsing, I/O and exit codes only.

Every command reads specs through :mod:`shmem_cli.analysis`, builds the result
model and hands it to a renderer. Heavy modules (numpy, rich, lark, jsonschema)
are imported inside the commands so that ``shmem --version`` stays fast.
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from . import __version__

if TYPE_CHECKING:
    from .errors import ShmemError

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(enum.IntEnum):
    """Exit statuses, the same for every command."""

    OK = 0
    FINDINGS = 1  # lint findings at or above --fail-on, verify mismatches
    USAGE = 2  # bad arguments, unreadable or invalid specs


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def want_color(no_color: bool, stream: Any = None) -> bool:
    """Color only on a terminal, and never with --no-color or NO_COLOR set."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


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


def text_width(width: int | None, color: bool) -> int | None:
    """--width if given, else the terminal's width when printing to it in color.

    None leaves the width to the renderer (200 columns for plain text).
    """
    if width is not None or not color:
        return width
    import shutil  # only here: it pulls in the compression modules

    return shutil.get_terminal_size().columns


def emit(text: str, output: str | None, color: bool | None = None) -> None:
    """Write a rendered report to ``output`` (atomically) or standard output.

    ``color=True`` keeps ANSI codes even when standard output is a pipe (the
    renderer only emits them when color was asked for: FORCE_COLOR, a terminal).
    """
    if output:
        from .fsutil import write_atomic

        write_atomic(output, text)
    else:
        click.echo(text, nl=False, color=color)


def fail_usage(message: str) -> NoReturn:
    """A bad argument: ``shmem: error: message`` on standard error, exit status 2."""
    click.echo(f"shmem: error: {message}", err=True)
    sys.exit(ExitCode.USAGE)


def fail_input(err: ShmemError) -> NoReturn:
    """Bad input: ``file:line:column: error: message`` on standard error, exit status 2."""
    click.echo(err.render(), err=True)
    sys.exit(ExitCode.USAGE)


def parse_request(value: str | None) -> Any:
    if value is None:
        return None
    from .analysis import RequestChoice

    warp_text, _, it_text = value.partition(":")
    try:
        return RequestChoice(warp=int(warp_text), iteration=int(it_text) if it_text else 0)
    except ValueError:
        fail_usage(f"--request expects WARP or WARP:ITERATION (integers), got {value!r}")


# name -> "module:attribute" of commands loaded on first use (keeps start-up fast)
LAZY_COMMANDS: dict[str, str] = {
    "sweep": "shmem_cli.commands.sweep:sweep",
    "lint": "shmem_cli.commands.lint:lint",
    "rules": "shmem_cli.commands.lint:rules",
    "verify": "shmem_cli.commands.verify:verify",
}


class LazyGroup(click.Group):
    """A click group whose listed subcommands are imported only when invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._available()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in self._available():
            return found
        import importlib

        module_name, attr = LAZY_COMMANDS[cmd_name].split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command

    @staticmethod
    def _available() -> list[str]:
        import importlib.util

        return [
            name
            for name, target in LAZY_COMMANDS.items()
            if importlib.util.find_spec(target.split(":")[0]) is not None
        ]


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="shmem")
def main() -> None:
    """shmem: exact shared-memory bank-conflict analysis for CUDA kernels, without a GPU.

    Describe a kernel's shared-memory accesses in a YAML access spec (arrays with
    their element type, shape, padding and swizzle; accesses with their index
    expressions over threadIdx, loops and predicates: see docs/tutorial.md, the
    examples in access_specs/ and `shmem schema`). shmem computes every warp's
    byte addresses, the banks they hit and the wavefronts (passes of the
    shared-memory pipe) each warp instruction costs, with the rules measured on
    an NVIDIA H200 (docs/hardware-model.md).

    \b
    Examples:
      shmem analyze access_specs/column_read_32x32.yaml
      shmem analyze access_specs/ --format json
      shmem sweep access_specs/transpose_naive.yaml --pad 0..4
      shmem lint access_specs/ --format sarif -o shmem.sarif

    Every command exits with 0 on success, 1 when it found what it checks for
    (lint findings, verify mismatches) and 2 on bad arguments or invalid specs.
    Run `shmem COMMAND --help` for a command's options.

    Shell completion (bash): eval "$(_SHMEM_COMPLETE=bash_source shmem)";
    zsh: eval "$(_SHMEM_COMPLETE=zsh_source shmem)";
    fish: _SHMEM_COMPLETE=fish_source shmem | source.
    """


@main.command(
    context_settings=CONTEXT,
    short_help="Costs, bank tables and heat maps of every access of spec files.",
)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@output_options(("text", "json"))
@click.option(
    "--request",
    "request",
    metavar="WARP[:ITER]",
    help="Show the bank table of this request (warp, flat loop-iteration index) "
    "instead of the worst one.",
)
@click.option(
    "--words", is_flag=True, help="Show the word index under each lane list in bank tables."
)
@click.option("--no-tables", is_flag=True, help="Only the summaries, no bank tables.")
@click.option(
    "--width", type=click.IntRange(60, 1000), help="Text width (default: terminal width or 200)."
)
@click.option(
    "--heatmap/--no-heatmap",
    default=None,
    help="Under each conflicting access with several requests, a warp x iteration map of the "
    "wavefronts of every request (default: on, off with --no-tables).",
)
@click.option(
    "--svg",
    "svg_path",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Also write the text report, in color, as an SVG picture to FILE.",
)
@click.option(
    "--html",
    "html_path",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Also write the text report, in color, as a standalone HTML page to FILE.",
)
@click.option(
    "--suggest",
    is_flag=True,
    help="Under each access with bank conflicts, a one-line hint: the cheapest fix found among "
    "pads 0..32 and swizzles none/32B/64B/128B of its array (text output).",
)
def analyze(
    paths: tuple[str, ...],
    fmt: str,
    output: str | None,
    no_color: bool,
    request: str | None,
    words: bool,
    no_tables: bool,
    width: int | None,
    heatmap: bool | None,
    svg_path: str | None,
    html_path: str | None,
    suggest: bool,
) -> None:
    """Analyze the shared-memory accesses of spec files and directories (PATHS).

    For every spec, a summary table with one row per access: its warp-level
    requests, wavefronts (totals over all warps and loop iterations), the ideal
    wavefronts (the same requests without bank conflicts), the excess, the
    worst conflict (ways: the most distinct words one bank must deliver in a
    phase), the bandwidth efficiency (ideal / wavefronts) and a cycle estimate.

    Under it, for every access, a bank table of its worst request (or of the one
    chosen with --request): one row per wavefront, one column per bank 0-31, in
    each cell the lanes that bank serves (a-b: a range, a,b: two lanes, a+n:
    lane a and n more), colored by how many wavefronts that bank is busy in its
    phase. Accesses with several requests that conflict also get a heat map:
    warps across, loop iterations down, in each cell the wavefronts of one
    request ('.' when it costs no more than the ideal), so that a conflict that
    only hits some iterations or some warps stands out.

    Directories are searched recursively for *.yaml and *.yml. A bad spec is
    reported at file:line:column and the others are still analyzed. Colors are
    used on a terminal only (never with --no-color or NO_COLOR set); --svg and
    --html save the colored report as a picture or a web page in addition to
    the normal output.

    Exit status: 0 when every spec was analyzed, 2 when an argument or any spec
    was invalid.

    \b
    Examples:
      shmem analyze access_specs/transpose_naive.yaml
      shmem analyze access_specs/ --no-tables
      shmem analyze spec.yaml --request 3:1 --words
      shmem analyze access_specs/reduction_interleaved.yaml --no-tables --heatmap
      shmem analyze access_specs/transpose_naive.yaml --suggest
      shmem analyze access_specs/column_read_32x32.yaml --svg column_read.svg
      shmem analyze access_specs/ --format json -o report.json
    """
    from .analysis import analyze_many, collect_specs

    for p in paths:
        if not os.path.exists(p):
            fail_usage(f"no such file or directory: {p}")
    if not collect_specs(paths):
        fail_usage("no *.yaml or *.yml spec files found in " + ", ".join(paths))
    report = analyze_many(paths, choice=parse_request(request))
    heat = heatmap if heatmap is not None else not no_tables
    hints = None
    if suggest and (fmt == "text" or svg_path or html_path):
        from .sweep import suggest_report

        hints = suggest_report(report)
    color = False
    if fmt == "json":
        from .render.json_out import render_json

        text = render_json(report)
    else:
        from .render.text import render_text

        color = want_color(no_color) and output is None
        text = render_text(
            report,
            color=color,
            width=text_width(width, color),
            words=words,
            tables=not no_tables,
            heat=heat,
            hints=hints,
        )
    emit(text, output, color=color)
    if svg_path or html_path:
        from .fsutil import write_atomic
        from .render.export import report_html, report_svg

        title = " ".join(["shmem analyze", *paths])
        for path, export in ((svg_path, report_svg), (html_path, report_html)):
            if path:
                picture = export(
                    report,
                    title=title,
                    width=width,
                    words=words,
                    tables=not no_tables,
                    heat=heat,
                    hints=hints,
                )
                write_atomic(path, picture)
    if report.has_errors:
        # on a terminal the report already shows the errors; otherwise (a pipe, a file,
        # JSON) standard error gets them too, one unwrapped file:line:column line each
        already_shown = fmt == "text" and output is None and sys.stdout.isatty()
        for f in report.files if not already_shown else ():
            if f.error is not None:
                click.echo(f.error.render(), err=True)
        sys.exit(ExitCode.USAGE)


@main.command(
    context_settings=CONTEXT, short_help="Print the JSON Schema of the access-spec format."
)
def schema() -> None:
    """Print the JSON Schema (draft-07) of the access-spec format.

    The schema lists every key of a spec (name, block, params, arch, expect,
    arrays with dtype/shape/pad/offset/swizzle, accesses with
    array/op/index/loop/when/atomic/matrices/trans/expect), its type and what
    it means. Editors that understand JSON Schema use it to complete and check
    specs as you type. shmem itself checks every spec against it and reports a
    violation at its file:line:column.

    Exit status: 0.

    \b
    Examples:
      shmem schema > shmem-spec.schema.json
      # then, first line of a spec, for the YAML language server:
      # yaml-language-server: $schema=shmem-spec.schema.json
    """
    import json

    from .source import schema as load_schema

    click.echo(json.dumps(load_schema(), indent=2))


if __name__ == "__main__":  # pragma: no cover
    main()
