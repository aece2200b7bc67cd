"""Round 24 of attacking the CLI as a hostile user (docs/robustness.md): what was found."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shmem_cli.analysis.sweep.options import parse_values

from .conftest import ROOT
from .hostile import refused, shmem

COLUMN = ROOT / "shmem_cli" / "example_specs" / "column_read_32x32.yaml"


@pytest.mark.parametrize(
    ("text", "digits"),
    [("0..100000000000000000000", "21"), ("1,2," + "9" * 30, "30"), ("1..4:" + "7" * 25, "25")],
)
def test_a_sweep_value_past_20_digits_is_said_as_that(text: str, digits: str) -> None:
    # it said "is not a list of integers or a range (a..b, a..b:step, a,b,c)" of a range
    with pytest.raises(
        ValueError, match=f"holds a number of {digits} digits; a value here has at most 20"
    ):
        parse_values(text)
    assert parse_values("0..2") == (0, 1, 2)  # 20 digits and fewer, as before


def test_a_sweep_value_past_20_digits_on_the_command_line() -> None:
    ran = shmem("sweep", str(COLUMN), "--pad", "0..100000000000000000000")
    refused(ran, "--pad 0..100000000000000000000: '0..100000000000000000000' holds a number of 21")


def test_a_spec_past_the_size_limit_says_no_size_it_does_not_have(tmp_path: Path) -> None:
    # read to one byte past the limit, it said "(2097153 bytes, limit 2097152)" of 3 MB
    spec = tmp_path / "big.yaml"
    spec.write_bytes(b"name: x\n" + b"a: 1\n" * 600_000)
    ran = shmem("analyze", str(spec))
    refused(ran, "spec file too large: more than 2,097,152 bytes (the limit, 2 MiB); split it")
    assert "2097153" not in ran.text and "3,000,008" not in ran.text


def test_lint_text_never_sends_a_quoted_nul_or_escape_raw(tmp_path: Path) -> None:
    # the lint's text line spelled only the file's name: a finding quoting an access's name
    # or a kernel argument's key wrote its NUL or terminal escape to the terminal as it was
    compiled = ROOT / "tests" / "data" / "compiled_specs"
    shutil.copytree(compiled / "kernels", tmp_path / "kernels")
    # (the key is refused at the spec check now, its NUL quoted in that error)
    text = (compiled / "row_scale_v1.yaml").read_text()
    key = text.replace("  name: row_scale\n", '  name: row_scale\n  args: {"n\\0": 1}\n')
    (tmp_path / "s.yaml").write_text(key)
    text = text.replace("  - name: w[tx]\n", '  - name: "w\\e[31m\\u202e[tx]"\n')
    (tmp_path / "t.yaml").write_text(text)
    ran = shmem("lint", "s.yaml", "t.yaml", cwd=tmp_path)
    assert "Traceback" not in ran.text
    assert "\x00" not in ran.stdout and "\x1b" not in ran.stdout and "\u202e" not in ran.stdout
    assert "kernel.args: 'n\\x00' holds a control character" in ran.stdout
    assert "'w\\x1b[31m\\u202e[tx]'" in ran.stdout


@pytest.mark.parametrize("command", [["analyze"], ["lint"], ["trace", "-b", "32"]])
def test_a_link_loop_or_a_dangling_link_given_is_said_as_that(
    tmp_path: Path, command: list[str]
) -> None:
    # both were "no such file or directory", though `ls` lists them
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    (tmp_path / "dangling.yaml").symlink_to("gone.yaml")
    ran = shmem(command[0], "loop.yaml", *command[1:], cwd=tmp_path)
    refused(
        ran,
        "error: a loop of links (each links to the next, and none to a file or folder): loop.yaml",
    )
    ran = shmem(command[0], "dangling.yaml", *command[1:], cwd=tmp_path)
    refused(
        ran, "error: a link to nothing (it names 'gone.yaml', which is not there): dangling.yaml"
    )
