"""The warp x iteration heat map: which requests of an access have a bank conflict, and how bad.

``Cost.heat`` holds the wavefronts of every request (rows: flat loop
iterations, columns: warps; -1 where a warp issues no request) and
``Cost.heat_phases`` each request's phases with an active lane, which differ between
requests of 8- and 16-byte accesses (their phases follow the active lanes and the
pair rule). The map judges each request by the one rule of a bank conflict
(:func:`shmem_cli.model.bank_conflicted`, the tables' verdict): ``.`` when it costs no
more than its phases, otherwise its wavefront count, colored by how many times its
phases it costs. The excess over Nsight's ideal (a partly active request whose lanes
would fit in fewer wavefronts) is no bank conflict: the summary row's ideal, excess and
efficiency show it, the map does not.

Large maps are bucketed; a bucket shows its worst request by that ratio (ties:
the most wavefronts), not the one with the most wavefronts: a request of 4
wavefronts over 4 phases is fine, one of 2 in 1 phase is a 2-way conflict, and the
bucket holding both must not look clean.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import numpy as np

from ..model import Cost, SiteCost, bank_conflicted
from .plain import Block, Cell, Column, Styled, Table

if TYPE_CHECKING:
    import numpy.typing as npt

MAX_CELLS = 32  # rows and columns shown before bucketing

# (upper bound of wavefronts / phases, style, legend label)
LEVELS: tuple[tuple[float, str, str], ...] = (
    (2.0, "black on yellow", "2x"),
    (4.0, "black on dark_orange", "3-4x"),
    (8.0, "white on red", "5-8x"),
    (math.inf, "white on magenta", ">8x"),
)

# loop descriptions (spec.Loop.describe); compiled on first use, through re's cache
_RANGE = r"^(\w+) = (-?\d+)\.\.(-?\d+)(?::(-?\d+))?\Z"
_LIST = r"^(\w+) in \[([-\d, ]*)\]\Z"


def excess_style(ratio: float) -> str:
    """Style of a cell whose request costs ``ratio`` times its phases (ratio > 1)."""
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


def request_phases(cost: Cost) -> npt.NDArray[np.float64] | None:
    """Each request's phases with an active lane, shaped like ``cost.heat`` (None without)."""
    if cost.heat is None or cost.heat_phases is None:
        return None
    return cost.heat_phases.astype(np.float64)


def bucket_worst(
    heat: npt.NDArray[np.int32], phases: npt.NDArray[np.float64], row_step: int, col_step: int
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
    """The worst request of every ``row_step`` x ``col_step`` bucket: its wavefronts and phases.

    Worst means the highest wavefronts / phases, then the most wavefronts; a bucket
    without any request gives wavefronts -1.
    """
    rows, cols = heat.shape
    n_r, n_c = -(-rows // row_step), -(-cols // col_step)
    pad = ((0, n_r * row_step - rows), (0, n_c * col_step - cols))
    wf = np.pad(heat, pad, constant_values=-1).astype(np.float64)
    ph = np.pad(phases, pad, constant_values=1.0)

    def blocks(a: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = (
            a.reshape(n_r, row_step, n_c, col_step).transpose(0, 2, 1, 3).reshape(n_r, n_c, -1)
        )
        return out

    wf_b, ph_b = blocks(wf), blocks(ph)
    ratio = np.where(wf_b >= 0, wf_b / np.maximum(ph_b, 1.0), -1.0)
    top = ratio == ratio.max(axis=-1, keepdims=True)
    pick = np.argmax(np.where(top, wf_b, -2.0), axis=-1)[..., None]
    worst_wf = np.take_along_axis(wf_b, pick, axis=-1)[..., 0].astype(np.int32)
    worst_phases = np.take_along_axis(ph_b, pick, axis=-1)[..., 0]
    return worst_wf, worst_phases


def heat_summary(
    cost: Cost, heat: npt.NDArray[np.int32], phases: npt.NDArray[np.float64]
) -> Styled | None:
    """One line for an access whose requests all cost the same over the same phases (or
    None); ``heat`` and ``phases`` are the cost's (``cost.heat``, :func:`request_phases`)."""
    present = heat[heat >= 0]
    if not present.size or int(present.min()) != int(present.max()):
        return None
    own = phases[heat >= 0]
    if float(own.min()) != float(own.max()):
        return None  # same cost, different phases: some requests conflict, others not
    return Styled(
        f"requests: all {present.size} ({cost.warps} warp(s) x {cost.iterations} iteration(s)) "
        f"cost {int(present[0])} wavefront(s) each, {float(own[0]):g} phase(s) with an active lane",
        "dim",
    )


def heatmap(acc: SiteCost, *, max_cells: int = MAX_CELLS) -> list[Block] | None:
    """The heat map of one access (its title, grid and legend), or a one-line summary,
    or None when there is nothing to show.

    Nothing is shown for a single request or a conflict-free access; an access whose
    requests all cost the same gets one line instead of a grid.
    """
    if (
        acc.cost.warps * acc.cost.iterations <= 1
        or acc.cost.requests <= 1
        or acc.cost.conflict_free
    ):
        return None
    heat, phases = acc.cost.heat, request_phases(acc.cost)
    if heat is None or phases is None:
        return [Styled("heat map omitted: too many requests to keep per request", "dim")]
    same = heat_summary(acc.cost, heat, phases)
    if same is not None:
        return [same]
    rows, cols = heat.shape
    row_step = math.ceil(rows / max_cells)
    col_step = math.ceil(cols / max_cells)
    grid, grid_phases = bucket_worst(heat, phases, row_step, col_step)
    present = phases[heat >= 0]
    lo, hi = float(present.min()), float(present.max())
    span = f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"

    named = loop_labels(acc.site.loops, rows) if row_step == 1 else None
    if named is not None:
        row_head, row_labels = named
    else:
        row_head = "iteration" if acc.site.loops else ""
        row_labels = _ranges(rows, row_step)

    title = Styled()
    title.append("requests", "bold")
    down = f", {row_head or 'iterations'} down" if acc.site.loops else ""
    title.append(
        f" (warps across{down}): wavefronts of each; '.' no bank conflict "
        f"(no more than its phases with an active lane, {span}), blank: none"
    )
    notes: list[str] = []
    if row_step > 1:
        notes.append(f"{row_step} iterations per row")
    if col_step > 1:
        notes.append(f"{col_step} warps per column")
    if notes:
        title.append(f" ({', '.join(notes)}: worst request shown)")

    columns = [Column(f"{row_head} \\ warp" if row_head else "warp", "right", style="dim")]
    columns += [
        Column(label.split("-")[0], "right", min_width=2) for label in _ranges(cols, col_step)
    ]
    table = Table(columns, pad_left=0, pad_right=1)
    for label, line, line_phases in zip(row_labels, grid, grid_phases, strict=True):
        cells: list[Cell] = []
        for wf, own in zip(line.tolist(), line_phases.tolist(), strict=True):
            if wf < 0:
                cells.append("")
            elif not bank_conflicted(wf, own):
                cells.append(Styled(".", "green"))
            else:
                cells.append(Styled(str(wf), excess_style(wf / max(own, 1.0))))
        table.add_row(label, *cells)

    legend = Styled()
    legend.append(
        f"{acc.cost.conflicted_requests} of {acc.cost.requests} requests conflict; "
        "color: wavefronts / phases ",
        "dim",
    )
    for _, style, label in LEVELS:
        legend.append(f" {label} ", style)
        legend.append(" ")
    return [title, table, legend]
