"""The project lints its own specs, and its CI examples are real: pre-commit, workflow, docs."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.lint.rules import RULES
from shmem_cli.render.checks.lint_text import render_rules

from .conftest import ROOT

WORKFLOW = ROOT / "docs" / "examples" / "shmem-lint.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"

CONFLICT = """\
name: conflicted
block: [32]
arrays:
  a: {dtype: float, shape: [64]}
accesses:
  - name: even words
    array: a
    index: [2 * tid]
"""


def shmem_command() -> list[str]:
    """The installed `shmem` console script (beside this interpreter, else on PATH)."""
    beside = Path(sys.executable).parent / "shmem"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("shmem")
    return [found] if found else [sys.executable, "-m", "shmem_cli.cli"]


def test_the_project_lints_its_own_access_specs() -> None:
    proc = subprocess.run(
        # likely-vectorized (SH009) is a heuristic about nvcc: five example accesses are
        # scalar loops nvcc would merge, described as written in the source on purpose
        [*shmem_command(), "lint", "access_specs/", "--ignore", "SH009"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("no findings in ")


def test_pyproject_names_the_specs_to_lint(monkeypatch: pytest.MonkeyPatch) -> None:
    """[tool.shmem] paths: a bare `shmem lint` in the repository checks access_specs/."""
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["lint", "--format", "json"])
    assert result.exit_code == 0, result.output
    files = {f["path"] for f in json.loads(result.stdout)["files"]}
    expected = {p.relative_to(ROOT).as_posix() for p in (ROOT / "access_specs").rglob("*.y*ml")}
    assert files == expected


# --- pre-commit -----------------------------------------------------------------------------------


def hook() -> dict[str, Any]:
    hooks = yaml.safe_load(HOOKS.read_text())
    assert isinstance(hooks, list)
    (found,) = [h for h in hooks if h["id"] == "shmem-lint"]
    assert isinstance(found, dict)
    return found


def test_pre_commit_hook_definition() -> None:
    h = hook()
    assert h["entry"] == "shmem lint"
    assert h["language"] == "python"  # pre-commit installs this repository, giving `shmem`
    assert set(h) <= {
        "id",
        "name",
        "description",
        "entry",
        "language",
        "files",
        "types",
        "args",
        "exclude",
        "pass_filenames",
        "require_serial",
        "minimum_pre_commit_version",
    }
    files = re.compile(h["files"])
    for path in ("access_specs/transpose_naive.yaml", "access_specs/sub/x.yml"):
        assert files.search(path), path
    for path in ("docs/examples/shmem-lint.yml", ".pre-commit-hooks.yaml", "access_specs/notes.md"):
        assert not files.search(path), path
    for spec in sorted((ROOT / "access_specs").glob("*.yaml")):
        assert files.search(spec.relative_to(ROOT).as_posix())


def test_pre_commit_hook_entry_runs(tmp_path: Path) -> None:
    """What pre-commit does: the entry, its args, then the staged file names."""
    h = hook()
    (tmp_path / "access_specs").mkdir()
    good = tmp_path / "access_specs" / "good.yaml"
    good.write_text(CONFLICT.replace("2 * tid", "tid"))
    bad = tmp_path / "access_specs" / "bad.yaml"
    bad.write_text(CONFLICT)
    argv = shlex.split(h["entry"]) + list(h.get("args", []))
    assert argv[0] == "shmem"
    command = shmem_command() + argv[1:]
    env = {**os.environ, "NO_COLOR": "1"}
    ok = subprocess.run(
        [*command, "access_specs/good.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    failed = subprocess.run(
        [*command, "access_specs/good.yaml", "access_specs/bad.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert failed.returncode == 1
    assert failed.stdout.startswith("access_specs/bad.yaml:6:5: error: 2-way bank conflict")


# --- the GitHub Actions example -------------------------------------------------------------------


def workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(data, dict)
    return data


def steps() -> list[dict[str, Any]]:
    (job,) = workflow()["jobs"].values()
    result = job["steps"]
    assert isinstance(result, list)
    return result


def run_lines() -> list[list[str]]:
    out = []
    for step in steps():
        for line in step.get("run", "").replace("\\\n", " ").splitlines():
            if line.strip() and not line.strip().startswith("#"):
                out.append(shlex.split(line))
    return out


def test_workflow_is_a_valid_workflow() -> None:
    data = workflow()
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"push", "pull_request"}
    assert data["permissions"]["security-events"] == "write"
    (job,) = data["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    for step in steps():
        assert ("uses" in step) != ("run" in step), step
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@v\d+", step["uses"]), step["uses"]


def test_workflow_commands_are_real_shmem_commands() -> None:
    shmem_runs = [argv for argv in run_lines() if argv[0] == "shmem"]
    assert len(shmem_runs) == 3
    for argv in shmem_runs:
        ctx = main.make_context("shmem", argv[1:2])
        command = main.get_command(ctx, argv[1])
        assert command is not None, argv
        try:
            sub = command.make_context(argv[1], argv[2:])  # raises on unknown options or values
        except click.UsageError as exc:  # pragma: no cover - the assertion explains
            pytest.fail(f"{shlex.join(argv)}: {exc}")
        for path in sub.params["paths"]:
            assert (ROOT / path).exists(), path
    formats = [argv[argv.index("--format") + 1] for argv in shmem_runs]
    assert formats == ["github", "sarif", "junit"]
    # only the first lint decides the job; the reports always come out
    assert "--exit-zero" not in shmem_runs[0]
    assert all("--exit-zero" in argv for argv in shmem_runs[1:])
    others = [argv for argv in run_lines() if argv[0] != "shmem"]
    assert others == [["python", "-m", "pip", "install", "."]]
    assert (ROOT / "pyproject.toml").exists()


def test_workflow_uploads_the_files_it_writes() -> None:
    written = {argv[argv.index("--output") + 1] for argv in run_lines() if "--output" in argv}
    assert written == {"shmem.sarif", "shmem-junit.xml"}
    by_action = {s["uses"].split("@")[0]: s for s in steps() if "uses" in s}
    assert by_action["github/codeql-action/upload-sarif"]["with"]["sarif_file"] == "shmem.sarif"
    kept = set(by_action["actions/upload-artifact"]["with"]["path"].split())
    assert kept == written
    # every step after the failing lint step must still run
    all_steps = steps()
    gate = next(i for i, s in enumerate(all_steps) if "--format github" in s.get("run", ""))
    for step in all_steps[gate + 1 :]:
        assert step.get("if") == "always()", step


def test_ci_doc_shows_the_example_workflow() -> None:
    text = (ROOT / "docs" / "ci.md").read_text()
    blocks = re.findall(r"^```yaml\n(.*?)^```$", text, re.S | re.M)
    assert WORKFLOW.read_text() in blocks
    for block in blocks:
        yaml.safe_load(block)  # every YAML example in the page parses


# --- docs/lint.md ---------------------------------------------------------------------------------


def test_rules_reference_is_generated_from_the_docstrings() -> None:
    doc = ROOT / "docs" / "lint.md"
    text = doc.read_text()
    start, end = "<!-- rules:start -->\n", "<!-- rules:end -->"
    generated = render_rules(RULES.rules, "markdown")
    current = text[text.index(start) + len(start) : text.index(end)]
    if current != generated and os.environ.get("SHMEM_UPDATE_DOCS"):
        doc.write_text(text.replace(current, generated))
        current = generated
    assert current == generated, "docs/lint.md is stale: rerun this test with SHMEM_UPDATE_DOCS=1"
    for rule in RULES:
        assert f"### {rule.code} {rule.name}" in text
