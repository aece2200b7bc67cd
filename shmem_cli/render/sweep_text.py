"""Sweep results as text: one row per variant, the best one marked."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..analysis.sweep import AccessTotals, SweepResult, VariantResult
from ..model import IDLE
from ..plumbing.errors import one_line
from .options import RenderOptions
from .plain import visible
from .text import (
    BEST_MARK,
    CYCLES_NOTE,
    SPLIT_NOTE,
    any_split,
    degree_style,
    excess_color,
    to_string,
    verdict_color,
    verdict_word,
)

NOTE_WIDTH = 60


def _access_cell(a: AccessTotals) -> Text:
    t = a.totals
    if t.verdict == IDLE:
        return Text(IDLE, style="dim")
    return Text(f"{t.wavefronts:,} {verdict_word(t)}", style=verdict_color(t))


def _note(v: VariantResult, limit: int) -> str:
    o = v.outcome
    if o.error is not None:
        where = f"line {o.error.line}: " if o.error.line else ""
        return visible(f"invalid: {where}{o.error.message}")
    if not o.fits:
        return f"does not fit: {o.smem_bytes:,} B > {limit:,} B per block"
    return ""


def sweep_table(result: SweepResult) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    table.add_column("", justify="left")
    for axis in result.axes:
        table.add_column(Text(axis.label), justify="right")
    with_cycles = cycles_differ(result)
    for title in ("wavefronts", "excess", "ways", "cycles", "extra B", "fits"):
        if title != "cycles" or with_cycles:
            table.add_column(title, justify="right")
    per_access = len(result.access_names) > 1
    if per_access:
        for name in result.access_names:
            table.add_column(Text(visible(name)), justify="right", overflow="fold")
    notes = [_note(v, result.smem_limit) for v in result.variants]
    if any(notes):
        table.add_column(
            "note", justify="left", no_wrap=True, overflow="ellipsis", max_width=NOTE_WIDTH
        )
    best = result.best.index if result.best is not None else None
    for v, note in zip(result.variants, notes, strict=True):
        o = v.outcome
        point = [Text(axis.show(value)) for axis, value in zip(result.axes, v.point, strict=True)]
        mark = Text(BEST_MARK, style="bold green") if v.index == best else Text("")
        if o.valid:
            numbers: list[Text | str] = [
                f"{o.totals.wavefronts:,}",
                Text(f"{o.totals.excess_wavefronts:,}", style=excess_color(o.totals)),
                Text(str(o.totals.max_ways), style=degree_style(o.totals.max_ways)),
                *([f"~{o.totals.cycles:,}"] if with_cycles else []),
                f"{o.extra_bytes:+,}" if o.extra_bytes else "0",
                Text("yes") if o.fits else Text("no", style="bold red"),
            ]
            cells: list[Text | str] = [_access_cell(a) for a in o.accesses] if per_access else []
        else:
            numbers = ["-"] * (5 if with_cycles else 4) + [Text("-", style="dim")]
            cells = ["-"] * len(result.access_names) if per_access else []
        row: list[Text | str] = [mark, *point, *numbers, *cells]
        if any(notes):
            row.append(Text(note, style="red" if note else ""))
        table.add_row(*row, style="bold" if v.index == best else None)
    return table


def _split_cells(result: SweepResult) -> bool:
    """Whether an access column shows ``ok*`` (then :data:`SPLIT_NOTE` says what it means)."""
    return len(result.access_names) > 1 and any_split(
        a.totals for v in result.variants if v.outcome.valid for a in v.outcome.accesses
    )


def cycles_differ(result: SweepResult) -> bool:
    """Whether a variant's cycle estimate differs from its wavefronts (then it is shown)."""
    return any(
        v.outcome.valid and v.outcome.totals.cycles != v.outcome.totals.wavefronts
        for v in result.variants
    )


def describe_settings(result: SweepResult, v: VariantResult) -> str:
    return ", ".join(
        f"{axis.label} {axis.show(value)}" for axis, value in zip(result.axes, v.point, strict=True)
    )


def best_line(result: SweepResult) -> Text:
    if result.best is None:
        return Text("no variant is valid and fits in shared memory", style="bold red")
    v = result.best
    o = v.outcome
    t = o.totals
    text = Text()
    text.append(f"{BEST_MARK}: ", style="bold")
    text.append(describe_settings(result, v), style="bold green")
    if not t.conflict_free:
        state = f"{t.excess_wavefronts:,} over ideal, {t.max_ways}-way"
    elif t.excess_without_conflict:
        state = f"no bank conflict; {t.excess_wavefronts:,} over ideal: the phases themselves"
    else:
        state = "conflict-free"
    cost = f"{o.extra_bytes:+,} B shared" if o.extra_bytes else "no extra shared memory"
    text.append(f": {t.wavefronts:,} wavefront{'' if t.wavefronts == 1 else 's'} ({state}), {cost}")
    first = result.variants[0].outcome
    if result.best.index != 0 and first.valid and first.totals.wavefronts:
        ratio = first.totals.wavefronts / max(1, t.wavefronts)
        text.append(f"; {ratio:.1f}x fewer than the first row", style="dim")
    return text


def sweep_renderables(result: SweepResult, options: RenderOptions) -> list[RenderableType]:
    title = Text()
    title.append(visible(one_line(result.path)), style="bold underline")
    if result.name and result.name != result.path:
        title.append(f"  {visible(result.name)}", style="bold")
    head = [
        Text(
            f"sweep of {len(result.variants)} variant(s) (ranges inclusive); best = fewest "
            "wavefronts, then fewest extra bytes, then sweep order",
            style="dim",
        )
    ]
    head += [Text(f"  {a.describe()}", style="dim") for a in result.axes]
    table = sweep_table(result)
    out: list[RenderableType] = [Group(title, *head, table), Text("")]
    if cycles_differ(result):
        out.insert(1, Text(CYCLES_NOTE, style="dim"))
    if _split_cells(result):
        out.insert(1, Text(SPLIT_NOTE, style="dim"))
    invalid = [v for v in result.variants if v.outcome.error is not None]
    if invalid:
        first = invalid[0]
        assert first.outcome.error is not None
        out.append(
            Text(
                f"{len(invalid)} invalid variant(s); "
                f"the first ({describe_settings(result, first)}): "
                + visible(first.outcome.error.render()),
                style="red",
            )
        )
    out.append(best_line(result))
    return out


def render_sweep_text(result: SweepResult, options: RenderOptions) -> str:
    return to_string(sweep_renderables(result, options), color=options.color, width=options.width)
