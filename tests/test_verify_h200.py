"""Replay of the ``shmem verify`` run recorded on an NVIDIA H200, without a GPU.

``tests/data/verify_h200/<set>/`` holds what the run on 2026-11-29 brought back
for each set (see docs/verification.md, "Results on the H200"): the raw Nsight
Compute CSV (``ncu.csv``), the SASS dump of the built program (``sass.txt.gz``),
the generated source (``shmem_verify.cu.gz``), ``manifest.json``, ``env.txt``
and the report it printed (``report.txt``). The sets:

* ``specs``: the example specs as they were then (copied to ``specs/access_specs/``);
* ``public``: the 167 public hardware-truth cases as specs;
* ``probe``: the project's 185 probe cases minus the 5 compare-and-swap-loop atomics.

The hardware-truth specs are not stored: they are written again from
``tests/hwtruth.py`` exactly as the run's were (one file per case named
``<set>_<case>.yaml``, whose stem is part of the kernel names the CSV holds).
Replaying ``--from-ncu`` on them checks the engine, the kernel naming and the
SASS expectations against the recorded hardware counts.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from shmem_cli.cli import main
from tests.hwtruth import case_to_spec, is_cas_loop, probe_cases, public_cases

from .conftest import TEST_DATA

# the probe sets that existed when shmem verify ran on the H200 (h200_probe3 came later)
VERIFIED_PROBE_SETS = ("h200_probe", "h200_probe2")

DATA = TEST_DATA / "verify_h200"
SETS = {"specs": 88, "public": 167, "probe": 180}


def _cases(group: str) -> list[dict[str, Any]]:
    cases = public_cases() if group == "public" else probe_cases(VERIFIED_PROBE_SETS)
    return [c for c in cases if not is_cas_loop(c)]


@pytest.fixture(scope="module")
def spec_paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Per set, the spec folder to replay (the hardware-truth sets written afresh)."""
    out = {"specs": str(DATA / "specs" / "access_specs")}
    for group in ("public", "probe"):
        folder = tmp_path_factory.mktemp(group)
        for case in _cases(group):
            text = yaml.safe_dump(case_to_spec(case), sort_keys=False)
            (folder / f"{group}_{case['name']}.yaml").write_text(text)
        out[group] = str(folder)
    return out


