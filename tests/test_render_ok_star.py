"""The verdict of an access with no bank conflict that still costs more than its ideal.

A store of doubles by lanes 0 and 16 alone has one lane in each half-warp phase: 2
wavefronts over its 2 phases, no bank conflict; the two lanes' 16 bytes fit in one
128-byte wavefront, so Nsight's ideal is 1 (docs/hardware-model.md section 8; an
``STS.64`` of lanes 0 and 16 measured so on the H200, tests/data/trace/ideal2). Its row
must not read a bare ``ok`` next to an excess of 1: the verdict is ``ok*`` and a note
under the table says what the excess is. Every figure below is worked out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from shmem_cli.analysis.analyze import analyze
from shmem_cli.cli import main
from shmem_cli.model import Report
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.plain import Styled
from shmem_cli.render.text import render_text, summary_table

from .conftest import TRACE_DATA, needs_nvdisasm

NOTE = "ok*: no bank conflict; the excess is the phases themselves"


def store(name: str, index: str, when: str | None = None) -> dict[str, Any]:
    access = {"name": name, "array": "d", "op": "store", "index": [index]}
    return access if when is None else {**access, "when": when}


SPEC = {
    "name": "split",
    "block": [32],
    "arrays": {"d": {"dtype": "double", "shape": [64]}},
    "accesses": [
        # lanes 0 and 16: 2 wavefronts, 2 phases, ideal 1
        store("two lanes", "tid", "tid % 16 == 0"),
        # the whole warp, d[tid]: 2 half-warp phases of 128 contiguous bytes, ideal 2
        store("whole warp", "tid", None),
        # d[2 * tid]: a half-warp spans 256 bytes, lanes k and k + 8 share banks: 4, ideal 2
        store("stride two", "2 * tid", None),
    ],
}


def test_an_excess_without_bank_conflict_is_ok_star_with_a_note() -> None:
    result = analyze(SPEC)
    two, whole, stride = (a.cost for a in result.accesses)
    assert (two.wavefronts, two.ideal_wavefronts, two.excess_wavefronts) == (2, 1, 1)
    assert two.conflict_free and two.excess_without_conflict
    assert whole.conflict_free and not whole.excess_without_conflict
    assert not stride.conflict_free and not stride.excess_without_conflict
    out = render_text(Report(files=(result,)), RenderOptions(width=200, tables=False))
    lines = [line.rstrip() for line in out.splitlines()]
    rows = {line.split()[0]: line for line in lines[2:5]}
    assert rows["ok*"].split()[1:3] == ["two", "lanes"]
    assert rows["ok*"].endswith("1           2      1       1     1       50.0%")
    assert rows["ok"].split()[1:3] == ["whole", "warp"]
    assert rows["2-way"].split()[1:3] == ["stride", "two"]
    assert lines[5].startswith(NOTE)
    assert sum(NOTE in line for line in lines) == 1


def test_the_excess_cell_is_red_only_with_bank_conflicts() -> None:
    table = summary_table(analyze(SPEC))
    excess = [row[6] for row in table.rows]
    assert all(isinstance(cell, Styled) for cell in excess)
    styles = [(c.plain, c.base) for c in excess if isinstance(c, Styled)]
    assert styles == [("1", "yellow"), ("0", ""), ("2", "red")]


def test_no_note_without_an_excess() -> None:
    spec = {**SPEC, "accesses": SPEC["accesses"][1:]}
    out = render_text(Report(files=(analyze(spec),)), RenderOptions(width=200, tables=False))
    assert "ok*" not in out


def test_json_says_the_same() -> None:
    (two, whole, stride) = analyze(SPEC).to_json()["accesses"]
    assert (two["conflict_free"], two["conflicted_requests"], two["excess_wavefronts"]) == (
        True,
        0,
        1,
    )
    assert (whole["conflict_free"], whole["excess_wavefronts"]) == (True, 0)
    assert (stride["conflict_free"], stride["conflicted_requests"]) == (False, 1)


@needs_nvdisasm
def test_trace_marks_the_measured_store_ok_star(tmp_path: Path) -> None:
    # ideal2's ip_st64: lanes the index file names (0 and 16) store one double each at
    # line 10 (the H200 counted 2 wavefronts, ideal 1); lines 7 and 12 are whole warps
    data = TRACE_DATA / "ideal2"
    zeros = tmp_path / "zeros.bin"
    zeros.write_bytes(bytes(2048))
    args = ["trace", str(data / "ip.sm_90.cubin"), "--kernel", "ip_st64", "--block", "32"]
    args += ["--arg", f"0=@{zeros}", "--arg", f"1=@{data / 'inputs' / 'l0_16.bin'}"]
    run = CliRunner().invoke(main, [*args, "--no-tables", "--no-color"])
    assert run.exit_code == 0, run.output
    lines = run.output.splitlines()
    (row,) = [line for line in lines if "ip.cu:10" in line and "STS.64" in line]
    assert row.split()[0] == "ok*"
    # wavefronts, ideal, excess, ways (then efficiency, cycles, the flag 'data')
    assert row.split()[-7:-3] == ["2", "1", "1", "1"]
    assert sum(line.startswith(NOTE) for line in lines) == 1
    report = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)
    (store,) = [a for a in report["files"][0]["kernels"][0]["accesses"] if a["line"] == 10]
    assert (store["wavefronts"], store["conflicted_requests"], store["excess_wavefronts"]) == (
        2,
        0,
        1,
    )


SWEEP = """\
name: split sweep
block: [32]
params: {S: 1}
arrays:
  d: {dtype: double, shape: [128]}
accesses:
  - name: two lanes
    array: d
    op: store
    index: [tid * S]
    when: tid % 16 == 0
  - name: whole warp
    array: d
    op: load
    index: [tid * S]
"""


def test_sweep_says_the_same(tmp_path: Path) -> None:
    # S = 1: the two lanes 2 wavefronts (ideal 1), the whole warp's d[tid] 2 (ideal 2): 4 in
    #        all, an excess of 1 and no bank conflict
    # S = 2: the two lanes as before; d[2 * tid]: a half-warp spans 256 bytes, lanes k and
    #        k + 8 share banks: 4 (ideal 2), 2-way: 6 in all, excess 3
    path = tmp_path / "s.yaml"
    path.write_text(SWEEP)
    run = CliRunner().invoke(main, ["sweep", str(path), "--param", "S=1..2", "--no-color"])
    assert run.exit_code == 0, run.output
    lines = [line.rstrip() for line in run.output.splitlines()]
    rows = [line.split() for line in lines if line.split()[:1] in (["best"], ["2"])]
    assert rows[0][:4] == ["best", "1", "4", "1"] and rows[0][-4:] == ["2", "ok*", "2", "ok"]
    assert rows[1][:3] == ["2", "6", "3"] and rows[1][-4:] == ["2", "ok*", "4", "2-way"]
    assert sum(line.startswith(NOTE) for line in lines) == 1
    assert lines[-1] == (
        "best: S 1: 4 wavefronts (no bank conflict; 1 over ideal: the phases themselves), "
        "no extra shared memory"
    )
