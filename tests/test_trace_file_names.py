"""A source file name from a cubin's line table is user text: every place the trace's text
output (rows, per-line table, notes, compare and lint lines, errors) prints one keeps it on
one line, its line breaks written ``\\n`` (``errors.one_line``, the rule analyze and lint
follow), so a name cannot start a line of a CI log (``::error file=...::`` is a command to
the GitHub Actions runner)."""

from __future__ import annotations

import dataclasses

from shmem_cli.cuda.sass import Instruction
from shmem_cli.lint.compiled_compare import Group
from shmem_cli.plumbing.errors import file_line
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.trace.view import render_trace_text
from shmem_cli.trace.emulator.grid import Differs
from shmem_cli.trace.emulator.trace_error import TraceError
from shmem_cli.trace.result import FileTrace, TraceResult

from .test_trace_result import tile_records, traced

EVIL = "src/k.cu\n::error file=x.cu,line=1::forged\r"


def forged_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith("::error")]


def test_file_line_writes_line_breaks_out() -> None:
    assert file_line(EVIL, 6) == "k.cu\\n::error file=x.cu,line=1::forged\\r:6"
    assert file_line("a/b/k.cu", 6) == "k.cu:6"
    assert file_line(None, 6) == "6"


def test_rows_lines_and_notes_keep_a_file_name_on_one_line() -> None:
    kernel = traced([tile_records(False, 0x130, 4, "store"), tile_records(True, 0x150, 6)])
    accesses = tuple(
        dataclasses.replace(
            a, site=dataclasses.replace(a.site, file=EVIL, inner=(EVIL, 64)), data_decided=True
        )
        for a in kernel.accesses
    )
    lines = tuple(dataclasses.replace(line, file=EVIL) for line in kernel.lines)
    kernel = dataclasses.replace(kernel, accesses=accesses, lines=lines)
    text = render_trace_text(
        TraceResult((FileTrace(EVIL, (kernel,)),)), RenderOptions(heat=True, every=True)
    )
    assert forged_lines(text) == []
    assert "k.cu\\n::error file=x.cu,line=1::forged\\r:6" in text  # a row, the line table
    assert "src/k.cu\\n::error" in text  # the header's path


def test_the_note_of_blocks_that_differ_and_errors_keep_it_on_one_line() -> None:
    ins = Instruction(0x40, None, "ISETP", ("GE",), (), EVIL, 9, "ISETP.GE P0, R1, R2")
    said = Differs(ins, "its guard predicate").text()
    assert "\n" not in said and "\r" not in said and "forged\\r:9" in said
    error = TraceError("cannot go on", ins).render()
    assert forged_lines(error) == [] and "\\n::error" in error


def test_lint_names_the_line_on_one_line() -> None:
    group = Group(EVIL, 7, "load", 4, ("LDS",), 1, 32, 32)
    assert group.where == "k.cu\\n::error file=x.cu,line=1::forged\\r:7"


def test_compare_output_keeps_names_on_one_line() -> None:
    from shmem_cli.render.trace.compare import render_compare_text
    from shmem_cli.trace.ncu.compare import InstructionCompare, KernelCompare

    row = InstructionCompare(
        0x150, "LDS R6, [R6]", EVIL, 6, (32, 1024, 32), (32, 1024, 32), "match"
    )
    compare = KernelCompare(f"ncu{EVIL}.csv", f"k{EVIL}", 1, 1, (), (row,))
    text = render_compare_text([compare])
    assert forged_lines(text) == []
    assert "k.cu\\n::error file=x.cu,line=1::forged\\r:6" in text
    differs = dataclasses.replace(compare, binary_differs=((0x150, f"LDS{EVIL}", "LDS"),))
    assert forged_lines(render_compare_text([differs])) == []
