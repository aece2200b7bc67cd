"""Error messages a new user met (issue 15): each says where, shows the line, and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

HEAD = "name: t\nblock: [32]\narrays:\n  a: {dtype: float, shape: [64]}\naccesses:\n  - array: a\n"


def errors_of(tmp_path: Path, text: str) -> str:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    result = CliRunner().invoke(main, ["analyze", str(spec), "--format", "json"])
    assert result.exit_code == 2, result.stdout
    assert "Traceback" not in result.stderr
    return result.stderr.replace(str(spec), "spec.yaml")


def test_the_line_is_quoted_with_a_caret_under_the_column(tmp_path: Path) -> None:
    err = errors_of(tmp_path, HEAD.replace("array: a", "array: b") + "    index: [lane]\n")
    assert err.splitlines() == [
        "spec.yaml:6:12: error: unknown array 'b'; arrays: a",
        "  6 |   - array: b",
        "    |            ^",
    ]


@pytest.mark.parametrize(
    ("line", "where", "quoted"),
    [
        # YAML splits the list at the comma: three index items for a 1-D array
        ("    index: [min(lane, 7)]\n", "7:13", 'index: ["min(lane, 7)", lane]'),
        # '?' starts a YAML complex key, ':' a mapping: raw PyYAML text before
        ("    index: [lane < 16 ? 0 : lane]\n", "7:23", 'index: ["lane < 16 ? 0 : lane"]'),
        # '!' starts a YAML tag and '&' an anchor
        ("    index: [lane]\n    when: !(lane & 1)\n", "8:19", 'when: "!(lane & 1)"'),
    ],
)
def test_unquoted_c_expressions_are_told_to_be_quoted(
    tmp_path: Path, line: str, where: str, quoted: str
) -> None:
    err = errors_of(tmp_path, HEAD + line)
    first = err.splitlines()[0]
    assert first.startswith(f"spec.yaml:{where}: error: ")
    assert "quote" in first and quoted in first


def test_tabs_and_indentation_in_words(tmp_path: Path) -> None:
    tab = errors_of(tmp_path, HEAD + "    index: [lane]\n\twhen: lane < 8\n")
    assert "a tab character in the indentation: YAML indents with spaces only" in tab
    assert "'\\t'" not in tab
    indent = errors_of(tmp_path, HEAD + "    index: [lane]\n   when: lane < 8\n")
    assert "spec.yaml:8:4: error: invalid YAML: this line is indented differently" in indent
    assert "<block end>" not in indent and "<block mapping start>" not in indent
    assert "(the block starts at line 6)" in indent


def test_colon_inside_a_name_is_told_to_be_quoted(tmp_path: Path) -> None:
    err = errors_of(tmp_path, HEAD.replace("  - array: a", "  - name: tile: row\n    array: a"))
    assert 'must be quoted: name: "tile: row"' in err
    assert "mapping values are not allowed" not in err


@pytest.mark.parametrize(
    ("expr", "advice"),
    [
        ("lane ** 2", "'**' is Python, not C: for a power of two write 1 << k"),
        ("lane // 2", "'//' is Python, not C: '/' already divides integers"),
        ("lane and 1", "'and' is Python: in C write &&"),
        ("lane or 1", "'or' is Python: in C write ||"),
        ("not lane", "'not' is Python: in C write !"),
        ("range(4)", "range(...) is Python: a loop is written under loop:, e.g. loop: {i: 0..3}"),
    ],
)
def test_python_habits_get_the_c_spelling(tmp_path: Path, expr: str, advice: str) -> None:
    err = errors_of(tmp_path, HEAD + f'    index: ["{expr}"]\n')
    assert f"spec.yaml:7:13: error: in '{expr}': {advice}" in err


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        (
            "threadIdx.w",
            "'threadIdx.w' is not a name: write threadIdx.x (threadIdx has the members x, y and z",
        ),
        ("threadIdx.X", "'threadIdx.X' is not a name: write threadIdx.x"),
        ("threadidx.x", "'threadidx.x' is not a name: write threadIdx.x"),
        ("blockIdx.x", "'blockIdx.x' is not available: shmem analyzes one thread block"),
        ("tx", "'tx' is the docs' shorthand for threadIdx.x: in a spec write threadIdx.x"),
    ],
)
def test_thread_index_names_say_what_is_valid(tmp_path: Path, name: str, advice: str) -> None:
    err = errors_of(tmp_path, HEAD + f"    index: [{name}]\n")
    assert advice in err


def test_tx_stays_free_for_a_loop_variable(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(HEAD + "    index: [tx]\n    loop: {tx: 0..3}\n")
    assert CliRunner().invoke(main, ["analyze", str(spec)]).exit_code == 0


@pytest.mark.parametrize("alias", ["fp16", "f16", "fp32", "f32", "fp64", "f64", "bf16"])
def test_dtype_aliases_are_accepted(tmp_path: Path, alias: str) -> None:
    canonical = {"fp16": "float16", "f16": "float16", "bf16": "bfloat16"}.get(
        alias, "float32" if "32" in alias else "float64"
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(HEAD.replace("dtype: float", f"dtype: {alias}") + "    index: [lane]\n")
    result = CliRunner().invoke(main, ["analyze", str(spec), "--no-tables"])
    assert result.exit_code == 0, result.stderr
    assert f"({canonical})" in result.stdout or f" {canonical} " in result.stdout


def test_an_inclusive_range_overrun_says_ranges_are_inclusive(tmp_path: Path) -> None:
    text = HEAD.replace("shape: [64]", "shape: [8, 32]") + "    index: [i, lane]\n"
    err = errors_of(tmp_path, text + "    loop: {i: 0..8}\n")
    assert "index 0 of a[8, 32] is 8 (out of bounds; valid 0..7)" in err
    assert "loop ranges include their end: i = 0..8 runs up to 8; for i < 8 write 0..7" in err


def test_a_spec_on_standard_input_is_quoted_too() -> None:
    result = CliRunner().invoke(
        main, ["analyze", "-"], input=HEAD.replace("array: a", "array: b") + "    index: [0]\n"
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:2] == [
        "<stdin>:6:12: error: unknown array 'b'; arrays: a",
        "  6 |   - array: b",
    ]
