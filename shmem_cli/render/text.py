"""Human output: per-access summaries, bank-occupancy tables and heat maps.

The report's view is built once, as blocks (:mod:`shmem_cli.render.plain`:
styled lines and tables, every piece of text with its rich style).
``render_text`` lays them out as plain text itself when there is no color, and
otherwise (a terminal) through rich; ``report_renderables`` gives the rich
renderables for the terminal, SVG and HTML alike. rich is imported only then.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..hardware import ops
from ..model import CONFLICT, IDLE, SPLIT, Cost, FileResult, Report, RequestDetail, SiteCost, Totals
from ..plumbing.errors import one_line
from .options import DEFAULT_ROWS, RenderOptions
from .plain import (
    MAX_DRAWN_LINES,
    Block,
    Cell,
    Column,
    Justify,
    Styled,
    Table,
    layout,
    lines_of,
    table_width,
)
from .rich_blocks import to_rich

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

DEFAULT_WIDTH = 200  # columns of text when not on a terminal


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
    """Lane numbers as short text: ``5``, ``0,16``, ``4-7``, ``0+7`` (lane 0 and 7 more)."""
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


#: what the verdict ``ok*`` (an access without bank conflicts that costs more than its ideal)
#: means, under every table that shows it
SPLIT_NOTE = (
    f"{SPLIT}: no bank conflict; the excess is the phases themselves (an 8- or 16-byte "
    "access's few active lanes spread over more phases than their bytes need; "
    "docs/hardware-model.md section 8)"
)
#: the mark of a sweep's best variant (its row and the line naming it): a word, never ``*``,
#: which access columns show in ``ok*``
BEST_MARK = "best"


def status_text(cost: Totals) -> Styled:
    """The verdict: ``idle``, ``ok``, ``ok*`` (:data:`SPLIT_NOTE`) or the worst bank's ways."""
    if cost.verdict == IDLE:
        return Styled(IDLE, "dim")
    return Styled(verdict_word(cost), "bold " + verdict_color(cost))


def verdict_color(cost: Totals) -> str:
    """The color of a verdict: green without bank conflicts, else the worst conflict's."""
    return "green" if cost.conflict_free else degree_style(cost.max_ways)


def excess_color(cost: Totals) -> str:
    """The color of an excess over the ideal: red with bank conflicts, yellow without
    (``ok*``), none at the ideal."""
    return "" if cost.excess_wavefronts <= 0 else "yellow" if cost.conflict_free else "red"


def excess_cell(cost: Totals) -> Styled:
    """The excess over the ideal, in :func:`excess_color`."""
    return Styled(f"{cost.excess_wavefronts:,}", excess_color(cost))


def verdict_word(cost: Totals) -> str:
    """The model's verdict (:attr:`~shmem_cli.model.Totals.verdict`) as the tables show it:
    ``ok``, ``ok*`` (no bank conflict, an excess: :data:`SPLIT_NOTE`), ``idle``, or a bank
    conflict as ``N-way`` (its worst bank's degree)."""
    verdict = cost.verdict
    return f"{cost.max_ways}-way" if verdict == CONFLICT else verdict


def any_split(costs: Iterable[Totals]) -> bool:
    """Whether some of ``costs`` has the verdict ``ok*`` (then :data:`SPLIT_NOTE` goes under
    the table that shows it)."""
    return any(c.verdict == SPLIT for c in costs)


def split_note(costs: Iterable[Totals]) -> list[Block]:
    """:data:`SPLIT_NOTE`, when some of ``costs`` has the verdict ``ok*`` (else nothing)."""
    return [Styled(SPLIT_NOTE, "dim")] if any_split(costs) else []


SUMMARY_COLUMNS: tuple[tuple[str, Justify], ...] = (
    ("", "left"),
    ("access", "left"),
    ("op", "left"),
    ("requests", "right"),
    ("wavefronts", "right"),
    ("ideal", "right"),
    ("excess", "right"),
    ("ways", "right"),
    ("efficiency", "right"),
)
#: why a cycle estimate can differ from the wavefronts (the only case: docs/hardware-model.md)
CYCLES_NOTE = (
    "cycles: a 16-byte access takes a cycle for each of its quarter-warp phases, "
    "even one without an active lane; elsewhere cycles = wavefronts"
)


def cycles_differ(result: FileResult) -> bool:
    """Whether a cycle estimate of the file differs from its wavefronts (then it is shown)."""
    return any(acc.cost.cycles != acc.cost.wavefronts for acc in result.accesses)


def summary_table(result: FileResult) -> Table:
    """One row per access; the ``cycles`` column only when some access's cycle estimate
    differs from its wavefronts (else it would repeat them)."""
    titles = list(SUMMARY_COLUMNS)
    with_cycles = cycles_differ(result)
    if with_cycles:
        titles.append(("cycles", "right"))
    table = Table([Column(title, justify, keep=not title) for title, justify in titles])
    for acc in result.accesses:
        cells: list[Cell] = [
            status_text(acc.cost),
            Styled(acc.site.name),
            f"{acc.cost.op} {acc.site.dtype} ({acc.cost.width} B)",
            f"{acc.cost.requests:,}",
            f"{acc.cost.wavefronts:,}",
            f"{acc.cost.ideal_wavefronts:,}",
            excess_cell(acc.cost),
            str(acc.cost.max_ways),
            f"{acc.cost.efficiency:.1%}",
        ]
        if with_cycles:
            cells.append(f"~{acc.cost.cycles:,}")
        table.add_row(*cells)
    return table