def _replay(paths: dict[str, str], name: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    res = CliRunner().invoke(
        main,
        [
            "verify",
            paths[name],
            "--from-ncu",
            str(DATA / name / "ncu.csv"),
            "--format",
            "json",
            *extra,
        ],
    )
    report = json.loads(res.stdout) if res.stdout.strip().startswith("{") else {}
    return res.exit_code, report, res.output


@pytest.fixture(scope="module")
def reports(spec_paths: dict[str, str]) -> dict[str, dict[str, Any]]:
    out = {}
    for name in SETS:
        code, report, text = _replay(spec_paths, name)
        assert code == 0, text[-2000:]
        out[name] = report
    return out


def _access(report: dict[str, Any], kernel: str) -> dict[str, Any]:
    hits: list[dict[str, Any]] = [a for a in report["accesses"] if a["kernel"] == kernel]
    assert len(hits) == 1, kernel
    return hits[0]


def test_the_hardware_truth_sets_have_the_sizes_the_run_had() -> None:
    assert len(_cases("public")) == 167
    assert len(_cases("probe")) == 180
    assert len(probe_cases(VERIFIED_PROBE_SETS)) - len(_cases("probe")) == 5


@pytest.mark.parametrize("name", list(SETS))
def test_every_recorded_access_matches(reports: dict[str, dict[str, Any]], name: str) -> None:
    report = reports[name]
    assert report["counts"] == {
        "match": SETS[name],
        "mismatch": 0,
        "unmeasurable": 0,
        "not measured": 0,
    }
    assert report["arch"] == "sm_90"
    assert report["device"].startswith("NVIDIA H200 (sm_90), driver 580.159.04")
    assert report["errors"] == []
    for a in report["accesses"]:
        assert a["sass"] is not None and a["sass"]["ok"], a["kernel"]  # the gzipped dump was read
        assert a["measured"]["requests"] == a["predicted"]["requests"], a["kernel"]
        assert a["measured"]["wavefronts"] == a["predicted"]["wavefronts"], a["kernel"]
        assert "SASS not checked" not in a["note"]


@pytest.mark.parametrize("name", list(SETS))
def test_replayed_kernels_are_the_manifests(reports: dict[str, dict[str, Any]], name: str) -> None:
    """Kernel names, instructions and predictions now are those the GPU run was built with."""
    manifest = json.loads((DATA / name / "manifest.json").read_text())
    assert manifest["arch"] == "sm_90"
    recorded = {
        k["kernel"]: (k["op"], k["instruction"], k["predicted"]) for k in manifest["kernels"]
    }
    now = {
        a["kernel"]: (a["op"], a["instruction"], a["predicted"]) for a in reports[name]["accesses"]
    }
    assert len(recorded) == SETS[name]
    assert now == recorded


@pytest.mark.parametrize("group", ["public", "probe"])
def test_verify_measured_what_the_lab_measured(
    reports: dict[str, dict[str, Any]], group: str
) -> None:
    """Two independent measurements: the lab's kernels then, shmem verify's kernels now."""
    lab = {c["name"]: c["measured"] for c in _cases(group)}
    got = {a["access"]: a["measured"] for a in reports[group]["accesses"]}
    assert set(got) == set(lab)
    for name, counts in lab.items():
        assert (got[name]["requests"], got[name]["wavefronts"]) == (
            counts["requests"],
            counts["wavefronts"],
        ), name


def test_arbitration_is_taken_off_the_raw_wavefronts(reports: dict[str, dict[str, Any]]) -> None:
    keys = ("requests", "wavefronts", "wavefronts_raw", "arbitration")
    col_access = _access(reports["specs"], "v_column_read_32x32_01_column_read_tile_tx_ty")
    col = {k: col_access["measured"][k] for k in keys}
    assert col == {"requests": 32, "wavefronts": 1024, "wavefronts_raw": 1030, "arbitration": 6}
    # a single-access kernel: the whole arbitration counter is in the op's raw count
    assert col_access["match_basis"] == "raw less arbitration"
    padded = _access(reports["specs"], "v_column_read_32x33_01_column_read_tile_tx_ty")["measured"]
    assert {k: padded[k] for k in keys} == {
        "requests": 32,
        "wavefronts": 32,
        "wavefronts_raw": 37,
        "arbitration": 5,
    }
    tile = _access(reports["public"], "v_public_tile_col_pad33_00_tile_col_pad33")["measured"]
    assert {k: tile[k] for k in keys} == {
        "requests": 32,
        "wavefronts": 32,
        "wavefronts_raw": 37,
        "arbitration": 5,
    }
    corrected = [
        a["kernel"] for r in reports.values() for a in r["accesses"] if a["measured"]["arbitration"]
    ]
    assert len(corrected) == 3


def test_warps_switched_off_by_a_predicate_issue_no_request(
    reports: dict[str, dict[str, Any]],
) -> None:
    """`when` that disables whole warps: the LDS is predicated, not branched around, yet not
    counted."""
    warp1 = _access(reports["public"], "v_public_pred_warp1_col_00_pred_warp1_col")
    assert warp1["sass"] == {"ok": True, "found": "LDS", "predicated": True}
    # 64 threads: both warps execute @!P0 LDS, the hardware counts one request
    assert warp1["measured"]["requests"] == 1
    # reduction_sequential: 256 threads, s = 128 .. 1;
    # 4+2+1+1+1+1+1+1 = 12 warps have an active lane
    seq = _access(reports["specs"], "v_reduction_sequential_01_read_sdata_tid")
    assert seq["sass"]["predicated"] is True
    assert seq["measured"]["requests"] == 12


def test_sass_dump_can_be_plain_or_gzipped_and_given_explicitly(
    spec_paths: dict[str, str], tmp_path: Path
) -> None:
    plain = tmp_path / "dump.txt"
    plain.write_bytes(gzip.decompress((DATA / "specs" / "sass.txt.gz").read_bytes()))
    for dump in (plain, DATA / "specs" / "sass.txt.gz"):
        code, report, _ = _replay(spec_paths, "specs", "--sass", str(dump))
        assert code == 0
        assert all(a["sass"]["ok"] for a in report["accesses"])
        assert report["counts"]["match"] == 88


def test_a_broken_gzipped_dump_is_a_usage_error(spec_paths: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "sass.txt.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    code, _, text = _replay(spec_paths, "specs", "--sass", str(bad))
    assert code == 2
    assert f"{bad}: error: cannot read the SASS dump: bad gzip data" in text
    assert "Traceback" not in text
