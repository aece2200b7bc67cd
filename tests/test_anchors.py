"""Validation patterns end at the end of the text: ``$`` in Python also matches before a
final newline, so ``--arch $'sm_90\\n'`` used to reach run.sh (issue 13, item 4)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import ROOT

SPEC = ROOT / "access_specs" / "transpose_naive.yaml"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stdout + result.stderr


def test_arch_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    code, out = run("verify", str(SPEC), "--emit", str(tmp_path / "o"), "--arch", "sm_90\n")
    assert code == 2, out
    assert not (tmp_path / "o" / "run.sh").exists()
    code, out = run("verify", str(SPEC), "--emit", str(tmp_path / "o"), "--arch", "sm_90")
    assert code == 0, out
    assert "sm_90\n" in (tmp_path / "o" / "run.sh").read_text()


def test_a_name_with_a_trailing_newline_is_not_an_identifier(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        'block: [32]\nparams: {"N\\n": 2}\narrays: {a: {dtype: float, shape: [32]}}\n'
        "accesses: [{array: a, index: [lane]}]\n"
    )
    code, out = run("analyze", str(spec))
    assert code == 2, out
    assert "'N\\n' is not a valid name" in out, out
