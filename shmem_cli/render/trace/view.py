"""The text view of ``shmem trace``: per instruction, per line, per op, then the details.

Built from the same blocks as ``shmem analyze``'s report (:mod:`shmem_cli.render.plain`
lines and tables; the bank tables, heat maps and legend of :mod:`shmem_cli.render.text`),
so it is plain text when piped, rich on a terminal, and the same picture for
``--svg``/``--html``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...hardware import ops
from ...hardware.ops import OP_NAMES
from ...model import CONTENDED
from ...plumbing.errors import brief_name, one_line
from ...trace.result import FileTrace, KernelTrace, TraceAccess, TraceResult
from ...trace.traced_launch import LaunchInfo
from ..options import RenderOptions
from ..plain import Block, Cell, Column, Styled, Table
from ..rich_blocks import to_rich
from ..text import (
    access_block,
    blocks_text,
    excess_cell,
    legend,
    split_note,
    status_text,
)
from .notes import not_modelled_block, notes, wgmma_block, where
from .suggest import suggestion_blocks

if TYPE_CHECKING:
    from rich.console import RenderableType


def _called(cell: Styled, file: str | None, caller: tuple[str, int] | None) -> Styled:
    """``cell`` with the user's line that called it through a helper of the user's own,
    dimmed: ``fa2.cu:31 (from 63)``, ``utils.h:160 (from flash_fwd_kernel.h:379)``."""
    if caller is not None:
        said = str(caller[1]) if caller[0] == file else where(caller[0], caller[1])
        cell.append(f" (from {said})", "dim")
    return cell


def _line_cell(a: TraceAccess) -> Styled:
    """The user's line (``?`` after it where the line table cannot tell it from a sibling
    call's), the user's line that called it, and the library line it reaches through
    inlining, dimmed."""
    cell = Styled(where(a.file, a.line))
    if a.site.also:
        cell.append("?", "yellow")
    _called(cell, a.file, a.site.caller)
    inner = a.site.inner
    if inner is not None:
        cell.append(f" < {where(inner[0], inner[1])}", "dim")
    return cell


def _flags(a: TraceAccess) -> Styled:
    text = Styled()
    if a.data_dependent:
        text.append("data", "yellow")
    if a.provisional:
        text.append((" " if text.spans else "") + "provisional", "cyan")
    if a.contended:
        text.append((" " if text.spans else "") + "contention", "yellow")
    return text


def instruction_table(kernel: KernelTrace) -> Table:
    """One row per shared-memory SASS instruction, in program order."""
    columns = [
        Column("", keep=True),
        Column("line", keep=True),
        Column("sass"),
        Column("op"),
        Column("requests", "right"),
        Column("wavefronts", "right"),
        Column("ideal", "right"),
        Column("excess", "right"),
        Column("ways", "right"),
        Column("efficiency", "right"),
        Column("cycles", "right"),
    ]
    flagged = any(a.data_dependent or a.provisional or a.contended for a in kernel.accesses)
    if flagged:
        columns.append(Column("flags"))
    table = Table(columns)
    for a in kernel.accesses:
        site, c = a.site, a.cost
        cells: list[Cell] = [
            Styled(a.verdict, "yellow") if a.verdict == CONTENDED else status_text(c),
            _line_cell(a),
            Styled(site.sass),
            f"{c.op} ({c.width} B)",
            f"{c.requests:,}",
            f"{c.wavefronts:,}",
            f"{c.ideal_wavefronts:,}",
            excess_cell(c),
            str(c.max_ways),
            f"{c.efficiency:.1%}",
            f"~{c.cycles:,}",
        ]
        table.add_row(*cells, *([_flags(a)] if flagged else []))
    return table


def line_table(kernel: KernelTrace) -> Table:
    """The instructions added up per source line."""
    columns = [
        Column("line", keep=True),
        Column("ops"),
        Column("instructions", "right"),
        Column("requests", "right"),
        Column("wavefronts", "right"),
        Column("ideal", "right"),
        Column("ways", "right"),
        Column("cycles", "right"),
    ]
    table = Table(columns)
    # a line the line table cannot tell from a sibling call's keeps its ? here too
    unsure = {(a.file, a.line) for a in kernel.accesses if a.site.also}
    for line in kernel.lines:
        t = line.totals
        cell = Styled(where(line.file, line.line))
        if (line.file, line.line) in unsure:
            cell.append("?", "yellow")
        _called(cell, line.file, line.caller)
        table.add_row(
            cell,
            ", ".join(line.ops),
            str(line.instructions),
            f"{t.requests:,}",
            Styled(f"{t.wavefronts:,}", "" if t.conflict_free else "red"),
            f"{t.ideal_wavefronts:,}",
            str(t.max_ways),
            f"~{t.cycles:,}",
        )
    return table


def totals_table(kernel: KernelTrace) -> Table:
    """Requests and wavefronts per op kind (the kinds the kernel uses; the atomics' also
    where only generic atomics shared memory did not serve count there), and the remote
    (distributed shared memory) requests with the sectors they moved."""
    dsmem = kernel.dsmem
    columns = [
        Column("op"),
        Column("requests", "right"),
        Column("wavefronts", "right"),
        Column("ideal", "right"),
        Column("excess", "right"),
    ]
    table = Table([*columns, Column("dsmem sectors", "right")] if dsmem.requests else columns)
    tail = [""] if dsmem.requests else []
    for op in OP_NAMES:
        t = kernel.totals[op]
        if not t.requests and not t.wavefronts:
            continue
        label = op + (" (provisional)" if ops.get(op).copy and kernel.provisional else "")
        table.add_row(
            label,
            f"{t.requests:,}",
            f"{t.wavefronts:,}",
            f"{t.ideal_wavefronts:,}",
            excess_cell(t),
            *tail,
        )
    misc = kernel.misc
    if misc.requests:
        w = f"{misc.wavefronts:,}"
        table.add_row("misc", f"{misc.requests:,}", w, w, "0", *tail)
    if dsmem.requests:
        w = f"{dsmem.wavefronts:,}"
        table.add_row("dsmem", f"{dsmem.requests:,}", w, w, "0", f"{dsmem.sectors:,}")
    return table


def _blocks(n: int) -> str:
    return f"{n:,} block" + ("" if n == 1 else "s")


def blocks_counted(launch: LaunchInfo) -> str:
    """The blocks the totals count and those that ran, from the JSON's figures for them
    (``blocks_traced``, ``grid_coverage.blocks`` and ``.blocks_run``): the header's words."""
    counted, cov = launch.blocks_traced, launch.coverage
    run = counted if cov is None else cov.run
    grid = counted if cov is None else cov.blocks
    if counted == run:
        if counted >= grid:
            return f"{_blocks(run)} run"
        return f"{run:,} of the {_blocks(grid)} run and counted: a sample (the note says why)"
    if counted >= grid:
        return (
            f"{_blocks(counted)} counted, {run:,} run: the others behave alike (the note says why)"
        )
    return (
        f"{counted:,} of the {_blocks(grid)} counted, {run:,} run: the others counted behave"
        " alike, the rest were not sampled (the notes say why)"
    )


