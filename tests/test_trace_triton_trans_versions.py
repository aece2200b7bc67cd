"""One Triton kernel of our own as four Triton releases compiled it, against the H200.

tests/data/triton/trans_versions: `spec_copy` (a `tl.trans` through shared memory) by Triton
3.2.0, 3.3.1, 3.4.0 and 3.6.0, and ../called's `centred_rows` (ABI 7 cubins of 3.3.1 and
3.4.0, and 3.6.0), each launched from its cubin by lab/run_cubin.cu under Nsight Compute
twice (measured/: both runs equal). The trace of each entry, given the launch's grid and
scalars, must give Nsight's shared load and store wavefronts, and its requests plus its
predicated-off executions Nsight's `smsp__inst_executed_op_shared_ld/st`."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TEST_DATA, needs_nvdisasm

HERE = TEST_DATA / "triton" / "trans_versions"
CALLED = TEST_DATA / "triton" / "called"
METRIC = {
    "load_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "store_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "load_executions": "smsp__inst_executed_op_shared_ld.sum",
    "store_executions": "smsp__inst_executed_op_shared_st.sum",
}
LAUNCHES = {
    "spec_copy": (HERE, ["--grid", "4", "--arg", "2=4096", "--arg", "3=2", "--arg", "4=17"]),
    "centred_rows": (
        CALLED,
        ["--grid", "2", "--arg", "2=1000", "--arg", "3=1024", "--arg", "4=0.5", "--arg", "5=true"],
    ),
}
CASES = [("spec_copy", v) for v in ("3.2.0", "3.3.1", "3.4.0", "3.6.0")] + [
    ("centred_rows", v) for v in ("3.3.1", "3.4.0", "3.6.0")
]

pytestmark = needs_nvdisasm


def measured(name: str, version: str, run: int) -> dict[str, int]:
    text = (HERE / "measured" / f"ncu_{name}_{version}_{run}.csv").read_text()
    rows = [r for r in csv.reader(text.splitlines()) if len(r) > 3]
    head = rows[0]
    values = {r[head.index("Metric Name")]: r[head.index("Metric Value")] for r in rows[1:]}
    return {key: int(values[m].replace(",", "")) for key, m in METRIC.items()}


def traced(name: str, version: str) -> dict[str, int]:
    root, args = LAUNCHES[name]
    (meta,) = (root / version).glob(f"*/{name}.json")
    got = CliRunner().invoke(main, ["trace", str(meta.parent), *args, "-f", "json"])
    assert got.exit_code == 0, got.output
    kernel = json.loads(got.output)["files"][0]["kernels"][0]
    out = {}
    for op in ("load", "store"):
        rows = [a for a in kernel["accesses"] if a["op"] == op]
        out[f"{op}_wavefronts"] = kernel["totals"][op]["wavefronts"]
        out[f"{op}_executions"] = sum(a["requests"] + a["predicated_off"] for a in rows)
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("name", "version"), CASES)
def test_each_release_s_entry_costs_what_the_h200_measured(name: str, version: str) -> None:
    assert "NVIDIA H200" in (HERE / "measured" / "gpu.txt").read_text()
    first, second = measured(name, version, 1), measured(name, version, 2)
    assert first == second
    assert traced(name, version) == first


def test_the_releases_differ_where_the_h200_says_they_do() -> None:
    """3.3 and 3.4 store the transposed tile 8-way, 3.2 2-way, 3.6 without a conflict."""
    stores = {v: measured("spec_copy", v, 1)["store_wavefronts"] for v in ("3.2.0", "3.6.0")}
    stores |= {v: measured("spec_copy", v, 1)["store_wavefronts"] for v in ("3.3.1", "3.4.0")}
    assert stores == {"3.2.0": 256, "3.3.1": 1024, "3.4.0": 1024, "3.6.0": 128}
