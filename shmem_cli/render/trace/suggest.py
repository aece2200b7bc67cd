"""The text of ``shmem trace --suggest``: per array with conflicts, its ranked layout
changes, each said in the kernel's own terms with the new counts per instruction."""

from __future__ import annotations

from ...hardware.ops import OP_NAMES as TRACE_OPS
from ...hardware.swizzle import tma_mode
from ...plumbing.errors import file_line
from ...trace.fixes.layout_search import ArraySuggestions, Suggestion
from ...trace.result import KernelTrace
from ..plain import Block, Column, Styled, Table

SHOWN_INSTRUCTIONS = 12  # instructions listed under one suggestion (the rest counted)


def _change_label(s: Suggestion, element: int | None) -> str:
    """``element``: the bytes of one of the array's elements, None where its type is unknown
    (a Triton entry's dynamic shared memory, an array with no declaration found): then a
    pad is said in bytes, never in elements of a guessed size."""
    c = s.change
    if c.kind == "pad":
        if element is None:
            return f"pad {c.pad_bytes} B a row"
        n = c.pad_bytes // element
        return f"pad {n} element{'' if n == 1 else 's'} ({c.pad_bytes} B) a row"
    assert c.swizzle is not None
    return f"swizzle {c.swizzle.label}"


def _pair(v: tuple[int, int] | None) -> str:
    return "-" if v is None or v == (0, 0) else f"{v[0]:,} / {v[1]:,}"


def _head(a: ArraySuggestions) -> Styled:
    arr = a.array
    where = f"{arr.size:,} B at shared offset {arr.offset:#x}"
    shape = ""
    if a.shape is not None:
        d = a.shape.declaration
        dims = "".join(f"[{x}]" for x in d.dims)
        shape = f"__shared__ {d.type} {arr.name}{dims} ({file_line(d.path, d.line)}), "
    rows = f"rows of {a.pitch:,} B ({a.pitch_from})" if a.pitch else "row length unknown"
    text = Styled()
    text.append(f"layout suggestions for {arr.name}", "bold")
    text.append(
        f": {shape}{where}, {rows}; {a.conflicted} conflicting instruction(s); "
        f"the kernel now {a.wavefronts:,} wavefronts",
        "dim",
    )
    return text


def _table(a: ArraySuggestions) -> Table:
    ops = [op for op in TRACE_OPS if op in a.current]
    table = Table(
        [
            Column("#", "right"),
            Column("change"),
            Column("extra B", "right"),
            Column("wavefronts", "right"),
            *[Column(f"{op} req / wf", "right") for op in ops],
            Column("vector accesses"),
        ]
    )
    table.add_row(
        "", "as traced", "0", f"{a.wavefronts:,}", *[_pair(a.current[op]) for op in ops], ""
    )
    for k, s in enumerate(a.suggestions, 1):
        table.add_row(
            str(k),
            _change_label(s, a.element if a.shape is not None else None),
            f"+{s.extra_bytes:,}" if s.extra_bytes else "0",
            Styled(f"{s.wavefronts:,}", "green" if s.wavefronts < a.wavefronts else "red"),
            *[_pair(s.predicted.get(op)) for op in ops],
            Styled("split (misaligned)", "yellow") if s.breaks_vector_alignment else "kept",
        )
    return table


def _details(k: int, s: Suggestion) -> list[Block]:
    out: list[Block] = []
    line = Styled(f"{k}. ", "bold")
    line.append(s.fix)
    if s.breaks_vector_alignment:
        split = [i for i in s.instructions if i.new.split]
        line.append(
            f"; breaks vector alignment: {len(split)} instruction(s) split as ptxas would "
            "emit them (costed split)",
            "yellow",
        )
    out.append(line)
    if s.sweep:
        out.append(Styled(f"   {s.sweep}", "dim"))
    table = Table(
        [
            Column("   pc"),
            Column("sass"),
            Column("req / wf: before -> after", "right"),
            Column("becomes"),
        ]
    )
    shown = sorted(s.instructions, key=lambda i: not i.new.split)[:SHOWN_INSTRUCTIONS]
    for i in sorted(shown, key=lambda i: i.pc):
        table.add_row(
            f"   {i.pc:#06x}",
            i.sass,
            f"{i.requests:,} / {i.wavefronts:,} -> {i.new.requests:,} / {i.new.wavefronts:,}",
            i.new.becomes(i.opcode) if i.new.split else "",
        )
    if s.instructions:
        out.append(table)
    rest = len(s.instructions) - SHOWN_INSTRUCTIONS
    if rest > 0:
        out.append(
            Styled(f"   ... and {rest} more instruction(s) (--format json lists all)", "dim")
        )
    return out


def synthesis_line(a: ArraySuggestions) -> str:
    """What the synthesized XOR swizzle gives the array's instructions, and its bound."""
    syn = a.synthesis
    assert syn is not None
    n = len(syn.per_access)
    if a.tma is not None:
        now = f"{a.tma}B" if a.tma else "none"
        mode = tma_mode(syn.swizzle) or syn.swizzle.label
        return (
            f"TMA fills {a.array.name} (its tensor map's swizzle: {now}): its layout can only "
            f"be a TMA mode, and no padding (the box lands densely); the best mode: {mode} "
            f"(CU_TENSOR_MAP_SWIZZLE_{mode.upper()}), {syn.current:,} -> {syn.wavefronts:,} "
            f"wavefronts; ideal {syn.bound:,}" + (" (reached)" if syn.reaches_bound else "")
        )
    head = (
        f"best XOR swizzle for the {n} instruction(s) of {a.array.name} together: "
        f"{syn.swizzle.label if not syn.swizzle.identity else 'none (the layout as it is)'}, "
        f"{syn.current:,} -> {syn.wavefronts:,} wavefronts; ideal {syn.bound:,}"
    )
    if syn.reaches_bound:
        return head + " (reached: optimal)"
    if syn.exhaustive:
        return head + " (out of reach of every XOR swizzle, each costed: pad or remap)"
    return head + " (not reached; the best found)"


def suggestion_blocks(kernel: KernelTrace) -> list[Block]:
    """The ``--suggest`` part of a kernel's text report (nothing without ``--suggest``)."""
    if kernel.suggestions is None:
        return []
    out: list[Block] = [Styled()]
    if not kernel.suggestions:
        out.append(
            Styled("--suggest: no shared array has an instruction with bank conflicts", "dim")
        )
        return out
    for a in kernel.suggestions:
        out += [_head(a), _table(a)]
        if a.synthesis is not None:
            out.append(Styled(synthesis_line(a), "dim"))
        if not a.suggestions:
            pads = (
                "1..32 elements"
                if a.shape is not None
                else f"{a.element}..{32 * a.element} B a row"  # whole accesses of its narrowest
            )
            out.append(Styled(f"no pad of {pads} or swizzle lowers the kernel's wavefronts", "dim"))
        for k, s in enumerate(a.suggestions, 1):
            out += _details(k, s)
        out.append(Styled())
    return out
