"""A name or a path that holds a line break never starts a line of a report of its own: a
line ``::error file=...::text`` in a CI log is a command to the GitHub Actions runner (an
annotation, ``::add-mask::``, ``::stop-commands::``), and a spec or a file name of a pull
request could forge one in `shmem lint`'s and `shmem analyze`'s text."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

FORGED = "\n::error file=x.cu,line=1::forged"
SPEC = "block: [32]\narrays:\n  a: {dtype: float, shape: [64]}\naccesses:\n"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stdout + result.stderr


def forged_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.lstrip().startswith("::")]


@pytest.mark.parametrize(
    ("head", "access", "where", "key"),
    [
        ('name: "t\\n::error::x"\n', "r", "1:7", "name"),
        ("", "r\\n::error::x", "5:12", "accesses[0].name"),
    ],
)
def test_a_name_with_a_line_break_is_refused(
    tmp_path: Path, head: str, access: str, where: str, key: str
) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(head + SPEC + f'  - {{name: "{access}", array: a, index: [threadIdx.x]}}\n')
    code, out = run("analyze", str(spec))
    assert code == 2
    assert f"{spec}:{where}: error: {key}: " in out
    assert "holds a line break: a name is one line of the report" in out
    assert forged_lines(out) == []


def test_a_file_name_with_a_line_break_is_shown_on_one_line(tmp_path: Path) -> None:
    conflicted = tmp_path / f"a{FORGED}.yaml"
    conflicted.write_text(SPEC + "  - {name: r, array: a, index: [threadIdx.x * 2]}\n")
    clean = tmp_path / f"b{FORGED}.yaml"
    clean.write_text(SPEC + "  - {name: r, array: a, index: [threadIdx.x]}\n")
    broken = tmp_path / f"c{FORGED}.yaml"
    broken.write_text(SPEC + "  - {name: r, array: zz, index: [threadIdx.x]}\n")
    for args, status in [
        (["analyze", "--no-color"], 2),
        (["analyze", "--no-color", "--tables"], 2),
        (["analyze", "--no-color", "--suggest"], 2),
        (["lint"], 2),
        (["sweep", str(conflicted), "--pad", "0..1", "--no-color"], 0),
    ]:
        code, out = run(*args, *([] if args[0] == "sweep" else [str(tmp_path)]))
        assert code == status, out
        assert forged_lines(out) == [], (args, out)
        assert "a\\n::error file=x.cu,line=1::forged" in out, (args, out)


def test_a_kernel_args_key_with_a_control_character_is_refused_at_the_spec_check(
    tmp_path: Path,
) -> None:
    # it was taken, and only the trace said "kernel.args k\x00x: no parameter of that name"
    (tmp_path / "k.cu").write_text("__global__ void k(int m) {}\n")
    spec = tmp_path / "s.yaml"
    kernel = 'kernel:\n  source: k.cu\n  name: k\n  args: {m: 2, 0: 3, "k\\0x": 1, "\\e[2J": 4}\n'
    spec.write_text(kernel + SPEC + "  - {name: r, array: a, index: [threadIdx.x]}\n")
    hint = (
        "holds a control character: write the parameter's name as the kernel declares it "
        "(NAME or NAME+OFFSET), or its 0-based position"
    )
    for command in ("analyze", "lint"):
        code, out = run(command, str(spec))
        assert code == 2, out
        assert f"{spec}:4:22: error: kernel.args: 'k\\x00x' {hint}" in out, out
        assert f"{spec}:4:33: error: kernel.args: '\\x1b[2J' {hint}" in out, out
        assert out.count(hint) == 2 and "\x00" not in out and "\x1b" not in out, out
