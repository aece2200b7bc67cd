"""``shmem trace --compare RAW.csv``: Nsight Compute's raw page (per-launch counters) beside
the trace's per-op totals (shmem_cli/trace/ncu_ops.py).

The raw page used is the one measured on the H200 for issue 31's synthesized swizzles
(tests/data/trace/synth/ncu/raw.csv); the expected values are that launch's counters as
tests/data/trace/synth/measured.json keeps them, never figures shmem printed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shmem_cli.cli import main
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.ncu_csv import is_raw_page, read_ncu_raw

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
