"""Human output: per-access summaries and bank-occupancy tables, built with rich.

``build_*`` functions return rich renderables (used for the terminal, SVG and
HTML alike); ``render_text`` turns a report into a string.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..engine import RequestDetail
from ..model import AccessResult, FileResult, Report
from .heatmap import heatmap

MAX_ROWS = 16


def degree_style(ways: int) -> str:
    """Color of a bank cell by how many wavefronts that bank is busy in its phase."""
    if ways <= 1:
        return "green"
    if ways == 2:
        return "yellow"
    if ways <= 4:
        return "dark_orange"
    if ways <= 8:
        return "red"
    return "bold magenta"


def compact_lanes(lanes: Iterable[int]) -> str:
    """Lane numbers as short text: ``5``, ``0,16``, ``4-7``, ``0+7`` (first lane and how many more)."""
    ls = sorted(lanes)
    if len(ls) == 1:
        return str(ls[0])
    if ls == list(range(ls[0], ls[-1] + 1)):
        text = f"{ls[0]}-{ls[-1]}"
    elif len(ls) == 2:
        text = f"{ls[0]},{ls[1]}"
    else:
        text = f"{ls[0]}+{len(ls) - 1}"
    return text


def status_text(acc: AccessResult) -> Text:
    if acc.requests == 0:
        return Text("idle", style="dim")
    if acc.conflict_free:
        return Text("ok", style="bold green")
    return Text(f"{acc.max_ways}-way", style="bold " + degree_style(acc.max_ways))


def summary_table(result: FileResult) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col, justify in [
        ("", "left"),
        ("access", "left"),
        ("op", "left"),
        ("requests", "right"),
        ("wavefronts", "right"),
        ("ideal", "right"),
        ("excess", "right"),
        ("ways", "right"),
        ("efficiency", "right"),
        ("cycles", "right"),
    ]:
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for acc in result.accesses:
        table.add_row(
            status_text(acc),
            Text(acc.name),  # not markup: names like tile[ty][tx] contain brackets
            f"{acc.op} {acc.dtype} ({acc.width} B)",
            f"{acc.requests:,}",
            f"{acc.wavefronts:,}",
            f"{acc.ideal_wavefronts:,}",
            Text(f"{acc.excess_wavefronts:,}", style="red" if acc.excess_wavefronts else ""),
            str(acc.max_ways),
            f"{acc.efficiency:.1%}",
            f"~{acc.cycles:,}",
        )
    return table


def bank_table(detail: RequestDetail, *, words: bool = False, max_rows: int = MAX_ROWS) -> Table:
    """Rows are wavefronts, columns the 32 banks; cells list the lanes served."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", padding=(0, 1, 0, 0))
    table.add_column("wf", justify="right", style="dim")
    for b in range(32):
        table.add_column(str(b), justify="center", min_width=2)
    # how many wavefronts each (phase, bank) is busy: the color of its cells
    busy: dict[tuple[int, int], int] = {}
    for w in detail.wavefronts:
        for c in w.cells:
            busy[(w.phase, c.bank)] = busy.get((w.phase, c.bank), 0) + 1
    waves = list(enumerate(detail.wavefronts))
    if len(waves) > max_rows:
        hidden = len(waves) - (max_rows - 1)
        table.caption = f"wavefronts {max_rows - 2}-{len(waves) - 2} not shown ({hidden} rows)"
        waves = waves[: max_rows - 2] + waves[-1:]
    for i, w in waves:
        cells: list[RenderableType] = [""] * 32
        for c in w.cells:
            label = compact_lanes(c.lanes)
            if words:
                label += f"\n@{c.word}"
            cells[c.bank] = Text(label, style=degree_style(busy[(w.phase, c.bank)]))
        name = str(i) if detail.phases == 1 else f"{i} p{w.phase}"
        table.add_row(name, *cells)
    return table


def legend() -> Text:
    text = Text("cells: lanes served (a-b range, a,b pair, a+n: lane a and n more); color: ")
    for label, ways in [("1 wavefront", 1), ("2", 2), ("3-4", 4), ("5-8", 8), (">8", 9)]:
        text.append(f"{label} ", style=degree_style(ways))
    text.append("per bank in its phase", style="dim")
    return text


