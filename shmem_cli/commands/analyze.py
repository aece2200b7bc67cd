"""``shmem analyze``: costs, bank tables and heat maps of every access of spec files."""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

import click

from .common import (
    CONTEXT,
    ExitCode,
    ShmemCommand,
    emit_report,
    fail_usage,
    output_options,
    parse_request,
    picture_options,
    pictures,
    report_format_names,
    report_options,
    require_specs,
    table_options,
    write_pictures,
)
from .environment import Environment, current_environment

if TYPE_CHECKING:
    from ..model import Report
    from ..render.overview import Overview
    from ..render.snippet import Sources


def parse_rows(value: str) -> int | None:
    """--rows N or all (None: every row)."""
    if value == "all":
        return None
    try:
        rows = int(value)
    except ValueError:
        rows = 0
    from ..plumbing.errors import shorten

    if rows < 3:
        fail_usage(f"--rows expects a number of rows (3 or more) or 'all', got {shorten(value)!r}")
    return rows


@click.command(
    cls=ShmemCommand,
    context_settings=CONTEXT,
    short_help="Costs, bank tables and heat maps of every access of spec files.",
)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@output_options(report_format_names)
@click.option(
    "--request",
    "request",
    metavar="WARP[:ITER]",
    help="Show the bank table of this request (warp, flat loop-iteration index) "
    "instead of the worst one.",
)
@click.option(
    "--tables",
    is_flag=True,
    help="The full report of every spec, also when several are analyzed: summaries, bank "
    "tables and heat maps (the default for one spec).",
)
@table_options("access", "iteration")
@picture_options
@click.option(
    "--suggest",
    is_flag=True,
    help="Under each access with bank conflicts, a hint: the cheapest fix found among pads "
    "0..32 of its array crossed with the swizzles none/32B/64B/128B (and a CuTe "
    "Swizzle<3,4,S> for long power-of-two rows), and the XOR swizzle synthesized for the "
    "array (text output only).",
)
def analyze(
    paths: tuple[str, ...],
    fmt: str,
    output: str | None,
    no_color: bool,
    request: str | None,
    words: bool,
    tables: bool,
    no_tables: bool,
    rows: str,
    width: int | None,
    heatmap: bool | None,
    suggest: bool,
) -> None:
    """Analyze the shared-memory accesses of spec files and directories (PATHS).

    For every spec, a summary table with one row per access: its verdict (ok,
    the worst conflict, or ok* for no bank conflict but an excess), its warp-level
    requests, wavefronts (totals over all warps and loop iterations), the ideal
    wavefronts (Nsight's: the same requests without bank conflicts, their active
    lanes packed), the excess, the worst conflict (ways: the most distinct words
    one bank must deliver in a phase) and the bandwidth efficiency (ideal /
    wavefronts); a cycle estimate
    too where it differs from the wavefronts (a 16-byte access whose quarter-warp
    phases have no active lane still takes a cycle for each). With --format json
    each access has the verdict as "verdict": "ok", "ok*", "conflict" (max_ways
    is its degree) or "idle".

    Under it, for every access, a bank table of its worst request (or of the one
    chosen with --request): one row per wavefront, one column per bank 0-31, in
    each cell the lanes that bank serves (a-b: a range, a,b: two lanes, a+n:
    lane a and n more), colored by how many wavefronts that bank is busy in its
    phase. Accesses with several requests that conflict also get a heat map:
    warps across, loop iterations down, in each cell the wavefronts of one
    request ('.' without a bank conflict: no more than its phases with an active
    lane), so that a conflict that
    only hits some iterations or some warps stands out.

    With several specs (a directory, or more than one file) the text output is
    an overview instead, one screen: each access with bank conflicts, its
    wavefronts against the ideal and the fix --suggest finds, then the invalid
    and the conflict-free specs. --tables gives the full report of every spec,
    --no-tables every access's summary row; --request, --words, --rows and
    --heatmap ask for the full report too.

    Directories are searched recursively for *.yaml and *.yml (regular files,
    no link out of the folder or to a folder; a name skipped is said on standard
    error; a folder of more than 200,000 names or 10,000 specs is an error);
    '-' reads one spec from standard input. A bad spec is reported at file:line:column and the
    others are still analyzed. Colors are used on a terminal only (never with
    --no-color or NO_COLOR set); --svg and --html save the colored report as a
    picture or a web page in addition to the normal output.

    Exit status: 0 when every spec was analyzed, 2 when an argument or any spec
    was invalid.

    \b
    Examples:
      shmem examples --copy access_specs    # the specs used below, in ./access_specs/
      shmem analyze access_specs/transpose_naive.yaml
      shmem analyze access_specs/
      shmem analyze access_specs/ --no-tables
      shmem analyze access_specs/column_read_32x32.yaml access_specs/column_read_32x33.yaml --tables
      shmem analyze access_specs/transpose_naive.yaml --request 3:1 --words
      shmem analyze access_specs/reduction_interleaved.yaml --no-tables --heatmap
      shmem analyze access_specs/transpose_naive.yaml --suggest
      shmem analyze access_specs/column_read_32x32.yaml --svg column_read.svg
      shmem analyze access_specs/ --format json -o report.json
    """
    from ..analysis.analyze import analyze_many
    from ..spec.source import error_sources

    env = current_environment()
    found = require_specs(paths, "analyze")
    from ..plumbing.fsutil import check_outputs

    check_outputs((output, *pictures().values()), paths)
    if tables and no_tables:
        fail_usage("--tables and --no-tables exclude each other")
    max_rows = parse_rows(rows)
    from .lint import source_roots

    roots = functools.cache(source_roots)  # [tool.shmem] read where a spec has a kernel
    report = analyze_many(found, choice=parse_request(request), roots=roots)
    title = " ".join(["shmem analyze", *paths])
    sources = error_sources(*(f.error for f in report.files))
    detail = tables or no_tables or request or words or heatmap is not None or rows != "16"
    shown: Report | Overview = report
    hints: dict[str, dict[str, str]] = {}
    if len(report.files) > 1 and not detail and (fmt == "text" or pictures()):
        from ..analysis.suggest import report_fixes
        from ..render.overview import Overview

        shown = Overview(report, report_fixes(report), sources)
    elif suggest and (fmt == "text" or pictures()):
        from ..analysis.suggest import suggest_report

        hints = suggest_report(report)
    options = report_options(
        env,
        fmt=fmt,
        no_color=no_color,
        output=output,
        width=width,
        words=words,
        no_tables=no_tables,
        heatmap=heatmap,
        rows=max_rows,
        hints=hints,
        sources=sources,
    )
    emit_report(shown, options, fmt=fmt, output=output, title=title)
    write_pictures(shown, dataclasses.replace(options, width=None), title=title)
    if report.has_errors:
        _errors_to_stderr(env, report, sources, shown=fmt == "text" and output is None)
        raise SystemExit(ExitCode.USAGE)


def _errors_to_stderr(env: Environment, report: Report, sources: Sources, *, shown: bool) -> None:
    """The errors once more on standard error, one unwrapped file:line:column line each
    (and the source line it points at, with a caret), unless the reader already saw them:
    the text report went to a terminal, or to the very file or pipe standard error goes
    to (``2>&1``)."""
    if shown and (env.stdout_isatty or env.stderr_is_stdout):
        return
    from ..render.snippet import with_source

    for f in report.files:
        if f.error is not None:
            env.err(with_source(f.error, sources))
