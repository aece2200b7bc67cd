"""``shmem sweep KERNEL.cu --define``'s table: one row per compiled variant, the best marked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hardware.ops import OP_NAMES as TRACE_OPS
from ..plumbing.errors import brief_name, one_line
from ..trace.fixes.compiled_sweep import CompiledSweep, Variant
from .options import RenderOptions
from .plain import Block, Cell, Column, Styled, Table
from .rich_blocks import to_rich
from .text import BEST_MARK, blocks_text, excess_cell

if TYPE_CHECKING:
    from rich.console import RenderableType


def _settings(v: Variant) -> str:
    return ", ".join(f"{n}={x}" for n, x in v.defines)


def _table(result: CompiledSweep) -> Table:
    ops = [
        op
        for op in TRACE_OPS
        if any(v.kernel is not None and v.kernel.totals[op].requests for v in result.variants)
    ]
    columns = [Column("")]
    columns += [Column(a.name, "right") for a in result.axes]
    columns += [
        Column("wavefronts", "right"),
        Column("excess", "right"),
        Column("ways", "right"),
        Column("shared B", "right"),
        Column("extra B", "right"),
        Column("fits", "right"),
        *[Column(f"{op} req / wf", "right") for op in ops],
    ]
    notes = any(v.note or v.error is not None or result.work_note(v) for v in result.variants)
    if notes:
        columns.append(Column("note"))
    table = Table(columns)
    best = result.best
    for v in result.variants:
        mark: Cell = Styled(BEST_MARK, "bold green") if best is v else ""
        values: list[Cell] = [str(x) for _, x in v.defines]
        if v.kernel is None:
            numbers: list[Cell] = ["-"] * (6 + len(ops))
        else:
            k = v.kernel
            extra = result.extra_bytes(v)
            numbers = [
                f"{v.totals.wavefronts:,}",
                excess_cell(v.totals),
                str(v.totals.max_ways),
                f"{v.smem_bytes:,}",
                f"{extra:+,}" if extra else "0",
                "yes" if result.fits(v) else Styled("no", "bold red"),
                *[f"{k.totals[op].requests:,} / {k.totals[op].wavefronts:,}" for op in ops],
            ]
        row = [mark, *values, *numbers]
        if notes:
            if v.error is not None:
                first = v.error.message.strip().splitlines()[0] if v.error.message else ""
                row.append(Styled(f"failed: {first}", "red"))
            else:
                said = [f"compiler: {v.note}"] if v.note else []
                said += [w] if (w := result.work_note(v)) else []
                row.append(Styled("; ".join(said), "yellow"))
        table.add_row(*row)
    return table


def _ranking(result: CompiledSweep) -> str:
    if result.rank == "wavefronts":
        return "fewest wavefronts, then fewest shared bytes, then sweep order"
    return (
        "fewest wavefronts per ideal wavefront (--rank per-ideal), then fewest wavefronts, "
        "shared bytes, sweep order"
    )


def _work_warning(result: CompiledSweep) -> str:
    """Said under the table where the variants move different numbers of bytes."""
    if result.same_work:
        return ""
    said = (
        "note: the variants move different numbers of shared-memory bytes (the note column): "
        "a --define changed the work, or the compiler added or dropped accesses with it, not "
        "only the layout, so fewer wavefronts may be less work"
    )
    if result.rank == "wavefronts":
        said += "; --rank per-ideal ranks them by wavefronts per ideal wavefront"
    return said


def compiled_sweep_view(result: CompiledSweep) -> list[Block]:
    title = Styled()
    title.append(one_line(result.path), "bold underline")
    names = {brief_name(v.kernel.name) for v in result.variants if v.kernel is not None}
    if names:
        title.append(f"  {', '.join(sorted(names))}", "bold")
    out: list[Block] = [
        title,
        Styled(
            f"compiled sweep of {len(result.variants)} variant(s) (each compiled with -D and "
            f"traced; ranges inclusive); best = {_ranking(result)}",
            "dim",
        ),
        *[Styled(f"  {a.describe()}", "dim") for a in result.axes],
        _table(result),
        Styled(),
    ]
    if result.arch_note:
        out.append(Styled(f"note: {result.arch_note}", "dim"))  # as shmem trace says it
    out += [Styled(line, "yellow") for line in _compiler_warnings(result)]
    if warning := _work_warning(result):
        out.append(Styled(warning, "yellow"))
    failed = [v for v in result.variants if v.error is not None]
    for v in failed:
        assert v.error is not None
        out.append(Styled(f"variant {_settings(v)} failed: {v.error.render()}", "red"))
    best = result.best
    if best is None:
        out.append(Styled("no variant compiled, traced and fits in shared memory", "bold red"))
        return out
    line = Styled()
    line.append(f"{BEST_MARK}: ", "bold")
    line.append(_settings(best), "bold green")
    extra = result.extra_bytes(best)
    cost = f"{extra:+,} B shared" if extra else "no extra shared memory"
    wavefronts = best.totals.wavefronts
    line.append(f": {wavefronts:,} wavefronts, {cost}")
    first = result.reference
    if result.rank == "per-ideal":
        line.append(f"; {best.conflict_factor:.2f} wavefronts per ideal one", "dim")
    elif first is not None and first is not best and wavefronts:
        ratio = first.totals.wavefronts / wavefronts
        line.append(f"; {ratio:.2f}x fewer than {_settings(first)}", "dim")
    out.append(line)
    return out


def render_compiled_sweep_text(result: CompiledSweep, options: RenderOptions) -> str:
    view = compiled_sweep_view(result)
    return blocks_text(view, color=options.color, width=options.width)


def compiled_sweep_renderables(
    result: CompiledSweep, options: RenderOptions
) -> list[RenderableType]:
    """The table as rich renderables, for pictures."""
    return [to_rich(b) for b in compiled_sweep_view(result)]


def _compiler_warnings(result: CompiledSweep) -> list[str]:
    """ptxas's warnings about the kernel, each once, with the variants whose builds said it
    where those are not all the traced ones (``ptxas: ... (variants PAD=1, PAD=2)``)."""
    traced = [v for v in result.variants if v.kernel is not None]
    said: dict[str, list[str]] = {}
    for v in traced:
        assert v.kernel is not None
        for line in v.kernel.compiler_warnings:
            said.setdefault(line, []).append(_settings(v))
    return [
        line if len(who) == len(traced) else f"{line} (variant(s) {'; '.join(who)})"
        for line, who in said.items()
    ]
