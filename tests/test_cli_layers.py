"""The CLI's layering: commands in their own modules, one Environment, one usage-error style."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from shmem_cli.cli import LAZY_COMMANDS, main
from shmem_cli.commands.environment import Environment

from .conftest import ROOT, TRACE_DATA, needs_nvdisasm

COMMANDS = ROOT / "shmem_cli" / "commands"

BAD = (
    "name: bad\nblock: [32]\narrays: {a: {dtype: float, shape: [32]}}\n"
    "accesses: [{array: b, index: [0]}]\n"
)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_commands_never_import_from_the_group_module() -> None:
    for path in sorted(COMMANDS.glob("*.py")):
        modules = imported_modules(path)
        assert "..cli" not in modules and "shmem_cli.cli" not in modules, path.name


def test_every_command_lives_in_commands() -> None:
    assert set(LAZY_COMMANDS) >= {"analyze", "schema", "sweep", "lint", "rules", "verify"}
    for target in LAZY_COMMANDS.values():
        assert target.startswith("shmem_cli.commands."), target


def test_output_goes_to_the_environment_streams(tmp_path: Path) -> None:
    spec = ROOT / "access_specs" / "column_read_32x33.yaml"
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, env={})
    result = CliRunner().invoke(main, ["analyze", str(spec), "--no-tables"], obj=env)
    assert result.exit_code == 0
    assert result.stdout == ""  # nothing went around the Environment
    assert "1 file(s)" in out.getvalue()


def test_color_and_width_follow_the_environment() -> None:
    assert not Environment(env={"NO_COLOR": "1", "FORCE_COLOR": "1"}).color()
    assert Environment(env={"FORCE_COLOR": "1"}).color()
    assert not Environment(env={"FORCE_COLOR": "1"}).color(no_color=True)
    assert not Environment(env={"FORCE_COLOR": "1"}).color(output="report.txt")
    assert not Environment(stdout=io.StringIO(), env={}).color()  # not a terminal
    assert Environment(columns=90).width(None, color=True) == 90
    assert Environment(columns=90).width(120, color=True) == 120
    assert Environment(columns=90).width(None, color=False) is None


class _Terminal(io.StringIO):
    """Standard output on a terminal."""

    def isatty(self) -> bool:
        return True


def test_plain_text_on_a_terminal_takes_its_width() -> None:
    # NO_COLOR and --no-color take the color away, not the width: laid out 200 wide, an
    # analyze report wrapped line by line on an 80-column terminal
    tty = Environment(stdout=_Terminal(), env={"NO_COLOR": "1"}, columns=80)
    assert not tty.color()
    assert tty.width(None, color=False) == 80
    assert tty.width(None, color=False, output="-") == 80
    assert tty.width(None, color=False, output="report.txt") is None  # a file: 200
    assert tty.width(120, color=False) == 120
    # TERM=dumb (an editor's shell buffer) shows escape codes as text: no color there either
    assert Environment(stdout=_Terminal(), env={}).color()
    assert not Environment(stdout=_Terminal(), env={"TERM": "dumb"}).color()
    assert Environment(stdout=_Terminal(), env={"TERM": "dumb", "FORCE_COLOR": "1"}).color()
    spec = ROOT / "access_specs" / "transpose_naive.yaml"
    result = CliRunner().invoke(main, ["analyze", str(spec), "--no-tables"], obj=tty)
    lines = tty.stdout.getvalue().splitlines()  # type: ignore[attr-defined]
    assert result.exit_code == 0 and lines and max(len(line) for line in lines) <= 80
    assert "\x1b[" not in tty.stdout.getvalue()  # type: ignore[attr-defined]


def test_one_usage_error_style_for_click_and_shmem_errors() -> None:
    missing_argument = CliRunner().invoke(main, ["analyze"])
    missing_file = CliRunner().invoke(main, ["analyze", "no/such.yaml"])
    unknown_option = CliRunner().invoke(main, ["lint", "--frobnicate"])
    for result in (missing_argument, missing_file, unknown_option):
        assert result.exit_code == 2
        first, second = result.stderr.splitlines()
        assert first.startswith("shmem: error: "), result.stderr
        assert second.startswith("(see: ") and second.endswith(" --help)")
    assert "Missing argument 'PATHS...'" in missing_argument.stderr
    assert "no such file or directory: no/such.yaml" in missing_file.stderr


def test_every_missing_path_is_named_not_only_the_first() -> None:
    spec = str(ROOT / "access_specs" / "transpose_naive.yaml")
    for command in ("analyze", "lint", "verify"):
        args = [command, "no/a.yaml", spec, "no/b.yaml"]
        result = CliRunner().invoke(main, args, prog_name="shmem")
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [
            "shmem: error: no such file or directory: no/a.yaml",
            "shmem: error: no such file or directory: no/b.yaml",
            f"(see: shmem {command} --help)",
        ]


def test_errors_are_printed_once_when_stdout_and_stderr_share_a_pipe(tmp_path: Path) -> None:
    # what a CI log shows: `shmem analyze bad.yaml 2>&1 | cat`
    spec = tmp_path / "bad.yaml"
    spec.write_text(BAD)
    shared = subprocess.run(
        [sys.executable, "-m", "shmem_cli.cli", "analyze", str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    assert shared.returncode == 2
    assert shared.stdout.count("unknown array 'b'") == 1, shared.stdout
    # separate streams: the report on stdout, and the error alone on stderr for scripts
    apart = subprocess.run(
        [sys.executable, "-m", "shmem_cli.cli", "analyze", str(spec)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert apart.stdout.count("unknown array 'b'") == 1
    assert apart.stderr.count("unknown array 'b'") == 1


def test_docs_tools_do_not_import_from_tests() -> None:
    for path in sorted((ROOT / "docs" / "tools").glob("*.py")):
        modules = imported_modules(path)
        assert not [m for m in modules if m == "tests" or m.startswith("tests.")], path.name


def _on_terminal(columns: int, *args: str) -> str:
    """What a command prints on a terminal of ``columns`` (plain: NO_COLOR)."""
    tty = Environment(stdout=_Terminal(), env={"NO_COLOR": "1"}, columns=columns)
    result = CliRunner().invoke(main, list(args), obj=tty)
    assert result.exit_code == 0, result.output
    return str(tty.stdout.getvalue())  # type: ignore[attr-defined]


def _cut_values(text: str) -> list[str]:
    """The lines with an ellipsis and a figure: a value cut (a header line has no digit)."""
    return [ln for ln in text.splitlines() if "\u2026" in ln and any(c.isdigit() for c in ln)]


def test_a_narrow_terminal_folds_cells_and_never_cuts_a_number() -> None:
    # sgemm_tiles at 60 columns: the access names and ops wrap; every count stays whole
    # (rich cut "2,048" to "2,…" and "100.0%" to "100.…" before)
    spec = ROOT / "access_specs" / "sgemm_tiles.yaml"
    text = _on_terminal(60, "analyze", str(spec), "--no-tables")
    assert max(len(line) for line in text.splitlines()) <= 60
    assert not _cut_values(text)  # headers may be cut ("wavefr\u2026"), values never
    verdicts = [line.split()[0] for line in text.splitlines() if line and line[0] in "24o"]
    assert verdicts[:3] == ["2-way", "4-way", "ok"]  # the verdict column is never cut
    assert "2,048" in text and "1,536" in text  # the 4-way load's wavefronts and excess
    assert "wave\u2026" in text  # a header too wide is cut, a value never


@needs_nvdisasm
def test_a_trace_on_an_80_column_terminal_keeps_its_source_lines() -> None:
    # a trace's table is some 110 columns wide: on an 80-column terminal its line column
    # read "column_rea\u2026", the one cell that says where the conflict is
    cubin = TRACE_DATA / "column_read.sm_90.cubin"
    text = _on_terminal(80, "trace", str(cubin), "--block", "32,32", "--no-tables")
    assert max(len(line) for line in text.splitlines()) <= 80
    assert not _cut_values(text)
    assert "32-way  column_read.cu:9 " in text and "ok      column_read.cu:7 " in text
