"""The check formats (GitHub, SARIF, JUnit) for every command that can fail a check.

``shmem verify`` fails on a prediction the GPU did not confirm; its report goes through
the same registry as ``shmem lint``'s (shmem_cli/render/checks/formats.py). The counters
below are made up to disagree with shmem on purpose: the column read of a 32x32 float
tile costs 32 wavefronts per request (1024 for 32 warps), the CSV says 1000.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from shmem_cli.checks.report import CheckReport
from shmem_cli.cli import main
from shmem_cli.render.checks import formats
from shmem_cli.render.checks.formats import CheckContext

from .test_verify_cli import SPEC, _csv, _recorded


def _verify(tmp_path: Path, fmt: str) -> tuple[int, str]:
    csv_path = _recorded(tmp_path, _csv((32, 32), (32, 1000)))
    done = CliRunner().invoke(main, ["verify", SPEC, "--from-ncu", csv_path, "--format", fmt])
    return done.exit_code, done.output


def test_verify_mismatch_as_github_annotation(tmp_path: Path) -> None:
    code, out = _verify(tmp_path, "github")
    assert code == 1
    (line,) = [x for x in out.splitlines() if x.startswith("::error ")]
    assert "file=" in line and "column_read_32x32.yaml" in line
    assert ",line=" in line and "title=SV001 prediction-mismatch" in line
    assert "predicted 32 requests and 1024 wavefronts, measured 32 requests and 1000" in line
    assert out.splitlines()[-1].startswith("shmem verify: 1 finding")


def test_verify_mismatch_as_sarif(tmp_path: Path) -> None:
    code, out = _verify(tmp_path, "sarif")
    assert code == 1
    run = json.loads(out)["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["SV001", "SV002"]
    (result,) = run["results"]
    assert (result["ruleId"], result["level"]) == ("SV001", "error")
    where = result["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"].endswith("column_read_32x32.yaml")


def test_verify_mismatch_as_junit(tmp_path: Path) -> None:
    code, out = _verify(tmp_path, "junit")
    assert code == 1
    root = ET.fromstring(out)
    assert (root.get("name"), root.get("tests"), root.get("failures")) == ("shmem verify", "2", "1")
    failed = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["column read tile[tx][ty]"]


CONFLICT = """\
name: column read
block: [32, 32]
arrays:
  tile: {dtype: float, shape: [32, 32]}
accesses:
  - name: column read tile[tx][ty]
    array: tile
    index: [threadIdx.x, threadIdx.y]
"""


def _count(report: CheckReport, ctx: CheckContext) -> str:
    return f"{ctx.tool}: {len(report.findings)}\n"


def test_a_format_registered_reaches_lint_and_verify(tmp_path: Path) -> None:
    """One ``register_format``, nothing else: both commands offer and draw it."""
    spec = tmp_path / "conflict.yaml"
    spec.write_text(CONFLICT)  # a 32-way conflict no expect: accepts (SH001)
    csv_path = _recorded(tmp_path, _csv((32, 32), (32, 1000)))
    formats.register_format("count", _count)
    try:
        lint = CliRunner().invoke(main, ["lint", str(spec), "--format", "count"])
        verify = CliRunner().invoke(
            main, ["verify", SPEC, "--from-ncu", csv_path, "--format", "count"]
        )
    finally:
        formats.unregister_format("count")
    assert (lint.exit_code, lint.output) == (1, "shmem lint: 1\n")
    assert (verify.exit_code, verify.output) == (1, "shmem verify: 1\n")
    gone = CliRunner().invoke(main, ["lint", str(spec), "--format", "count"])
    assert gone.exit_code == 2 and "'count' is not one of" in gone.output