def bank_table(
    detail: RequestDetail,
    *,
    words: bool = False,
    max_rows: int | None = DEFAULT_ROWS,
    banks: range | None = None,
) -> Table:
    """Rows are wavefronts, columns the banks (all, or those of ``banks``); cells list the
    lanes served.

    With more than ``max_rows`` wavefronts (None: no limit) the middle ones are left
    out, and the caption says which."""
    shown = banks if banks is not None else range(detail.banks)
    columns = [Column("wf", "right", style="dim")]
    columns += [Column(str(b), "center", min_width=2) for b in shown]
    table = Table(columns, pad_left=0, pad_right=1)
    # how many wavefronts each (phase, bank) is busy: the color of its cells
    busy: dict[tuple[int, int], int] = {}
    for w in detail.wavefronts:
        for c in w.cells:
            busy[(w.phase, c.bank)] = busy.get((w.phase, c.bank), 0) + 1
    waves = list(enumerate(detail.wavefronts))
    if max_rows is not None and len(waves) > max(max_rows, 3):
        max_rows = max(max_rows, 3)
        hidden = len(waves) - (max_rows - 1)
        table.caption = (
            f"wavefronts {max_rows - 2}-{len(waves) - 2} not shown ({hidden} rows; --rows all)"
        )
        waves = waves[: max_rows - 2] + waves[-1:]
    for i, w in waves:
        cells: list[Cell] = [""] * len(shown)
        for c in w.cells:
            if c.bank not in shown:
                continue
            label = compact_lanes(c.lanes)
            if words:
                label += f"\n@{c.word}"
            cells[c.bank - shown.start] = Styled(label, degree_style(busy[(w.phase, c.bank)]))
        name = str(i) if detail.phases == 1 else f"{i} p{w.phase}"
        table.add_row(name, *cells)
    return table


