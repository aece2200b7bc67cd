"""Crashes found by fuzzing (tests/fuzz, docs/robustness.md), kept so they stay fixed.

Each spec here once raised something other than shmem's own error (a traceback);
each must now end with exit 2 and a located message.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from shmem_cli.cli import main

HEAD = "block: [32]\narrays:\n  a: {dtype: float32, shape: [32]}\naccesses:\n  - array: a\n"
BIG = 2**70  # 1180591620717411303424


def analyze(tmp_path: Path, text: str) -> tuple[int, str, str]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    result = CliRunner().invoke(main, ["analyze", "--no-tables", str(spec)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout + result.stderr, str(spec)


def test_index_integer_beyond_64_bits(tmp_path: Path) -> None:
    # was: OverflowError converting the index to int64 (space.py)
    code, out, path = analyze(tmp_path, HEAD + f"    index: [{BIG}]\n")
    assert code == 2
    assert f"{path}:6:13: error: integer {BIG} does not fit in long long" in out
    assert "Traceback" not in out


def test_param_beyond_64_bits(tmp_path: Path) -> None:
    # was: OverflowError when the param met the thread-index arrays (expr.py)
    text = f"params: {{P: {BIG}}}\n" + HEAD + "    index: [(lane + P) % 32]\n"
    code, out, path = analyze(tmp_path, text)
    assert code == 2
    assert f"{path}:1:13: error: param 'P' = {BIG} does not fit in int" in out


def test_loop_value_beyond_64_bits(tmp_path: Path) -> None:
    # was: OverflowError building the loop values (spec.py Loop.value_at)
    text = HEAD + f"    index: [i]\n    loop: {{i: [0, {BIG}]}}\n"
    code, out, path = analyze(tmp_path, text)
    assert code == 2
    assert f"{path}:7:19: error: loop value {BIG} does not fit in the loop variable's type" in out


def test_arithmetic_beyond_64_bits(tmp_path: Path) -> None:
    # P*P*P = 2^120 as a Python int, then added to the lane array: was an OverflowError
    text = f"params: {{P: {{value: {2**40}, type: long long}}}}\n" + HEAD
    code, out, path = analyze(tmp_path, text + "    index: [lane + P*P*P]\n")
    assert code == 2
    # located at the operator that overflows, the first '*' (column 13 + 8)
    assert f"{path}:7:21: error: signed integer overflow" in out
    assert "does not fit in long long" in out


def test_modulo_by_a_zero_array_under_a_loop(tmp_path: Path) -> None:
    # fuzz input ('1 % warp', index 1): a scalar dividend, a per-thread divisor that is 0 in
    # warp 0 and a loop made the fault mask wider than the operands: was a NumPy ValueError
    text = (
        "block: [32, 4]\narrays:\n  a: {dtype: float32, shape: [32, 8]}\naccesses:\n"
        "  - array: a\n    index: [lane, 1 % warp]\n    loop: {i: 0..3}\n"
    )
    code, out, path = analyze(tmp_path, text)
    assert code == 2
    assert f"{path}:6:21: error: modulo by zero in '1 % warp' for thread (0,0,0)" in out
    assert "at i=0" in out


def test_lone_surrogate_escape(tmp_path: Path) -> None:
    # found by tests/test_robustness.py's random expression text: YAML's "\ud800" escape
    # made a string that could not be printed, so writing the report raised
    # UnicodeEncodeError; now the loader refuses it where it is
    text = HEAD + '    index: ["\\ud800\\udc00"]\n'
    code, out, path = analyze(tmp_path, text)
    assert code == 2
    assert f"{path}:6:13: error: invalid YAML: an escape gives a lone UTF-16 surrogate" in out
    code, out, path = analyze(tmp_path, 'name: "\\udfff"\n' + HEAD + "    index: [lane]\n")
    assert code == 2
    assert f"{path}:1:7: error: invalid YAML" in out


def test_loop_bound_that_faults(tmp_path: Path) -> None:
    # found in review: a loop bound whose evaluation faults (here 4/N with N = 0)
    # escaped as a Python traceback from analyze and sweep
    text = (
        "block: [32]\nparams: {N: 0}\narrays:\n  a: {dtype: float, shape: [64]}\naccesses:\n"
        '  - array: a\n    index: [lane]\n    loop: {k: "0..4/N"}\n'
    )
    code, out, path = analyze(tmp_path, text)
    assert code == 2
    assert f"{path}:8:20: error: loop range of 'k': division by zero" in out
    assert "Traceback" not in out
