"""The architecture as data (issue 19): the profile registry is the one place an
architecture is named; code for an architecture whose rules were not measured is either
refused (a spec) or costed under the default profile and says so (a trace)."""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.hardware import arch
from shmem_cli.spec.compile import spec_from_mapping
from shmem_cli.spec.schema import spec_schema, validate
from shmem_cli.spec.source import load_yaml

from .conftest import ROOT, needs_nvdisasm
from .conftest import TRACE_DATA as DATA

PACKAGE = ROOT / "shmem_cli"
SPEC = """\
block: [32]
arch: {arch}
arrays:
  a: {{dtype: float, shape: [32]}}
accesses:
  - {{name: r, array: a, index: [lane]}}
"""


def _string_constants(tree: ast.Module) -> Iterator[str]:
    """Every string constant of a module but its docstrings (prose, like comments)."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and id(node) not in docstrings:
            yield node.value


def test_an_architecture_is_named_in_the_profile_registry_only() -> None:
    naming = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if any("sm_90" in s for s in _string_constants(ast.parse(path.read_text())))
    )
    assert naming == ["hardware/arch.py"]
    assert "sm_90" not in (PACKAGE / "spec_schema.json").read_text()
    assert arch.DEFAULT_ARCH in arch.PROFILES


def test_the_schema_enum_is_the_registry() -> None:
    assert spec_schema()["properties"]["arch"]["enum"] == list(arch.PROFILES)


def test_a_spec_for_an_unmeasured_architecture_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(SPEC.format(arch="sm_80"))
    result = CliRunner().invoke(main, ["analyze", str(path)])
    assert result.exit_code == 2
    want = (
        f"{path}:2:7: error: arch: no shared-memory rules were measured for sm_80; shmem "
        "models sm_90 (measured on an H200): leave arch out or write arch: sm_90"
    )
    assert want in result.output
    assert "Traceback" not in result.output
    # the Python API (no schema pass) refuses it with the same words
    with pytest.raises(Exception, match="no shared-memory rules were measured for sm_80"):
        spec_from_mapping(load_yaml(SPEC.format(arch="sm_80"), "a.yaml").data)


def test_a_registered_profile_is_one_a_spec_may_name() -> None:
    """Adding an architecture is one profile in the registry: the schema accepts its
    name and the spec is costed with its numbers."""
    wide = dataclasses.replace(arch.SM90, name="sm_test", measured_on="test GPU", banks=64)
    arch.register(wide)
    try:
        doc = load_yaml(SPEC.format(arch="sm_test"), "a.yaml")
        assert validate(doc) == []
        compiled = spec_from_mapping(doc.data)
        assert compiled.arch is wide
        assert arch.rules_note("sm_test") is None
    finally:
        arch.unregister("sm_test")
    assert "sm_test" not in spec_schema()["properties"]["arch"]["enum"]


def test_rules_of_an_unmeasured_architecture_are_named() -> None:
    assert arch.rules_for("sm_90") is arch.SM90 and arch.rules_note("sm_90") is None
    assert arch.rules_for("sm_80") is arch.SM90
    assert arch.rules_note("sm_80") == (
        "costed with the sm_90 (H200-measured) rules (none were measured for sm_80)"
    )


@needs_nvdisasm
def test_an_sm80_cubin_says_which_rules_costed_it() -> None:
    args = ["trace", str(DATA / "emu_basic_sm80.cubin"), "--kernel", "emu_transpose<0>"]
    args += ["--block", "32,8", "--no-tables"]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0, text.output
    header = text.output.splitlines()[0]
    assert "sm_80, costed with the sm_90 (H200-measured) rules (none were measured for sm_80)" in (
        header
    )
    doc = json.loads(CliRunner().invoke(main, [*args, "-f", "json"]).output)
    kernel = doc["files"][0]["kernels"][0]
    assert (kernel["arch"], kernel["rules"]) == ("sm_80", "sm_90")
    assert kernel["rules_note"] == arch.rules_note("sm_80")


@needs_nvdisasm
def test_an_sm90_cubin_is_costed_with_its_own_rules() -> None:
    args = ["trace", str(DATA / "column_read.sm_90.cubin"), "--block", "32,32"]
    doc = json.loads(CliRunner().invoke(main, [*args, "-f", "json"]).output)
    kernel = doc["files"][0]["kernels"][0]
    assert (kernel["arch"], kernel["rules"], kernel["rules_note"]) == ("sm_90", "sm_90", None)
    text = CliRunner().invoke(main, [*args, "--no-tables"]).output
    assert "costed with" not in text
