"""A new user's first steps (issue 15): the README's commands work as printed after `make run`,
the examples come with the package, a spec can come from standard input."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from click.testing import CliRunner

import shmem_cli
from shmem_cli.cli import main

from .conftest import ROOT

SPECS = ROOT / "access_specs"


def quick_start() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Quick start") :]
    block = section[section.index("```sh\n") + 6 : section.index("```\n", section.index("```sh"))]
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def test_readme_activates_the_venv_before_the_first_shmem_command() -> None:
    steps = quick_start()
    first_shmem = next(i for i, s in enumerate(steps) if s.startswith("shmem "))
    assert steps[0] == "make run"
    assert ". .venv/bin/activate" in steps[:first_shmem]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^VENV := \.venv$", makefile, re.M)
    # `make run` itself tells how, as the README does
    run_recipe = makefile[
        makefile.index("\nrun:") : makefile.index("\n\n", makefile.index("\nrun:"))
    ]
    assert ". $(VENV)/bin/activate" in run_recipe and "make shell" in run_recipe
    assert "\nshell:" in makefile


def test_readme_shmem_commands_work_as_printed() -> None:
    # what the user types after activating: each `shmem ...` line of the quick start
    commands = [s for s in quick_start() if s.startswith("shmem ")]
    assert commands
    for command in commands:
        args = shlex.split(command)[1:]
        done = subprocess.run(
            [sys.executable, "-m", "shmem_cli.cli", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.strip(), command


def test_packaging_metadata_is_current() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = meta["project"]
    assert project["license"] == "MIT"  # an SPDX string: no setuptools deprecation warning
    assert "version" not in project and project["dynamic"] == ["version"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "shmem_cli.__version__"}
    assert any(r.startswith("setuptools>=77") for r in meta["build-system"]["requires"])
    data = meta["tool"]["setuptools"]["package-data"]["shmem_cli"]
    assert "example_specs/*.yaml" in data and "example_specs/kernels/*.cu" in data
    result = CliRunner().invoke(main, ["--version"])
    assert shmem_cli.__version__ in result.stdout


def test_examples_are_the_repository_specs() -> None:
    bundled = ROOT / "shmem_cli" / "example_specs"
    assert sorted(p.name for p in bundled.glob("*.yaml")) == sorted(
        p.name for p in SPECS.glob("*.yaml")
    )
    listing = CliRunner().invoke(main, ["examples"])
    assert listing.exit_code == 0
    names = [line.split()[0] for line in listing.stdout.splitlines()]
    kernels = sorted(f"kernels/{p.name}" for p in (SPECS / "kernels").glob("*.cu"))
    assert names == sorted(p.stem for p in SPECS.glob("*.yaml")) + kernels
    assert "kernels/matmul.cu" in kernels and "kernels/transpose.cu" in kernels
    assert "transpose_naive" in names
    one = CliRunner().invoke(main, ["examples", "transpose_naive"])
    assert one.stdout == (SPECS / "transpose_naive.yaml").read_text()


def test_examples_copy_and_unknown_name(tmp_path: Path) -> None:
    target = tmp_path / "access_specs"
    done = CliRunner().invoke(main, ["examples", "--copy", str(target)])
    assert done.exit_code == 0
    assert sorted(p.name for p in target.glob("*.yaml")) == sorted(
        p.name for p in SPECS.glob("*.yaml")
    )
    # the example kernels for shmem trace come along, in kernels/
    assert sorted(p.name for p in (target / "kernels").iterdir()) == [
        "matmul.cu",
        "transpose.cu",
        "warp_sgemm.cu",
    ]
    assert (target / "kernels" / "matmul.cu").read_text() == (
        SPECS / "kernels" / "matmul.cu"
    ).read_text()
    kernel = CliRunner().invoke(main, ["examples", "kernels/transpose.cu"])
    assert kernel.stdout == (SPECS / "kernels" / "transpose.cu").read_text()
    missing = CliRunner().invoke(main, ["examples", "nope"])
    assert missing.exit_code == 2 and "no example named 'nope'" in missing.stderr


def test_help_texts_point_to_what_a_plain_install_has() -> None:
    for command in ([], ["analyze"], ["sweep"], ["lint"], ["verify"], ["rules"], ["trace"]):
        text = CliRunner().invoke(main, [*command, "--help"]).stdout
        if "access_specs/" in text:
            assert "shmem examples --copy access_specs" in text, command
        assert "docs/" not in text.replace("github.com", ""), command


def test_dash_reads_the_spec_from_standard_input() -> None:
    spec = (SPECS / "column_read_32x32.yaml").read_text()
    result = CliRunner().invoke(main, ["analyze", "-", "--no-tables"], input=spec)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("<stdin>")
    assert "32-way" in result.stdout
    bad = CliRunner().invoke(main, ["analyze", "-", "--format", "json"], input="name: x\n")
    assert bad.exit_code == 2
    assert bad.stderr.startswith("<stdin>:1:1: error: missing required top-level key")
    swept = CliRunner().invoke(main, ["sweep", "-", "--pad", "0..1"], input=spec)
    assert swept.exit_code == 0 and "<stdin>" in swept.stdout
