"""``shmem analyze`` of several specs: one screen of what was found.

One line says how many specs and accesses were analyzed and how many conflict;
a table lists each access with bank conflicts (its spec, how many ways, its
wavefronts against the ideal, the fix ``--suggest`` finds); then the invalid
specs with their errors, the conflict-free specs by name, and how to see the
bank tables. The full report of every spec is ``--tables``.
"""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..model import Report
from ..plumbing.errors import one_line
from ..plumbing.frozen import frozen
from .options import RenderOptions
from .plain import Block, Cell, Column, Styled, Table, table_width
from .snippet import Sources
from .text import status_text

if TYPE_CHECKING:
    from rich.console import RenderableType

    from ..analysis.suggest import Fix


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "es" if word.endswith("s") else "s")


def _folder(paths: list[str]) -> str:
    """The folder all the paths are in (``access_specs/``), or "" when they share none."""
    folders = {p.rpartition("/")[0] for p in paths}
    if len(folders) != 1 or not next(iter(folders)):
        return ""
    return next(iter(folders)) + "/"


ACCESS_COLUMN = 2
NARROWEST_NAME = 24  # an access name is cut to fit the width, never shorter than this


def _fit(table: Table, width: int) -> None:
    """Cut the access names (with "...") so that the table fits ``width`` columns, as far as
    names of NARROWEST_NAME characters allow (a name is in full in that spec's report)."""
    over = table_width(table) - width
    if over <= 0:
        return
    longest = max(len(str(row[ACCESS_COLUMN])) for row in table.rows)
    keep = max(NARROWEST_NAME, longest - over)
    for row in table.rows:
        name = str(row[ACCESS_COLUMN])
        if len(name) > keep:
            row[ACCESS_COLUMN] = name[: keep - 3] + "..."


def overview_view(
    report: Report,
    fixes: Mapping[str, Mapping[str, Fix]],
    *,
    width: int,
    sources: Sources | None = None,
) -> list[Block]:
    """The overview's blocks (``fixes``: path -> access name -> fix, as --suggest finds;
    ``sources``: the lines of the files the errors name, quoted under them)."""
    valid = [f for f in report.files if f.error is None]
    invalid = [f for f in report.files if f.error is not None]
    conflicted = [f for f in valid if any(not a.cost.conflict_free for a in f.accesses)]
    n_accesses = sum(len(f.accesses) for f in valid)
    n_conflicts = sum(1 for f in valid for a in f.accesses if not a.cost.conflict_free)
    head = Styled(
        f"{_plural(len(report.files), 'spec')}, {_plural(n_accesses, 'access')}: ", "bold"
    )
    if n_conflicts:
        head.append(
            f"{_plural(n_conflicts, 'access')} in {_plural(len(conflicted), 'spec')} "
            "with bank conflicts"
        )
    else:
        head.append("no bank conflicts")
    if invalid:
        head.append(f", {len(invalid)} invalid", "bold red")
    out: list[Block] = [head]
    folder = _folder([f.path for f in report.files])
    if conflicted:
        table = Table(
            [
                Column(f"spec (in {folder})" if folder else "spec"),
                Column(""),
                Column("access"),
                Column("wavefronts", "right"),
                Column("ideal", "right"),
                Column("suggested fix: wavefronts then"),
            ]
        )
        for f in conflicted:
            found = fixes.get(f.path, {})
            first = True
            for acc in f.accesses:
                if acc.cost.conflict_free:
                    continue
                fix = found.get(acc.site.name)
                row: list[Cell] = [
                    Styled(one_line(f.path[len(folder) :]) if first else "", "bold"),
                    status_text(acc.cost),
                    acc.site.name,
                    f"{acc.cost.wavefronts:,}",
                    f"{acc.cost.ideal_wavefronts:,}",
                    Styled(fix.short, "cyan") if fix else Styled("-", "dim"),
                ]
                table.add_row(*row)
                first = False
        _fit(table, width)
        out += [Styled(), table]
    if invalid:
        from .snippet import with_source

        out.append(Styled())
        out += [Styled(with_source(f.error, sources or {}), "bold red") for f in invalid if f.error]
    clean = [one_line(f.path[len(folder) :]) for f in valid if f not in conflicted]
    if clean:
        out.append(Styled())
        text = f"no bank conflicts in {_plural(len(clean), 'spec')}: " + ", ".join(clean)
        text = text.replace(": ", f" (in {folder}): ", 1) if folder else text
        out.append(Styled(textwrap.fill(text, width, break_on_hyphens=False), "green"))
    example = shlex.quote(one_line(conflicted[0].path)) if conflicted else "SPEC"
    tail = (
        f"bank tables and heat maps: shmem analyze {example} (one spec), or add --tables "
        "(every spec); --no-tables lists every access"
    )
    out += [Styled(), Styled(textwrap.fill(tail, width, break_on_hyphens=False), "dim")]
    return out


@frozen
class Overview:
    """Several specs' report drawn as one screen (``shmem analyze DIR``): the report, the
    fixes ``--suggest`` finds and the lines its errors quote. Its JSON is the full report's."""

    report: Report
    fixes: Mapping[str, Mapping[str, Fix]]
    sources: Sources

    def to_json(self) -> dict[str, Any]:
        return self.report.to_json()


def render_overview_text(overview: Overview, options: RenderOptions) -> str:
    from .text import DEFAULT_WIDTH, blocks_text

    columns = options.width or DEFAULT_WIDTH
    view = overview_view(overview.report, overview.fixes, width=columns, sources=overview.sources)
    return blocks_text(view, color=options.color, width=columns)


def overview_renderables(overview: Overview, options: RenderOptions) -> list[RenderableType]:
    from .rich_blocks import to_rich
    from .text import DEFAULT_WIDTH

    view = overview_view(
        overview.report, overview.fixes, width=DEFAULT_WIDTH, sources=overview.sources
    )
    return [to_rich(b) for b in view]
