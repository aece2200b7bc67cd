"""The check formats (GitHub, SARIF, JUnit) for every command that can fail a check.

``shmem verify`` fails on a prediction the GPU did not confirm; its report goes through
the same registry as ``shmem lint``'s (shmem_cli/render/checks/formats.py). The counters
below are made up to disagree with shmem on purpose: the column read of a 32x32 float
tile costs 32 wavefronts per request (1024 for 32 warps), the CSV says 1000.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from shmem_cli.cli import main

from .test_verify_cli import SPEC, _csv, _recorded

ROOT = Path(__file__).resolve().parent.parent


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


# One entry added to the registry's FORMATS, nothing else: both commands offer it.
_NEW_FORMAT = textwrap.dedent(
    """
    import pathlib, sys, types

    import shmem_cli.render as render

    path = pathlib.Path(render.__file__).parent / "checks" / "formats.py"
    source = path.read_text()
    end = '    "junit": _junit,\\n}'
    assert source.count(end) == 1
    entry = '    "count": lambda report, ctx: f"{ctx.tool}: {len(report.findings)}\\\\n",\\n'
    source = source.replace(end, '    "junit": _junit,\\n' + entry + "}")
    module = types.ModuleType("shmem_cli.render.checks.formats")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module
    exec(compile(source, str(path), "exec"), module.__dict__)
    import shmem_cli.render.checks as checks

    checks.formats = module

    from shmem_cli.cli import main

    sys.argv = ["shmem", *sys.argv[1:]]
    main()
    """
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _NEW_FORMAT, *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


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


def test_a_format_added_to_the_registry_reaches_lint_and_verify(tmp_path: Path) -> None:
    spec = tmp_path / "conflict.yaml"
    spec.write_text(CONFLICT)  # a 32-way conflict no expect: accepts (SH001)
    lint = _run("lint", str(spec), "--format", "count")
    assert (lint.returncode, lint.stdout) == (1, "shmem lint: 1\n"), lint.stderr
    csv_path = _recorded(tmp_path, _csv((32, 32), (32, 1000)))
    verify = _run("verify", SPEC, "--from-ncu", csv_path, "--format", "count")
    assert (verify.returncode, verify.stdout) == (1, "shmem verify: 1\n"), verify.stderr
