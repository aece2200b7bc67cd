"""The text view of ``shmem trace``: per instruction, per line, per op, then the details.

Built from the same blocks as ``shmem analyze``'s report (:mod:`shmem_cli.render.plain`
lines and tables; the bank tables, heat maps and legend of :mod:`shmem_cli.render.text`),
so it is plain text when piped, rich on a terminal, and the same picture for
``--svg``/``--html``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hardware import ops
from ..hardware.ops import OP_NAMES
from ..model import CONTENDED
from ..plumbing.errors import brief_name, file_line, one_line
from ..trace.result import CP_ASYNC_NOTE, FileTrace, KernelTrace, TraceAccess, TraceResult
from ..trace.traced_launch import LaunchInfo
from .options import RenderOptions
from .plain import Block, Cell, Column, Styled, Table, layout
from .text import (
    DEFAULT_WIDTH,
    access_block,
    excess_cell,
    legend,
    split_note,
    status_text,
    to_rich,
    to_string,
)
from .trace_suggest_text import suggestion_blocks

if TYPE_CHECKING:
    from rich.console import RenderableType


def _where(file: str | None, line: int | None) -> str:
    return "?" if line is None else file_line(file, line)


def _line_cell(a: TraceAccess) -> Styled:
    """The user's line, and the library line it reaches through inlining, dimmed."""
    cell = Styled(_where(a.file, a.line))
    inner = a.site.inner
    if inner is not None:
        cell.append(f" < {_where(inner[0], inner[1])}", "dim")
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
        Column(""),
        Column("line"),
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
        Column("line"),
        Column("ops"),
        Column("instructions", "right"),
        Column("requests", "right"),
        Column("wavefronts", "right"),
        Column("ideal", "right"),
        Column("ways", "right"),
        Column("cycles", "right"),
    ]
    table = Table(columns)
    for line in kernel.lines:
        t = line.totals
        table.add_row(
            _where(line.file, line.line),
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
    """Requests and wavefronts per op kind (the kinds the kernel uses), and the remote
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
        if not t.requests:
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
    if launch.constants:
        consts = Styled("__constant__: ", "dim")
        consts.append(", ".join(f"{k}={v}" for k, v in launch.constants))
        parts.append(consts)
    if launch.memory:
        given = Styled("device memory: ", "dim")
        given.append(", ".join(f"0x{a:x} ({n:,} B, {src})" for a, n, src in launch.memory))
        parts.append(given)
    return parts


#: said when no row has a source line
NO_LINES = (
    "no instruction has a source line (line ?): the cubin holds no line table; build it with "
    "nvcc -lineinfo (as shmem compiles a .cu) to see the kernel's lines, and its parameter names"
)
#: said after the parameters left at 0 when no shared-memory instruction ran
IDLE_DEFAULTS = (
    ", and no shared-memory instruction ran: a kernel that takes its sizes, pointers or "
    "tensor maps from its parameters (a CUTLASS or FlashAttention Params struct) does no "
    "work with zeros. Give the bytes the host program passed with --params @FILE "
    "(docs/recipes.md), or each parameter with --arg"
)


def notes(kernel: KernelTrace) -> list[Block]:
    """Warnings under the tables: data-dependent addresses, made-up data, provisional figures."""
    out: list[Block] = []
    launch = kernel.launch
    grid = launch.coverage
    if grid is not None and grid.mode != "whole":  # a whole grid is what was asked
        color = "yellow" if grid.mode == "sample" else "dim"
        out.append(Styled(f"note: {grid.text()}", color))
    if kernel.fills_gpu is not None:
        out.append(Styled(f"note: {kernel.fills_gpu}", "dim"))
    dependent = [a for a in kernel.accesses if a.data_dependent]
    if dependent:
        sources = kernel.data_from
        text = Styled(
            f"note: {len(dependent)} instruction(s) (flag 'data') have addresses, lanes or "
            "counts decided by global-memory data"
            + (f" read from {', '.join(sources)}" if sources else ""),
            "yellow",
        )
        # the made-up buffers among those read (all of them where no buffer is named)
        named = {label for s in sources for label in s.removeprefix("one of ").split(", ")}
        zeros = [z for z in launch.zero_filled if z in named] if sources else launch.zero_filled
        if zeros:
            text.append(
                f"; the buffers of parameter(s) {', '.join(zeros)} were zero-filled:"
                " give real data with --arg NAME=@FILE.npy or @FILE.bin",
                "yellow",
            )
        out.append(text)
    if kernel.accesses and all(a.line is None for a in kernel.accesses):
        out.append(Styled(f"note: {NO_LINES}", "dim"))
    if launch.defaulted:
        said = f"note: parameter(s) {', '.join(launch.defaulted)} were not given and are 0"
        if kernel.accesses or kernel.dsmem.requests:
            out.append(Styled(said, "dim"))
        else:  # nothing ran: the zeros are the likely reason (a library's Params left zero)
            out.append(Styled(said + IDLE_DEFAULTS, "yellow"))
    if kernel.provisional:
        out.append(Styled(f"note: {CP_ASYNC_NOTE}", "cyan"))
    contended = [a for a in kernel.accesses if a.cas_retries]
    if contended:
        retries = sum(a.cas_retries for a in contended)
        where = ", ".join(sorted({_where(a.file, a.line) for a in contended}))
        out.append(
            Styled(
                f"note: {retries:,} compare-and-swap attempt(s) failed and were retried "
                f"(flag 'contention', at {where}): lanes contending for one address go round "
                "their atomic loop again, and every retry is in the requests and wavefronts of "
                "the loop's rows (its read and its swap). The number of retries is the GPU's "
                "where the warps reach the loop together; where three or more warps contend "
                "for an address, or the warps arrive apart, it changes from run to run on the "
                "GPU itself (docs/hardware-model.md section 5a)",
                "yellow",
            )
        )
    notes = [f"note: {kernel.arch_note}"] if kernel.arch_note else []
    notes += [f"build: cached ({kernel.cached})"] if kernel.cached else []  # --build-cache
    notes += [f"note: {kernel.records_note}"] if kernel.records_note else []
    notes += [f"note: {kernel.clock_note}"] if kernel.clock_note else []
    out += [Styled(text, "dim") for text in notes]
    if kernel.tensor_map_note:
        out.append(Styled(f"note: {kernel.tensor_map_note}", "yellow"))
    if launch.unset_constants:
        out.append(
            Styled(
                f"note: the kernel read __constant__ {', '.join(launch.unset_constants)}, which "
                "neither the cubin initialises nor the launch set: read as 0 (as the driver "
                "loads it), values that depend on it are inexact; give --const NAME=v,...|@FILE",
                "yellow",
            )
        )
    if launch.undescribed:
        shown = ", ".join(launch.undescribed[:4]) + (", ..." if len(launch.undescribed) > 4 else "")
        out.append(
            Styled(
                f"note: the kernel touched global memory the launch did not describe ({shown}): "
                "untouched device memory, reading what the kernel wrote"
                + (", what --memory gave" if launch.memory else "")
                + ", else zeros "
                f"({launch.undescribed_reads:,} lane read(s) of bytes never written; values that "
                "depend on them are inexact)",
                "yellow",
            )
        )
    inexact = sum(a.inexact_requests for a in kernel.accesses)
    if inexact:
        out.append(
            Styled(
                f"note: {inexact} request(s) use an address the emulator could not compute exactly",
                "bold red",
            )
        )
    return out


def not_modelled_block(kernel: KernelTrace) -> list[Block]:
    if not kernel.not_modelled:
        return []
    remote = any(n.dsmem_sectors is not None for n in kernel.not_modelled)
    calls = any(n.callee is not None for n in kernel.not_modelled)
    columns = [Column("line"), Column("sass"), Column("executions", "right")]
    if remote:
        columns.append(Column("dsmem sectors", "right"))
    if calls:
        columns.append(Column("calls"))
    table = Table(columns)
    for n in kernel.not_modelled:
        row = [_where(n.file, n.line), n.sass, f"{n.executions:,}"]
        if remote:
            row.append("" if n.dsmem_sectors is None else f"{n.dsmem_sectors:,}")
        if calls:
            row.append(n.callee or "")
        table.add_row(*row)
    head = Styled(
        "not modelled (shared-memory traffic of these instructions is not counted above):",
        "bold yellow",
    )
    out: list[Block] = [head, table]
    for n in kernel.not_modelled:
        if n.callee is not None:
            out.append(
                Styled(
                    f"note: {_where(n.file, n.line)} calls {n.callee}, a function outside the "
                    "kernel: stepped over (it touches no shared memory of the kernel); what it "
                    "returns is not modelled, so a request whose address uses it is inexact",
                    "yellow",
                )
            )
    return out


def wgmma_block(kernel: KernelTrace) -> list[Block]:
    """What each wgmma read (its decoded descriptors and the core matrices) and what each TMA
    or bulk copy moved, as the JSON's ``reads``: one row per instruction."""
    rows = [a for a in kernel.accesses if a.reads]
    if not rows:
        return []
    table = Table([Column("line"), Column("pc"), Column("op"), Column("reads / moves")])
    for a in rows:
        table.add_row(_where(a.file, a.line), f"0x{a.pc:04x}", a.op, a.reads or "")
    return [Styled("wgmma descriptors and TMA copies, decoded:", "bold"), table]


def _details(accesses: tuple[TraceAccess, ...], options: RenderOptions, every: bool) -> list[Block]:
    """Bank table and heat map of each access with bank conflicts (of each, with ``every``)."""
    from .heatmap import heatmap

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
    elif kernel.dsmem.requests:
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
    view = trace_view(report, options)
    if not options.color:
        plain = layout(view, options.width or DEFAULT_WIDTH)
        if plain is not None:
            return plain
    return to_string([to_rich(b) for b in view], color=options.color, width=options.width)


def trace_renderables(report: TraceResult, options: RenderOptions) -> list[RenderableType]:
    """The report as rich renderables, for ``--svg`` and ``--html``."""
    return [to_rich(b) for b in trace_view(report, options)]