def kernel_header(path: str, kernel: KernelTrace) -> list[Block]:
    launch = kernel.launch
    title = Styled()
    title.append(one_line(path), "bold underline")
    title.append(f"  {brief_name(kernel.name)}", "bold")
    bx, by, bz = launch.block
    gx, gy, gz = launch.grid
    rules = f", {kernel.rules_note}" if kernel.rules_note else ""
    cx, cy, cz = launch.cluster
    cluster = f" in clusters of {cx}x{cy}x{cz}" if cx * cy * cz > 1 else ""
    title.append(
        f"  {kernel.target or kernel.arch}{rules}, block {bx}x{by}x{bz}, grid {gx}x{gy}x{gz}"
        f"{cluster} ({blocks_counted(launch)}), {launch.static_smem:,} B static"
        f" + {launch.dynamic_smem:,} B dynamic shared",
        "dim",
    )
    parts: list[Block] = [title]
    if launch.arguments:
        args = Styled("arguments: ", "dim")
        args.append(", ".join(f"{k}={v}" for k, v in launch.arguments))
        parts.append(args)
    if launch.unnamed:  # labelled by position: why the source gave no names, once
        parts.append(Styled(f"note: {launch.unnamed}", "dim"))
    if launch.constants:
        consts = Styled("__constant__: ", "dim")
        consts.append(", ".join(f"{k}={v}" for k, v in launch.constants))
        parts.append(consts)
    if launch.memory:
        given = Styled("device memory: ", "dim")
        given.append(", ".join(f"0x{a:x} ({n:,} B, {src})" for a, n, src in launch.memory))
        parts.append(given)
    return parts


def _details(accesses: tuple[TraceAccess, ...], options: RenderOptions, every: bool) -> list[Block]:
    """Bank table and heat map of each access with bank conflicts (of each, with ``every``)."""
    from ..heatmap import heatmap

    out: list[Block] = []
    for a in accesses:
        r = a
        if r.cost.conflict_free and not every:
            continue
        grid = heatmap(r) if options.heat else None
        if options.tables or grid:
            out.append(Styled())
            out.extend(access_block(r, options, heat=grid))
    return out


def kernel_view(
    path: str, kernel: KernelTrace, options: RenderOptions, *, every: bool = False
) -> list[Block]:
    parts = kernel_header(path, kernel)
    if kernel.accesses:
        parts.append(instruction_table(kernel))
        parts += split_note(a.cost for a in kernel.accesses if not a.contended)
        parts += [Styled(), Styled("per source line", "bold"), line_table(kernel)]
        parts += [Styled(), Styled("per op", "bold"), totals_table(kernel)]
    elif kernel.dsmem.requests or kernel.generic_atoms:
        parts += [Styled("per op", "bold"), totals_table(kernel)]
    else:
        parts.append(Styled("no shared-memory instruction was executed", "dim"))
    extra = wgmma_block(kernel) + not_modelled_block(kernel) + notes(kernel)
    if extra:
        parts.append(Styled())
        parts += extra
    parts += _details(kernel.accesses, options, every)
    parts += suggestion_blocks(kernel)
    return parts


def trace_view(report: TraceResult, options: RenderOptions) -> list[Block]:
    """The whole report as blocks (``options.every``: details of conflict-free accesses too)."""
    every = options.every
    out: list[Block] = []
    files: tuple[FileTrace, ...] = report.files
    for f in files:
        for kernel in f.kernels:
            if out:
                out.append(Styled())
            out += kernel_view(f.path, kernel, options, every=every)
    detailed = any(
        (every or not a.cost.conflict_free) and a.cost.detail is not None
        for f in files
        for k in f.kernels
        for a in k.accesses
    )
    if detailed and options.tables:
        out += [Styled(), legend()]
    return out


def render_trace_text(report: TraceResult, options: RenderOptions) -> str:
    """The trace report as text: plain when possible, through rich for color."""
    return blocks_text(trace_view(report, options), color=options.color, width=options.width)


def trace_renderables(report: TraceResult, options: RenderOptions) -> list[RenderableType]:
    """The report as rich renderables, for ``--svg`` and ``--html``."""
    return [to_rich(b) for b in trace_view(report, options)]
