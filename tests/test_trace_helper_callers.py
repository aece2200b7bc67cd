"""A row placed at a line of the user's own helper names the user's line that called it.

tests/data/trace/helper_calls (its README): ``ld_shared``, an ``asm`` load of the kernel's
own (line 6), is called at line 16 (a column of 32-float rows: 32-way, vectorized by ptxas
into one ``LDS.128``) and at line 17 (rows of 33 floats: no conflict). The five loads follow
one another and ``nvdisasm -gi`` lists all five at ``line 6 inlined at line 16``; the line
table's rows name line 17 from 0x3a0 on.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import shmem_cli
from shmem_cli.cli import main
from shmem_cli.testing import assert_no_bank_conflicts
from shmem_cli.trace.kernel.line_table import line_rows

from .conftest import TRACE_DATA, needs_nvdisasm

HERE = TRACE_DATA / "helper_calls"
CUBIN = HERE / "helper_calls.sm_90.cubin"
KERNEL = "_Z12helper_callsPf"


def _short(at: tuple[str, int] | None) -> tuple[str, int] | None:
    """A location by its file's name: the cubin names the folder it was built in."""
    return None if at is None else (Path(at[0]).name, at[1])


def test_the_rows_name_each_calls_line_where_nvdisasm_repeats_the_first() -> None:
    rows = line_rows(CUBIN, KERNEL)
    at = {
        pc: (_short(row[0]), _short(row[1])) for pc in range(0, 0x480, 0x10) if (row := rows.at(pc))
    }
    assert at[0x380] == (("helper_calls.cu", 6), ("helper_calls.cu", 16))  # the LDS.128
    for pc in (0x3A0, 0x3B0, 0x3C0):  # [R9+0x4], [R9+0x8], [R9+0xc]
        assert at[pc] == (("helper_calls.cu", 6), ("helper_calls.cu", 17)), hex(pc)
    assert at[0x470] == (("helper_calls.cu", 20), None)  # the kernel's own line


@needs_nvdisasm
def test_each_row_says_the_call_and_the_lines_table_splits_the_calls() -> None:
    args = ["trace", str(CUBIN), "-k", "helper_calls", "--block", "32", "--no-tables"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    (vector,) = [line for line in out.output.splitlines() if "LDS.128 R4, [R4]" in line]
    (scalar,) = [line for line in out.output.splitlines() if "[R9+0x4]" in line]
    assert "helper_calls.cu:6 (from 16)" in vector and "helper_calls.cu:6 (from 17)" in scalar
    per_line = out.output.split("per source line")[1].split("per op")[0]
    assert "helper_calls.cu:6 (from 16)" in per_line and "helper_calls.cu:6 (from 17)" in per_line
    doc = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)
    kernel = doc["files"][0]["kernels"][0]
    called = {a["sass"]: a["caller"] for a in kernel["accesses"] if a["op"] == "load"}
    assert called["LDS.128 R4, [R4]"]["line"] == 16
    assert Path(called["LDS R14, [R9+0xc]"]["file"]).name == "helper_calls.cu"
    assert called["LDS R14, [R9+0xc]"]["line"] == 17
    lines = {(ln["line"], (ln["caller"] or {}).get("line")) for ln in kernel["lines"]}
    assert {(6, 16), (6, 17)} <= lines


@needs_nvdisasm
def test_a_call_line_allows_the_helpers_rows_it_made() -> None:
    result = shmem_cli.trace(CUBIN, kernel="helper_calls", block=32)
    (worst,) = [a for a in result.accesses if not a.result.conflict_free]
    assert worst.sass == "LDS.128 R4, [R4]"
    assert _short(worst.site.caller) == ("helper_calls.cu", 16)
    assert_no_bank_conflicts(result, allow=[16])
    assert_no_bank_conflicts(result, allow=["helper_calls.cu:16"])
    try:
        assert_no_bank_conflicts(result, allow=["helper_calls.cu:17"])
    except AssertionError as exc:
        assert "LDS.128 R4, [R4]" in str(exc)
    else:
        raise AssertionError("line 17's allow let line 16's conflict pass")


@needs_nvdisasm
def test_a_helper_called_from_one_line_names_no_caller() -> None:
    """``one_call``'s whole body is ``body(...)``, a helper called once, which calls
    ``ld_shared`` once: no row names a caller (it would be the one call, on every row)."""
    result = shmem_cli.trace(CUBIN, kernel="one_call", block=32)
    lines = {(Path(a.file or "").name, a.line) for a in result.accesses}
    assert ("helper_calls.cu", 6) in lines and ("helper_calls.cu", 25) in lines
    assert all(a.site.caller is None for a in result.accesses)
    assert all(line.caller is None for line in result.kernel.lines)