def describe_request(acc: AccessResult) -> Text:
    assert acc.shown is not None and acc.detail is not None
    d = acc.detail
    ref = acc.shown
    text = Text()
    text.append(f"{ref.describe()}: ", style="bold")
    text.append(f"{ref.wavefronts} wavefront(s), ideal {ref.ideal}, worst bank {ref.ways}-way")
    if d.phases > 1 or acc.width > 4:
        matrix = acc.op in ("ldmatrix", "stmatrix")
        kind = ("matrix" if matrix else "phase") if d.phases == 1 else ("matrices" if matrix else "phases")
        text.append(f"; {d.phases} {kind} of {d.lanes_per_phase} lanes", style="dim")
        if d.merged_pairs:
            text.append(" (lane pairs share addresses: two lanes per return slot)", style="dim")
    return text


def access_block(
    acc: AccessResult,
    *,
    words: bool = False,
    hint: str | None = None,
    table: bool = True,
    heat: bool = False,
) -> RenderableType:
    parts: list[RenderableType] = []
    head = Text()
    head.append(acc.name, style="bold")
    where = f"  line {acc.line}" if acc.line else ""
    head.append(f"  {acc.op} {acc.array} ({acc.dtype}){where}", style="dim")
    if acc.loops:
        head.append("  loop " + ", ".join(acc.loops), style="dim")
    parts.append(head)
    if table and acc.shown is not None and acc.detail is not None:
        parts.append(describe_request(acc))
        parts.append(bank_table(acc.detail, words=words))
    if heat and (grid := heatmap(acc)) is not None:
        parts.append(grid)
    if hint:
        parts.append(Text(f"hint: {hint}", style="cyan"))
    return Group(*parts)


def file_block(
    result: FileResult,
    *,
    words: bool = False,
    tables: bool = True,
    heat: bool = False,
    hints: Mapping[str, str] | None = None,
) -> RenderableType:
    title = Text()
    title.append(result.path, style="bold underline")
    if result.name and result.name != result.path:
        title.append(f"  {result.name}", style="bold")
    if result.error is not None:
        return Group(title, Text(result.error.render(), style="bold red"))
    if result.block:
        x, y, z = result.block
        title.append(f"  block {x}x{y}x{z}, {result.smem_bytes:,} B shared", style="dim")
    parts: list[RenderableType] = [title, summary_table(result)]
    for acc in result.accesses:
        hint = (hints or {}).get(acc.name)
        if tables or hint or (heat and heatmap(acc) is not None):
            parts.append(Text(""))
            parts.append(access_block(acc, words=words, hint=hint, table=tables, heat=heat))
    return Group(*parts)


def report_renderables(
    report: Report,
    *,
    words: bool = False,
    tables: bool = True,
    heat: bool = False,
    hints: Mapping[str, Mapping[str, str]] | None = None,
) -> list[RenderableType]:
    """The whole report as renderables (terminal, SVG and HTML); ``heat`` adds heat maps,
    ``hints`` (file path -> access name -> text) a hint line under those accesses."""
    out: list[RenderableType] = []
    for i, f in enumerate(report.files):
        if i:
            out.append(Text(""))
        out.append(file_block(f, words=words, tables=tables, heat=heat, hints=(hints or {}).get(f.path)))
    if any(f.accesses and f.accesses[0].detail for f in report.files) and tables:
        out.append(Text(""))
        out.append(legend())
    n_err = sum(1 for f in report.files if f.error)
    n_acc = sum(len(f.accesses) for f in report.files)
    n_conf = sum(1 for f in report.files for a in f.accesses if not a.conflict_free)
    tail = Text(f"{len(report.files)} file(s), {n_acc} access(es), {n_conf} with bank conflicts")
    if n_err:
        tail.append(f", {n_err} invalid", style="bold red")
    out.append(tail)
    return out


def make_console(color: bool, width: int | None = None) -> Console:
    return Console(
        file=io.StringIO(),
        force_terminal=color,
        no_color=not color,
        color_system="truecolor" if color else None,
        width=width or 200,
        highlight=False,
        emoji=False,
        legacy_windows=False,
    )


def to_string(renderables: Iterable[RenderableType], *, color: bool, width: int | None = None) -> str:
    console = make_console(color, width)
    for r in renderables:
        console.print(r)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    return str(out)


def render_text(
    report: Report,
    *,
    color: bool = False,
    width: int | None = None,
    words: bool = False,
    tables: bool = True,
    heat: bool = False,
    hints: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    renderables = report_renderables(report, words=words, tables=tables, heat=heat, hints=hints)
    return to_string(renderables, color=color, width=width)
