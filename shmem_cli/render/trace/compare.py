"""``shmem trace --compare``: the trace beside Nsight Compute's source counters, as text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...plumbing.errors import brief_name, file_line, one_line, shorten
from ...trace.ncu.compare import VERDICTS, ComparedTrace, KernelCompare
from ..options import RenderOptions
from ..plain import Block, Column, Styled, Table, layout
from ..rich_blocks import to_rich
from ..text import to_string

if TYPE_CHECKING:
    from rich.console import RenderableType


#: characters of an instruction's text shown where the CSV's and the cubin's differ
SASS_SHOWN = 120


def _pair(ncu: int | None, shmem: int) -> str:
    shown = "-" if ncu is None else f"{ncu:,}"
    return shown if ncu == shmem else f"{shown} / {shmem:,}"


def _sample_note(c: KernelCompare) -> list[str]:
    """Where the trace counted a sample of the grid: why its counts fall short of Nsight's."""
    if c.sample is None:
        return []
    return [
        f"  the trace counted a sample of the grid ({c.sample}; its note says which), Nsight "
        "Compute every block: its counts cannot agree; trace the whole grid (raise "
        "--time-limit or --max-launch-instructions) to compare"
    ]


def render_compare_text(compares: Sequence[KernelCompare]) -> str:
    """One block per kernel: a verdict line, then a row per shared-memory instruction."""
    out: list[str] = []
    for c in compares:
        # user text, one line; a CUTLASS kernel's name (2,400 characters) cut as the header cuts it
        head = f"--compare {one_line(c.csv)}: {one_line(brief_name(c.kernel))}"
        if c.page == "raw":  # no binary to check
            out.append(_ops_text(head, c))
            continue
        if c.tables > 1:
            head += f" (table {c.table} of {c.tables} of this kernel)"
        if c.binary_differs:
            lines = [
                f"{head}: a different binary: {len(c.binary_differs)} instruction(s) of the CSV "
                "are not this cubin's at the same offset, so nothing is compared (profile the "
                "binary you trace: the same cache entry, the same compile options)"
            ]
            for pc, theirs, mine in c.binary_differs[:5]:
                where = f"0x{pc:04x}" if pc >= 0 else "count"
                # the CSV's text is anyone's: a field may hold 128 KiB
                theirs, mine = shorten(theirs, SASS_SHOWN), shorten(mine, SASS_SHOWN)
                lines.append(f"  {where}  ncu: {theirs}  |  cubin: {mine}")
            out.append("\n".join(lines) + "\n")
            continue
        if not c.instructions and c.agrees:
            out.append(f"{head}: agree (no shared-memory instruction ran, here or on the GPU)\n")
            continue
        counts = c.counts()
        said = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        verdict = "agree" if c.agrees else "DISAGREE"
        table = Table(
            [
                Column("verdict"),
                Column("line"),
                Column("pc", "right"),
                Column("sass"),
                Column("executions", "right"),
                Column("wavefronts", "right"),
                Column("ideal", "right"),
            ]
        )
        for i in c.instructions:
            line = file_line(i.file, i.line) if i.file and i.line else "-"
            table.add_row(
                i.verdict,
                line,
                f"0x{i.pc:04x}",
                i.sass,
                _pair(i.measured[0], i.traced[0]),
                _pair(i.measured[1], i.traced[1]),
                _pair(i.measured[2], i.traced[2]),
            )
        notes = [f"  {v}: {VERDICTS[v]}" for v, n in counts.items() if n and v != "match"]
        tail = "cells: ncu / shmem where they differ"
        blocks: list[Styled | Table] = [
            Styled(f"{head}: {verdict} ({len(c.instructions)} instructions: {said})"),
            table,
            Styled("\n".join([tail, *notes, *_sample_note(c)])),
        ]
        width = max([1000, *(len(i.sass) + 80 for i in c.instructions)])
        out.append(_laid_out(blocks, width))
    return "\n".join(out)


#: said of a raw-page launch chosen for its grid and block (not the kernel's first)
_SHAPE = ": the first with the traced grid and block"


def _ops_text(head: str, c: KernelCompare) -> str:
    """A raw-page comparison: one row per counter of the launch that shmem totals."""
    if c.tables > 1:
        head += f" (launch {c.table} of its {c.tables}{_SHAPE if c.table > 1 else ''})"
    if not c.ops:
        return (
            f"{head}: nothing to compare (every counter of the launch that shmem totals "
            "reads 0 on both sides)\n"
        )
    differ = sum(1 for o in c.ops if not o.agrees)
    verdict = "agree" if c.agrees else f"DISAGREE ({differ} counter(s) differ)"
    table = Table(
        [Column("verdict"), Column("what"), Column("ncu", "right"), Column("shmem", "right"),
         Column("counter")]
    )  # fmt: skip
    for o in c.ops:
        table.add_row(o.verdict, o.what, f"{o.ncu:,}", f"{o.shmem:,}", o.counter)
    notes = ["per-launch counters (Nsight Compute's raw page) beside shmem's totals"]
    notes += _sample_note(c)
    if any(o.verdict == "estimate" for o in c.ops):
        notes.append(
            "  estimate: op_misc is shown, not judged; Nsight adds wavefronts the rule leaves "
            "out (CTA-scope fences, waited-on shared values: docs/hardware-model.md 9e)"
        )
    if c.arbitration:
        notes.append(
            f"  the launch's bank-arbitration counter reads {c.arbitration:,}: wavefronts "
            "replayed between warps, above any rule (docs/hardware-model.md, whole grids)"
        )
    blocks: list[Styled | Table] = [
        Styled(f"{head}: {verdict} ({len(c.ops)} counter{'' if len(c.ops) == 1 else 's'})"),
        table,
        Styled("\n".join(notes)),
    ]
    return _laid_out(blocks, 1000)


def _laid_out(blocks: Sequence[Block], width: int) -> str:
    """The blocks as plain text; through rich where a line needs wrapping (a CUTLASS
    kernel's name runs to thousands of characters) or is not plain ASCII."""
    text = layout(blocks, width)
    if text is not None:
        return text
    return to_string([to_rich(b) for b in blocks], color=False, width=width)


def render_compared_text(report: ComparedTrace, options: RenderOptions) -> str:
    """The trace's text report, then the comparison."""
    from .view import render_trace_text

    return render_trace_text(report.trace, options) + "\n" + render_compare_text(report.compares)


def compared_renderables(report: ComparedTrace, options: RenderOptions) -> list[RenderableType]:
    """The pictures of a compared trace: the trace's."""
    from .view import trace_renderables

    return trace_renderables(report.trace, options)
