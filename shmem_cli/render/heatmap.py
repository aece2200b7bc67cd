"""The warp x iteration heat map: which requests of an access conflict, and how badly.

``AccessResult.heat`` holds the wavefronts of every request (rows: flat loop
iterations, columns: warps; -1 where a warp issues no request). The map shows
one cell per request: ``.`` when the request costs no more than the ideal,
otherwise its wavefront count, colored by how many times the ideal it costs.
Large maps are bucketed (each cell then shows the worst request of its bucket).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import numpy as np

from ..model import AccessResult
from .plain import Block, Cell, Column, Styled, Table

if TYPE_CHECKING:
    import numpy.typing as npt

MAX_CELLS = 32  # rows and columns shown before bucketing

# (upper bound of wavefronts / ideal, style, legend label)
LEVELS: tuple[tuple[float, str, str], ...] = (
    (2.0, "black on yellow", "2x"),
    (4.0, "black on dark_orange", "3-4x"),
    (8.0, "white on red", "5-8x"),
    (math.inf, "white on magenta", ">8x"),
)

# loop descriptions (spec.Loop.describe); compiled on first use, through re's cache
_RANGE = r"^(\w+) = (-?\d+)\.\.(-?\d+)(?::(-?\d+))?$"
_LIST = r"^(\w+) in \[([-\d, ]*)\]$"


def excess_style(ratio: float) -> str:
    """Style of a cell whose request costs ``ratio`` times its ideal (ratio > 1)."""
    for bound, style, _ in LEVELS:
        if ratio <= bound:
            return style
    return LEVELS[-1][1]  # pragma: no cover - the last bound is infinite


def loop_labels(loops: tuple[str, ...], iterations: int) -> tuple[str, list[str]] | None:
    """Row header and one label per flat iteration, from the loops' descriptions.

    ``("j = 0..24:8",)`` gives ``("j", ["0", "8", "16", "24"])``; nested loops give
    ``"kk,n"`` and ``"0,1"``. ``None`` when a description cannot be read.
    """
    names: list[str] = []
    values: list[list[int]] = []
    for desc in loops:
        if m := re.match(_RANGE, desc):
            start, stop, step = int(m[2]), int(m[3]), int(m[4] or 1)
            if step == 0:
                return None
            values.append(list(range(start, stop + (1 if step > 0 else -1), step)))
        elif m := re.match(_LIST, desc):
            values.append([int(v) for v in m[2].split(",") if v.strip()])
        else:
            return None
        names.append(m[1])
    if not names or math.prod(len(v) for v in values) != iterations:
        return None
    labels = [""]
    for vals in values:  # the last loop varies fastest, as in the flat index
        labels = [f"{head},{v}" if head else str(v) for head in labels for v in vals]
    return ",".join(names), labels


def bucket_max(heat: npt.NDArray[np.int32], axis: int, size: int) -> npt.NDArray[np.int32]:
    """Max over consecutive groups of ``size`` along ``axis`` (-1 stays -1 only if all are -1)."""
    n = heat.shape[axis]
    starts = np.arange(0, n, size)
    out: npt.NDArray[np.int32] = np.maximum.reduceat(heat, starts, axis=axis)
    return out


def _ranges(n: int, size: int) -> list[str]:
    return [str(s) if size == 1 else f"{s}-{min(s + size, n) - 1}" for s in range(0, n, size)]


def heat_summary(acc: AccessResult) -> Styled | None:
    """One line for an access whose requests all cost the same (or None)."""
    heat = acc.heat
    if heat is None:
        return None
    present = heat[heat >= 0]
    if not present.size or int(present.min()) != int(present.max()):
        return None
    ideal = acc.ideal_wavefronts / acc.requests
    return Styled(
        f"requests: all {present.size} ({acc.warps} warp(s) x {acc.iterations} iteration(s)) "
        f"cost {int(present[0])} wavefront(s) each, ideal {ideal:g}",
        "dim",
    )


def heatmap(acc: AccessResult, *, max_cells: int = MAX_CELLS) -> list[Block] | None:
    """The heat map of one access (its title, grid and legend), or a one-line summary,
    or None when there is nothing to show.

    Nothing is shown for a single request or a conflict-free access; an access whose
    requests all cost the same gets one line instead of a grid.
    """
    if acc.warps * acc.iterations <= 1 or acc.requests <= 1 or acc.conflict_free:
        return None
    heat = acc.heat
    if heat is None:
        return [Styled("heat map omitted: too many requests to keep per request", "dim")]
    same = heat_summary(acc)
    if same is not None:
        return [same]
    ideal = acc.ideal_wavefronts / acc.requests  # per request (exact unless phases vary)
    rows, cols = heat.shape
    row_step = math.ceil(rows / max_cells)
    col_step = math.ceil(cols / max_cells)
    grid = bucket_max(bucket_max(heat, 0, row_step), 1, col_step)

    named = loop_labels(acc.loops, rows) if row_step == 1 else None
    if named is not None:
        row_head, row_labels = named
    else:
        row_head = "iteration" if acc.loops else ""
        row_labels = _ranges(rows, row_step)

    title = Styled()
    title.append("requests", "bold")
    down = f", {row_head or 'iterations'} down" if acc.loops else ""
    title.append(
        f" (warps across{down}): wavefronts of each; '.' at the ideal ({ideal:g}), blank: none"
    )
    notes: list[str] = []
    if row_step > 1:
        notes.append(f"{row_step} iterations per row")
    if col_step > 1:
        notes.append(f"{col_step} warps per column")
    if notes:
        title.append(f" ({', '.join(notes)}: worst request shown)")

    columns = [Column(f"{row_head} \\ warp" if row_head else "warp", "right", style="dim")]
    columns += [Column(label.split("-")[0], "right", min_width=2) for label in _ranges(cols, col_step)]
    table = Table(columns, pad_left=0, pad_right=1)
    for label, line in zip(row_labels, grid, strict=True):
        cells: list[Cell] = []
        for wf in line.tolist():
            if wf < 0:
                cells.append("")
            elif wf <= ideal:
                cells.append(Styled(".", "green"))
            else:
                cells.append(Styled(str(wf), excess_style(wf / ideal)))
        table.add_row(label, *cells)

    legend = Styled()
    legend.append(
        f"{acc.conflicted_requests} of {acc.requests} requests conflict; "
        "color: wavefronts / ideal ",
        "dim",
    )
    for _, style, label in LEVELS:
        legend.append(f" {label} ", style)
        legend.append(" ")
    return [title, table, legend]
