"""``shmem trace --compare RAW.csv``: Nsight Compute's raw page (per-launch counters) beside
the trace's per-op totals (shmem_cli/trace/ncu/ops.py).

The raw page used is the one measured on the H200 for issue 31's synthesized swizzles
(tests/data/trace/synth/ncu/raw.csv); the expected values are that launch's counters as
tests/data/trace/synth/measured.json keeps them, never figures shmem printed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shmem_cli.cli import main
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.ncu.exports import is_raw_page, read_ncu_raw

from .conftest import TRACE_DATA, needs_nvdisasm

SYNTH = TRACE_DATA / "synth"
RAW = SYNTH / "ncu" / "raw.csv"
MEASURED = {m["id"]: m for m in json.loads((SYNTH / "measured.json").read_text())["launches"]}
LAUNCHES = json.loads((SYNTH / "launches.json").read_text())["launches"]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_the_raw_page_is_told_from_the_source_page() -> None:
    assert is_raw_page(RAW)
    assert not is_raw_page(TRACE_DATA.parent / "triton" / "ncu" / "matmul_f16.csv")


def test_every_launch_of_the_raw_page_is_read_with_its_counters() -> None:
    launches = read_ncu_raw(RAW)
    assert [row.kernel for row in launches] == [L["kernel"] for L in LAUNCHES]
    for row, launch in zip(launches, LAUNCHES, strict=True):
        per_op = MEASURED[launch["id"]]["per_op"]
        c = row.counters
        assert c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld"] == per_op["ld"]["wavefronts"]
        assert (
            c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc"]
            == (per_op["misc"]["wavefronts"])
        )


def test_a_raw_page_without_the_header_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "raw.csv"
    bad.write_text('"Kernel Name","x"\n"k","1"\n')
    with pytest.raises(ShmemError, match="no Nsight Compute raw page here"):
        read_ncu_raw(bad)


@needs_nvdisasm
def test_the_per_op_counters_of_the_launch_beside_the_totals() -> None:
    """transpose_f32 (the unswizzled build, the raw page's first launch of that name): the
    load and store requests and wavefronts Nsight counted are shmem's totals."""
    cubin = SYNTH / "swizzled.none.sm_90.cubin"
    result = run(
        "trace", str(cubin), "-k", "transpose_f32", "-b", "32,8", "-f", "json",
        "--compare", str(RAW),
    )  # fmt: skip
    # the loads and stores agree; op_misc (above the rule here: the transposes' waited-on
    # loads, docs/hardware-model.md 9e) is an estimate, which never makes it disagree
    assert result.exit_code == 0, result.output
    compare = json.loads(result.output)["compare"][0]
    assert compare["tables"] == 4 and compare["instructions"] == []
    rows = {o["what"]: o for o in compare["ops"]}
    per_op = MEASURED["transpose_f32_none"]["per_op"]
    assert rows["load requests"]["ncu"] == per_op["ld"]["requests"]
    assert rows["load + ldmatrix wavefronts"]["ncu"] == per_op["ld"]["wavefronts"]
    assert rows["store + stmatrix wavefronts"]["ncu"] == per_op["st"]["wavefronts"]
    for what in ("load requests", "load + ldmatrix wavefronts", "store + stmatrix wavefronts"):
        assert rows[what]["verdict"] == "match", rows[what]
    misc = rows["misc wavefronts"]
    assert misc["ncu"] == per_op["misc"]["wavefronts"]
    assert misc["verdict"] == ("match" if misc["ncu"] == misc["shmem"] else "estimate")
    assert compare["agrees"]
    assert "atomic requests" not in rows  # counted 0 on both sides: not shown


@needs_nvdisasm
def test_a_kernel_the_raw_page_never_launched_is_named() -> None:
    cubin = SYNTH / "swizzled.none.sm_90.cubin"
    result = run(
        "trace", str(cubin), "-k", "transpose_f32", "-b", "32,8", "--compare",
        str(TRACE_DATA / "fixes" / "ncu" / "raw.csv"),
    )  # fmt: skip
    assert result.exit_code == 2
    assert "the CSV has no launch of transpose_f32" in result.output
    assert "warp_sgemm" in result.output


def _raw_page(tmp_path: Path, values: dict[str, str]) -> Path:
    """The raw page's first launch of transpose_f32, with only the counters named (by the
    end of their column's name) and the texts given."""
    lines = RAW.read_text().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    cols = next(csv.reader([lines[head]]))
    row = next(csv.reader([lines[head + 2]]))
    kept = [
        k for k, c in enumerate(cols) if c in ("ID", "Kernel Name") or c.endswith(tuple(values))
    ]
    out = [[cols[k] for k in kept], ["" for _ in kept]]
    out.append([next((v for e, v in values.items() if cols[k].endswith(e)), row[k]) for k in kept])
    path = tmp_path / "raw.csv"
    path.write_text("\n".join(",".join(f'"{x}"' for x in r) for r in out) + "\n")
    return path


@needs_nvdisasm
def test_a_counter_compare_reads_that_is_no_count_is_an_error_at_its_line(
    tmp_path: Path,
) -> None:
    cubin = SYNTH / "swizzled.none.sm_90.cubin"
    raw = _raw_page(tmp_path, {"op_misc.sum": "12", "op_ld.sum": "lots"})
    result = run("trace", str(cubin), "-k", "transpose_f32", "-b", "32,8", "--compare", str(raw))
    assert result.exit_code == 2
    assert f"{raw}:3:" in result.output and "op_ld.sum" in result.output


@needs_nvdisasm
def test_a_raw_page_with_nothing_to_compare_says_so(tmp_path: Path) -> None:
    # the transpose moves nothing over the crossbar, and the page reads 0 there
    cubin = SYNTH / "swizzled.none.sm_90.cubin"
    raw = _raw_page(tmp_path, {"l1tex__m_xbar2l1tex_read_sectors_mem_dshared.sum": "0"})
    args = ["trace", str(cubin), "-k", "transpose_f32", "-b", "32,8", "--no-tables"]
    result = run(*args, "--compare", str(raw))
    assert result.exit_code == 0, result.output
    assert "transpose_f32: nothing to compare" in result.output
    compare = json.loads(run(*args, "-f", "json", "--compare", str(raw)).output)["compare"][0]
    assert compare["page"] == "raw" and compare["ops"] == [] and compare["agrees"]


@needs_nvdisasm
def test_the_launch_of_the_traced_shape_is_compared_not_the_first(tmp_path: Path) -> None:
    """A whole program's raw page holds one kernel at several shapes (a PyTorch run: every
    configuration autotuning tried): the launch whose grid and block are the trace's is
    compared. The raw page's first two transpose_f32 launches (the unswizzled and the
    swizzled build) relabelled as launched on 2 blocks, the first's loads tripled: the
    unswizzled trace on 1 block is held to the third, the unswizzled build's second run, and
    agrees; traced on 2 blocks, it is held to the first, whose tripled loads differ."""
    lines = RAW.read_text().splitlines(keepends=True)
    head = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    cols = next(csv.reader([lines[head]]))
    grid, ld = cols.index("Grid Size"), cols.index("smsp__sass_inst_executed_op_shared_ld.sum")
    tripled = 0
    for at in (head + 2, head + 3):
        row = next(csv.reader([lines[at]]))
        row[grid] = "(2, 1, 1)"
        if at == head + 2:
            tripled = 3 * int(row[ld])  # not twice: the trace on 2 blocks makes twice
            row[ld] = str(tripled)
        lines[at] = ",".join(f'"{x}"' for x in row) + "\n"
    raw = tmp_path / "raw.csv"
    raw.write_text("".join(lines))
    cubin = SYNTH / "swizzled.none.sm_90.cubin"
    args = ["trace", str(cubin), "-k", "transpose_f32", "-b", "32,8", "--no-tables"]
    args += ["--compare", str(raw)]
    as_measured = run(*args)
    assert as_measured.exit_code == 0, as_measured.output
    assert "transpose_f32 (launch 3 of its 4: the first with the traced grid and block)" in (
        as_measured.output
    )
    other = json.loads(run(*args, "--grid", "2", "-f", "json").output)["compare"][0]
    rows = {o["what"]: o for o in other["ops"]}
    assert (other["table"], other["tables"]) == (1, 4)
    assert rows["load requests"]["ncu"] == tripled and rows["load requests"]["verdict"] == "differs"