def bank_tables(
    detail: RequestDetail,
    *,
    words: bool = False,
    max_rows: int | None = DEFAULT_ROWS,
    width: int | None = None,
) -> list[Block]:
    """The bank table; folded into stacked tables of half, a quarter or an eighth of the
    banks when ``width`` columns cannot hold every bank side by side (None: never fold).

    A folded table keeps every bank and every lane and says that it is folded: a bank
    is never left out for want of room."""
    whole = bank_table(detail, words=words, max_rows=max_rows)
    if width is None or table_width(whole) <= width:
        return [whole]
    n = detail.banks
    parts: list[Table] = []
    for size in (n // 2, n // 4, n // 8):
        size = max(size, 1)
        parts = [
            bank_table(detail, words=words, max_rows=max_rows, banks=range(b, min(b + size, n)))
            for b in range(0, n, size)
        ]
        if all(table_width(t) <= width for t in parts):
            break
    for t in parts[:-1]:
        t.caption = ""  # the rows left out are said once, under the last part
    note = Styled(
        f"(the {n} banks in {len(parts)} tables of {n // len(parts)}, to fit {width} columns)",
        "dim",
    )
    return [note, *parts]


def legend() -> Styled:
    text = Styled("cells: lanes served (a-b range, a,b pair, a+n: lane a and n more); color: ")
    for label, ways in [("1 wavefront", 1), ("2", 2), ("3-4", 4), ("5-8", 8), (">8", 9)]:
        text.append(f"{label} ", degree_style(ways))
    text.append("per bank in its phase", "dim")
    return text


def describe_request(cost: Cost) -> Styled:
    assert cost.shown is not None and cost.detail is not None
    d = cost.detail
    ref = cost.shown
    text = Styled()
    text.append(f"{ref.describe()}: ", "bold")
    text.append(f"{ref.wavefronts} wavefront(s), ideal {ref.ideal}, worst bank {ref.ways}-way")
    if d.phases > 1 or cost.width > 4:
        word = ops.get(cost.op).phase_word
        kind = word if d.phases == 1 else {"matrix": "matrices", "phase": "phases"}[word]
        text.append(f"; {d.phases} {kind} of {d.lanes_per_phase} lanes", "dim")
        if d.merged_pairs:
            text.append(" (lane pairs share addresses: two lanes per return slot)", "dim")
    return text


def access_block(
    acc: SiteCost,
    options: RenderOptions,
    *,
    hint: str | None = None,
    heat: list[Block] | None = None,
) -> list[Block]:
    """The blocks under the summary for one access: its name, the bank table of the
    request shown, the heat map blocks ``heat`` and the hint."""
    head = Styled()
    head.append(acc.site.name, "bold")
    where = f"  line {acc.site.line}" if acc.site.line else ""
    head.append(f"  {acc.site.label(acc.cost.op)}{where}", "dim")
    if acc.site.loops:
        head.append("  loop " + ", ".join(acc.site.loops), "dim")
    parts: list[Block] = [head]
    if options.tables and acc.cost.shown is not None and acc.cost.detail is not None:
        parts.append(describe_request(acc.cost))
        parts.extend(
            bank_tables(
                acc.cost.detail, words=options.words, max_rows=options.rows, width=options.width
            )
        )
    parts.extend(heat or ())
    if hint:
        parts.append(Styled(f"hint: {hint}", "cyan"))
    return parts


def file_block(result: FileResult, options: RenderOptions) -> list[Block]:
    title = Styled()
    title.append(one_line(result.path), "bold underline")
    if result.name and result.name != result.path:
        title.append(f"  {result.name}", "bold")
    if result.error is not None:
        from .snippet import with_source

        return [title, Styled(with_source(result.error, options.sources), "bold red")]
    if result.block:
        x, y, z = result.block
        title.append(f"  block {x}x{y}x{z}, {result.smem_bytes:,} B shared", "dim")
    parts: list[Block] = [title, summary_table(result)]
    parts += split_note(acc.cost for acc in result.accesses)
    if cycles_differ(result):
        parts.append(Styled(CYCLES_NOTE, "dim"))
    hints: Mapping[str, str] = options.hints.get(result.path, {})
    for acc in result.accesses:
        hint = hints.get(acc.site.name)
        grid = _heatmap(acc) if options.heat else None
        if options.tables or hint or grid:
            parts.append(Styled())
            parts.extend(access_block(acc, options, hint=hint, heat=grid))
    return parts


def _heatmap(acc: SiteCost) -> list[Block] | None:
    from .heatmap import heatmap

    return heatmap(acc)


def report_view(report: Report, options: RenderOptions | None = None) -> list[Block]:
    """The whole report as blocks, drawn as ``options`` say (the defaults if None)."""
    options = options or RenderOptions()
    out: list[Block] = []
    for i, f in enumerate(report.files):
        if i:
            out.append(Styled())
        out.extend(file_block(f, options))
    if any(f.accesses and f.accesses[0].cost.detail for f in report.files) and options.tables:
        out.append(Styled())
        out.append(legend())
    n_err = sum(1 for f in report.files if f.error)
    n_acc = sum(len(f.accesses) for f in report.files)
    n_conf = sum(1 for f in report.files for a in f.accesses if not a.cost.conflict_free)
    tail = Styled(f"{len(report.files)} file(s), {n_acc} access(es), {n_conf} with bank conflicts")
    if n_err:
        tail.append(f", {n_err} invalid", "bold red")
    out.append(tail)
    out.extend(Styled(f"hint: {note}", "cyan") for note in options.notes)
    return out


def report_renderables(
    report: Report, options: RenderOptions | None = None
) -> list[RenderableType]:
    """The whole report as rich renderables (terminal, SVG and HTML); see ``report_view``."""
    return [to_rich(b) for b in report_view(report, options)]


def make_console(color: bool, width: int | None = None) -> Console:
    from rich.console import Console

    return Console(
        file=io.StringIO(),
        force_terminal=color,
        no_color=not color,
        color_system="truecolor" if color else None,
        width=width or DEFAULT_WIDTH,
        highlight=False,
        emoji=False,
        legacy_windows=False,
    )


def to_string(
    renderables: Iterable[RenderableType], *, color: bool, width: int | None = None
) -> str:
    console = make_console(color, width)
    for r in renderables:
        console.print(r)
    out = str(console.file.getvalue())  # type: ignore[attr-defined]
    if color:
        return out
    # without color, rich pads lines to the width: piped text ends each line at its last character
    return "".join(line.rstrip() + "\n" for line in out.splitlines())


def render_text(report: Report, options: RenderOptions | None = None) -> str:
    """The report as text: plain without rich when possible, through rich for color
    (and for the rare plain report whose lines rich would have to wrap)."""
    options = options or RenderOptions()
    if options.width is None:  # the width the text is laid out in: tables fold to fit it
        options = dataclasses.replace(options, width=DEFAULT_WIDTH)
    return blocks_text(report_view(report, options), color=options.color, width=options.width)


def blocks_text(view: list[Block], *, color: bool, width: int | None) -> str:
    """Blocks as text in ``width`` columns (None: 200): plain without rich when possible; a
    view of more than :data:`~.plain.MAX_DRAWN_LINES` lines plain in color too, unfolded
    (the terminal wraps a line wider than itself) where the width would fold it, and with
    its non-ASCII characters (a wide one shifts its row) where it holds them."""
    long = lines_of(view) > MAX_DRAWN_LINES
    if not color or long:
        plain = layout(view, width or DEFAULT_WIDTH)
        if plain is None and long:  # rich would fold it, or measure its wide characters
            plain = layout(view, _UNFOLDED, ascii_only=False)
        if plain is not None:
            return plain
    return to_string([to_rich(b) for b in view], color=color, width=width)


#: a width no line of a report reaches: a long report laid out without folding
_UNFOLDED = 1 << 20
