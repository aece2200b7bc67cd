"""Hostile and broken specs: exit 2, the file and line:column named, no traceback,
under a second, and nothing executed (docs/robustness.md).

The positions below are counted by hand from the spec texts (1-based line, column).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shmem_cli.cli import main
from shmem_cli.plumbing import fsutil

from .conftest import ROOT

GOOD = """\
block: [32]
arrays:
  a: {dtype: float32, shape: [32]}
accesses:
  - name: row read
    array: a
    index: [lane]
"""


def with_index(index: str, *more: str) -> str:
    """GOOD with another index expression (line 7; unquoted text starts at column 13)."""
    return GOOD.replace("index: [lane]", f"index: [{index}]") + "".join(m + "\n" for m in more)


def cli(*args: str) -> tuple[int, str]:
    """Run ``shmem`` in-process; exit status, stdout + stderr (how fast: bench/run.py)."""
    result = CliRunner().invoke(main, list(args))
    # anything but a clean exit would be a crash
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result.exit_code, result.stdout + result.stderr


def check_refused(
    tmp_path: Path, content: str | bytes, where: tuple[int, int] | None, *fragments: str
) -> str:
    spec = tmp_path / "spec.yaml"
    if isinstance(content, bytes):
        spec.write_bytes(content)
    else:
        spec.write_text(content, encoding="utf-8")
    # JSON on stdout, the errors on stderr exactly as rendered (text mode wraps long lines)
    code, out = cli("analyze", "--format", "json", str(spec))
    assert code == 2, out
    assert "Traceback" not in out
    if where is None:
        assert re.search(re.escape(str(spec)) + r":\d+:\d+: error: ", out), out[:500]
    else:
        assert f"{spec}:{where[0]}:{where[1]}: error: " in out, out[:500]
    for fragment in fragments:
        assert fragment in out, out[:500]
    for line in out.splitlines():
        assert len(line) < 400 + len(str(spec)), f"a line of {len(line)} characters"
    return out


# --- broken YAML and files that are not text ----------------------------------------------


def test_yaml_syntax_error(tmp_path: Path) -> None:
    # the flow mapping of line 3 is never closed; the parser notices at 'accesses'
    text = GOOD.replace("shape: [32]}", "shape: [32]")
    check_refused(
        tmp_path, text, (4, 1), "invalid YAML", "the {...} mapping opened at line 3 is not closed"
    )


def test_unterminated_quote(tmp_path: Path) -> None:
    check_refused(tmp_path, 'block: [32]\nname: "abc\n', (3, 1), "invalid YAML", "quoted scalar")


def test_tab_indentation(tmp_path: Path) -> None:
    check_refused(
        tmp_path, "block: [32]\narrays:\n\ta: 1\n", (3, 1), "invalid YAML", "a tab character"
    )


@pytest.mark.parametrize(
    ("content", "where"),
    [("", (1, 1)), ("\n\n", (1, 1)), ("# only a comment\n", (1, 1)), ("---\n", (2, 1))],
)
def test_empty_files(tmp_path: Path, content: str, where: tuple[int, int]) -> None:
    # after '---' the (empty) document starts on line 2
    check_refused(tmp_path, content, where, "empty spec file")


def test_not_utf8(tmp_path: Path) -> None:
    # 'name: "' is 7 characters, the 0xff byte is the 8th
    check_refused(
        tmp_path, b'block: [32]\nname: "\xff\xfe abc"\n', (2, 8), "not valid UTF-8", "0xff"
    )


def test_binary_file(tmp_path: Path) -> None:
    elf = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x02\x00>\x00"
    check_refused(tmp_path, elf, (1, 8), "NUL byte", "binary file")


def test_utf16_file(tmp_path: Path) -> None:
    check_refused(tmp_path, GOOD.encode("utf-16"), (1, 1), "UTF-16")


def test_duplicate_top_level_key(tmp_path: Path) -> None:
    check_refused(
        tmp_path,
        "block: [32]\nblock: [64]\n" + GOOD[12:],
        (2, 1),
        "duplicate key 'block'",
        "first at line 1",
    )


def test_duplicate_nested_key(tmp_path: Path) -> None:
    text = GOOD.replace("{dtype: float32,", "{dtype: float32, dtype: int8,")
    column = text.splitlines()[2].index("dtype: int8") + 1
    check_refused(tmp_path, text, (3, column), "duplicate key 'dtype'")


def test_billion_laughs(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for k in range(1, 10):
        refs = ", ".join([f"*a{k - 1}"] * 9)
        lines.append(f"a{k}: &a{k} [{refs}]")
    check_refused(
        tmp_path, "\n".join(lines) + "\n", None, "too large after expanding aliases", "100000 nodes"
    )


def test_recursive_alias(tmp_path: Path) -> None:
    check_refused(tmp_path, "a: &a [*a]\n", (1, 4), "recursive YAML alias")


def test_deeply_nested_yaml(tmp_path: Path) -> None:
    # the root mapping is level 1 and 'block: [' opens level 2 at column 8, so the list that
    # would be level 101 is the 100th '[' at column 8 + 99
    text = "block: " + "[" * 20_000 + "]" * 20_000 + "\n"
    check_refused(tmp_path, text, (1, 107), "YAML nesting too deep", "limit 100 levels")


# --- nothing is ever executed -------------------------------------------------------------


@pytest.mark.parametrize(
    "tag",
    [
        '!!python/object/apply:os.system ["touch {marker}"]',
        '!!python/object/new:os.system ["touch {marker}"]',
        "!!python/name:os.system",
        '!!python/object/apply:subprocess.check_call [["touch", "{marker}"]]',
        '!shell "touch {marker}"',
    ],
)
def test_python_tags_are_refused_and_not_run(tmp_path: Path, tag: str) -> None:
    marker = tmp_path / "pwned"
    text = GOOD.replace("block: [32]", "block: " + tag.format(marker=marker))
    check_refused(tmp_path, text, (1, 8), "unsupported YAML tag")
    assert not marker.exists()


def test_python_import_in_an_expression(tmp_path: Path) -> None:
    # index text starts at column 13 of line 7 (after '    index: [')
    check_refused(tmp_path, with_index("__import__"), (7, 13), "unknown name '__import__'")
    check_refused(tmp_path, with_index("__import__(os)"), (7, 13), "unknown function '__import__'")
    check_refused(tmp_path, with_index("lane.__class__"), (7, 13), "unknown name 'lane.__class__'")
    marker = tmp_path / "pwned"
    # inside double quotes the text starts at column 14; the quote of 'os' is 11 further
    text = with_index(f"\"__import__('os').system('touch {marker}')\"")
    check_refused(tmp_path, text, (7, 25), "unexpected character")
    assert not marker.exists()


# --- wrong types, bad values ----------------------------------------------------------------


def test_wrong_types_everywhere(tmp_path: Path) -> None:
    out = check_refused(tmp_path, "block: 32\narrays: [1, 2]\naccesses: {a: 1}\n", (1, 8))
    assert "block: expected a list, found the integer 32" in out
    assert ":2:9: error: arrays: expected a mapping, found a list of 2 items" in out
    assert ":3:11: error: accesses: expected a list, found a mapping" in out


@pytest.mark.parametrize(
    ("old", "new", "where", "fragment"),
    [
        (
            "index: [lane]",
            "index: lane",
            (7, 12),
            "index: expected a list, found the string 'lane'",
        ),
        ("dtype: float32", "dtype: 4", (3, 14), "dtype: expected a string, found the integer 4"),
        ("shape: [32]", "shape: '32'", (3, 30), "shape: expected a list, found the string '32'"),
        ("name: row read", "name: [1]", (5, 11), "name: expected a string, found a list of 1 item"),
        ("index: [lane]", "index: [lane]\n    loop: [1]", (8, 11), "loop: expected a mapping"),
        (
            "index: [lane]",
            "index: [lane]\n    when: {a: 1}",
            (8, 11),
            "when: expected a string, an integer or",
        ),
        (
            "index: [lane]",
            "index: [lane]\n    op: 3",
            (8, 9),
            "op: expected a string, found the integer 3",
        ),
        (
            "index: [lane]",
            "index: [1.5]",
            (7, 13),
            "expected a string or an integer, found the number 1.5",
        ),
        ("shape: [32]", "shape: [0]", (3, 31), "must be at least 1, found 0"),
        ("shape: [32]", "shape: [32], pad: -1", (3, 41), "must be at least 0, found -1"),
        (
            "shape: [32]",
            "shape: [32], swizzle: 7",
            (3, 45),
            "swizzle: expected a string or a mapping",
        ),
        ("shape: [32]", "shape: [32], swizzle: 256B", (3, 45), "'256B' is not one of"),
        (
            "index: [lane]",
            "index: [lane]\n    op: ldmatrix\n    matrices: 3",
            (9, 15),
            "3 is not one of",
        ),
    ],
)
def test_wrong_values(
    tmp_path: Path, old: str, new: str, where: tuple[int, int], fragment: str
) -> None:
    check_refused(tmp_path, GOOD.replace(old, new), where, fragment)


def test_twenty_thousand_parentheses(tmp_path: Path) -> None:
    text = with_index('"' + "(" * 20_000 + "lane" + ")" * 20_000 + '"')
    check_refused(tmp_path, text, (7, 14), "40004 characters long", "limit is 4096")


def test_parentheses_nested_deep_parse(tmp_path: Path) -> None:
    # within the length limit, nesting has no limit of its own: parsing never recurses
    spec = tmp_path / "spec.yaml"
    spec.write_text(with_index('"' + "(" * 2000 + "lane" + ")" * 2000 + '"'))
    code, out = cli("analyze", "--format", "json", str(spec))
    assert code == 0, out
    assert '"conflict_free": true' in out


@pytest.mark.slow
def test_megabyte_expression(tmp_path: Path) -> None:
    text = with_index('"' + "lane + " * 150_000 + 'lane"')
    check_refused(tmp_path, text, (7, 14), "1050004 characters long", "limit is 4096")


def test_division_by_zero(tmp_path: Path) -> None:
    # 'lane / (lane - 5)' starts at column 13; the '/' is 5 characters further
    check_refused(
        tmp_path, with_index("lane / (lane - 5)"), (7, 18), "division by zero", "thread (5,0,0)"
    )
    check_refused(tmp_path, with_index("lane % (lane - 7)"), (7, 18), "modulo by zero", "lane 7")


def test_division_by_zero_in_a_shape(tmp_path: Path) -> None:
    text = GOOD.replace("shape: [32]", "shape: [32 / 0]")
    column = text.splitlines()[2].index("32 / 0") + 1
    check_refused(tmp_path, text, (3, column), "division by zero")


def test_out_of_bounds_index(tmp_path: Path) -> None:
    check_refused(
        tmp_path,
        with_index("lane + 1"),
        (7, 13),
        "is 32 (out of bounds; valid 0..31)",
        "thread (31,0,0)",
    )


def test_negative_index(tmp_path: Path) -> None:
    check_refused(
        tmp_path,
        with_index("(int)lane - 3"),
        (7, 13),
        "is -3 (negative; valid 0..31)",
        "thread (0,0,0)",
    )


def test_misaligned_vector_offset(tmp_path: Path) -> None:
    text = GOOD.replace("{dtype: float32, shape: [32]}", "{dtype: float4, shape: [32], offset: 8}")
    column = text.splitlines()[2].index("8}") + 1
    check_refused(tmp_path, text, (3, column), "starts at byte 8", "16-byte alignment")


def test_misaligned_ldmatrix_rows(tmp_path: Path) -> None:
    text = (
        "block: [32]\narrays:\n  a: {dtype: float16, shape: [16, 16]}\naccesses:\n"
        "  - array: a\n    op: ldmatrix\n    index: [lane % 8, 4]\n"
    )
    # the column index '4' is at column 23 of line 7
    check_refused(tmp_path, text, (7, 23), "row address 8", "not 16-byte aligned")


@pytest.mark.parametrize(
    ("block", "fragment"),
    [
        ("[100000, 100000]", "blockDim.x = 100000 is outside 1..1024"),
        ("[64, 64]", "4096 threads exceeds the 1024"),
        ("[1, 1, 65]", "blockDim.z = 65 is outside 1..64"),
        ("[1000000000000000000000000000000]", "does not fit in long long"),
    ],
)
def test_absurd_blocks(tmp_path: Path, block: str, fragment: str) -> None:
    check_refused(
        tmp_path, GOOD.replace("[32]", block, 1), (1, 9 if block != "[1, 1, 65]" else 15), fragment
    )


def test_absurd_arrays(tmp_path: Path) -> None:
    text = GOOD.replace("shape: [32]", "shape: [1000, 1000]").replace("[lane]", "[lane, 0]")
    check_refused(tmp_path, text, (3, 3), "4000000 bytes", "227 KB")


def test_trillion_lane_accesses_refused_at_once(tmp_path: Path) -> None:
    # 1024 threads x 10^6 x 1000 iterations = 1.02e12 lane-accesses; the loop range of 'i'
    # is at column 15 of line 8
    text = GOOD.replace("[32]", "[1024]", 1) + "    loop: {i: 0..999999, j: 0..999}\n"
    check_refused(
        tmp_path, text, (8, 15), "1.02e+12 lane-accesses", "the limit is 2147483648 (2^31)"
    )


def test_absurd_iteration_count_refused_at_once(tmp_path: Path) -> None:
    text = GOOD + "    loop: {i: 0..999999999, j: 0..999999999}\n"
    check_refused(tmp_path, text, (8, 15), "lane-accesses", "2^31")


# --- long user data is cut in messages --------------------------------------------------

LONG = "x" * 100_000


@pytest.mark.parametrize(
    "text",
    [
        GOOD.replace("float32", LONG),  # unknown dtype
        GOOD.replace("array: a", f"array: {LONG}"),  # unknown array
        GOOD + f"    op: {LONG}\n",  # not one of the ops
        GOOD.replace("block: [32]", f"block: [32]\narch: {LONG}"),
        GOOD.replace("block: [32]", f"block: [32]\n? {LONG}\n: 1"),  # unknown top-level key
        GOOD.replace("  a: {", f"  ? {LONG}\n  : {{").replace("array: a", f"array: {LONG}")
        + f"  - array: {LONG}\n    index: [1, 2]\n",  # dimension mismatch names a long array
        GOOD + f"  - name: row read\n    array: a\n    index: [{LONG}]\n",
        GOOD.replace("row read", LONG) + f"  - name: {LONG}\n    array: a\n    index: [lane]\n",
        GOOD + f"    loop: {{i: '{LONG}'}}\n",
        GOOD.replace("block: [32]", f"block: [32]\nparams: {{{'P' * 1000}: 1}}")
        + f"    loop: {{{'P' * 1000}: 0..1}}\n",
        GOOD + f"    when: {{{LONG}: 1}}\n",  # YAML's hint quotes the line it failed on
        *(  # 100,000 digits (too many for Python's int) and 4,000
            GOOD.replace("block: [32]", f"block: [32]\nkernel: {{source: k.cu, dynamic_smem: {n}}}")
            for n in ("9" * 100_000, "9" * 4000)
        ),
    ],
)
def test_long_values_are_cut(tmp_path: Path, text: str) -> None:
    out = check_refused(tmp_path, text, None)
    assert LONG[:1000] not in out and "9" * 1000 not in out


def test_a_long_kernel_name_is_cut_in_lint(tmp_path: Path) -> None:
    """A kernel.name of 100,000 characters that no kernel has: the lint's warning that the
    kernel was not traced named it whole."""
    import shutil

    from .hostile import CUBIN

    shutil.copy(CUBIN, tmp_path / "k.cubin")
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        GOOD.replace("block: [32]", f"block: [32]\nkernel: {{source: k.cubin, name: {LONG}}}")
    )
    code, out = cli("lint", str(spec))
    assert "was not traced" in out and "Traceback" not in out, out[:500]
    assert LONG[:1000] not in out


# --- one bad file never hides the others ---------------------------------------------------


def test_good_and_bad_files_together(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(GOOD)
    bad = tmp_path / "bad.yaml"
    bad.write_text(with_index("lane + 1"))
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\x00\x01")
    code, out = cli("analyze", "--no-tables", str(bad), str(good), str(binary))
    assert code == 2
    assert f"{bad}:7:13: error: index 0 of a[32] is 32" in out
    assert f"{binary}:1:1: error: file contains a NUL byte" in out
    row = next(ln for ln in out.splitlines() if "row read" in ln)
    assert row.split()[:2] == ["ok", "row"]  # the good file is still analyzed


def test_good_and_bad_files_json(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(GOOD)
    bad = tmp_path / "bad.yaml"
    bad.write_text("block: [32\n")
    result = CliRunner().invoke(main, ["analyze", "--format", "json", str(good), str(bad)])
    assert result.exit_code == 2
    files = json.loads(result.stdout)["files"]
    assert files[0]["accesses"][0]["wavefronts"] == 1
    assert files[1]["error"]["line"] == 2 and files[1]["error"]["column"] == 1
    assert f"{bad}:2:1: error: invalid YAML" in result.stderr


# --- the real program, in a fresh process ---------------------------------------------------


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b"\x7fELF\x02\x01\x01\x00", "1:8"),
        (
            GOOD.replace(
                "block: [32]", "block: !!python/object/apply:os.system ['touch PWNED']"
            ).encode(),
            "1:8",
        ),
        (with_index('"' + "(" * 20_000 + "lane" + ")" * 20_000 + '"').encode(), "7:14"),
        (
            (GOOD.replace("[32]", "[1024]", 1) + "    loop: {i: 0..999999, j: 0..999}\n").encode(),
            "8:15",
        ),
    ],
)
def test_subprocess_exit_2_without_traceback(tmp_path: Path, content: bytes, where: str) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(content)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "shmem_cli.cli",
            "analyze",
            "--no-tables",
            "--format",
            "json",
            str(spec),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert proc.stderr.startswith(f"{spec}:{where}: error: ")
    assert not (tmp_path / "PWNED").exists()


# --- random text never crashes -------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=60))
def test_random_expression_text(text: str) -> None:
    spec = Path(tempfile.gettempdir()) / f"shmem-rand-{os.getpid()}.yaml"
    spec.write_text(with_index(json.dumps(text)))  # a JSON string is a YAML double-quoted one
    try:
        code, out = cli("analyze", "--no-tables", str(spec))
    finally:
        spec.unlink()
    assert code in (0, 2)
    assert "Traceback" not in out
    if code == 2:
        assert re.search(re.escape(str(spec)) + r":7:\d+: error: ", out), out
    else:
        assert "row read" in out


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_random_yaml(content: str | bytes) -> None:
    spec = Path(tempfile.gettempdir()) / f"shmem-rand-{os.getpid()}.yaml"
    if isinstance(content, bytes):
        spec.write_bytes(content)
    else:
        spec.write_text(content, encoding="utf-8")
    try:
        code, out = cli("analyze", "--no-tables", str(spec))
    finally:
        spec.unlink()
    assert code == 2  # random text is never a complete spec
    assert "Traceback" not in out
    assert f"{spec}" in out and ": error: " in out


# --- files are written atomically --------------------------------------------------------


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "report.txt")


def test_write_atomic_replaces_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old report\n")
    fsutil.write_atomic(target, "new report\n" * 1000)
    assert target.read_text() == "new report\n" * 1000
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("crash", "seen"),
    [(OSError("disk full"), fsutil.OutputError), (KeyboardInterrupt(), KeyboardInterrupt)],
)
def test_crash_before_rename_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash: BaseException, seen: type
) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old report\n")

    def fail(*_: object) -> None:
        raise crash

    monkeypatch.setattr(fsutil.os, "replace", fail)
    with pytest.raises(seen):
        fsutil.write_atomic(target, "new report\n")
    assert target.read_text() == "old report\n"
    assert leftovers(tmp_path) == []


def test_ctrl_c_in_the_middle_of_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old report\n")
    real_write = os.write

    def half_then_ctrl_c(fd: int, data: bytes) -> int:
        """Takes the first half of the data, then Ctrl-C arrives."""
        real_write(fd, bytes(data[: len(data) // 2]))
        raise KeyboardInterrupt

    monkeypatch.setattr(fsutil.os, "write", half_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        fsutil.write_atomic(target, "new report\n" * 100)
    assert target.read_text() == "old report\n"
    assert leftovers(tmp_path) == []


def test_cli_output_interrupted_keeps_the_old_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "good.yaml"
    spec.write_text(GOOD)
    target = tmp_path / "report.txt"
    code, _ = cli("analyze", str(spec), "--format", "json", "-o", str(target))
    assert code == 0
    first = target.read_text()
    assert '"wavefronts": 1' in first

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fsutil.os, "replace", interrupted)
    result = CliRunner().invoke(main, ["analyze", str(spec), "--format", "text", "-o", str(target)])
    assert result.exit_code != 0
    assert target.read_text() == first
    assert leftovers(tmp_path) == ["good.yaml"]


def test_no_module_writes_files_directly() -> None:
    """Every file shmem writes goes through fsutil (write_atomic, write_bytes; appending to a
    log that someone else owns, such as $GITHUB_STEP_SUMMARY, is not replacing a file)."""
    direct = re.compile(r"(?<!fsutil)\.write_(text|bytes)\(|\bopen\([^)]*['\"][wx]b?\+?['\"]")
    found = []
    for source in sorted((ROOT / "shmem_cli").rglob("*.py")):
        if source.name == "fsutil.py":
            continue
        for n, line in enumerate(source.read_text().splitlines(), 1):
            if direct.search(line):
                found.append(f"{source.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []
