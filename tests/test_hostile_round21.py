"""Hostile inputs of the twenty-first adversarial round (docs/robustness.md, "What was found
and fixed", item 21).

A YAML integer written in hexadecimal, octal or binary has no length Python bounds (a decimal
one stops at 4,300 digits), and one of 3,600 hexadecimal digits could not be written out by
any message nor by the schema's validator: "internal error: ValueError". A spec's integer is
at most 128 characters now, and any message shows a longer one (a TOML ``0xfff...``) in
hexadecimal. The Python API's ``time_limit`` and ``compile_time_limit`` of an int past a
float's range (``10**400``) raised ``OverflowError``; they are refused as any other. A spec
read from a closed standard input (``shmem analyze - <&-``) or one open for writing only was
"internal error: OSError: [Errno 9] Bad file descriptor; a bug in shmem"; it is refused in
words. A closed standard output (``shmem analyze spec.yaml >&-``) lost the report with exit
status 0; it is said with status 2, as ``/dev/full`` is. rich draws a line of a report in
1.5 to 4 ms (ten times the plain layout), and nothing bounded what it drew: an SVG of a trace
of 3,000 distinct shared-memory instructions took 64 s (its text 5.5 s), a launch may record
32,768. A picture stops at 4,000 lines now, saying so, and colored text past them is plain.
A baseline's ``schema_version`` of 4,000 digits was written out whole, and ``true`` taken for 1.
``assert_no_bank_conflicts(result, allow=[1 << 20000])`` raised ``ValueError`` writing the
selector out, and wrote a selector of 10 MB, or 100,000 of them, whole. ``shmem lint`` wrote a
spec file's name raw in its text and GitHub formats, so a file named with a terminal escape
(``\x1b]0;...\x07`` sets the window's title, ``\x1b[2J`` clears the screen) reached the
terminal; it is shown as ``\x1b`` as the other formats and ``analyze`` show it. ``--block
0x20`` was "sizes must be at least 1, got 0,20" (the ``x`` of ``32x8``); it says to write 32.
An argument error quoted the value typed whole (``--jobs`` of 100,000 digits: one line of
100 KB); a run past 400 characters is cut, its length said.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import shmem_cli
from shmem_cli import ShmemError

from .conftest import HANG_S
from .hostile import CUBIN, REPO, refused, shmem

HEX = "0x" + "f" * 5000
_PROGRAM = "import sys; from shmem_cli.cli import main; main(args=sys.argv[1:], prog_name='shmem')"
_SPEC = """name: t
block: [32]
arrays:
  a: {dtype: float, shape: [64]}
accesses:
  - name: x
    array: a
    op: load
    index: [threadIdx.x]
"""


@pytest.mark.parametrize(
    ("where", "old", "new", "column"),
    [
        ("name", "name: t", f"name: {HEX}", "1:7"),
        ("block", "block: [32]", f"block: [{HEX}]", "2:9"),
        ("dtype", "dtype: float", f"dtype: {HEX}", "4:14"),
        ("index", "index: [threadIdx.x]", f"index: [{HEX}]", "9:13"),
        ("loop", "index: [threadIdx.x]", f"index: [i]\n    loop: {{i: [{HEX}]}}", "10:16"),
        ("binary", "index: [threadIdx.x]", "index: [0b" + "1" * 20000 + "]", "9:13"),
    ],
)
def test_a_yaml_integer_of_thousands_of_digits_is_refused_where_it_is(
    where: str, old: str, new: str, column: str, tmp_path: Path
) -> None:
    # each was "internal error: ValueError: Exceeds the limit (4300 digits) for integer
    # string conversion": a message (or jsonschema's) wrote the integer out in decimal
    spec = tmp_path / "big.yaml"
    spec.write_text(_SPEC.replace(old, new))
    ran = shmem("analyze", str(spec))
    refused(ran, f"big.yaml:{column}: error: integer '0", "characters long; the most is 128")
    assert "internal error" not in ran.text


def test_a_yaml_integer_of_128_characters_is_read(tmp_path: Path) -> None:
    # the bound is the text's: a long long written in binary with separators still reads
    spec = tmp_path / "ok.yaml"
    wide = "0b" + "_".join(["0000"] * 24) + "_0001"  # 126 characters, the value 1
    assert len(wide) == 126
    spec.write_text(_SPEC.replace("index: [threadIdx.x]", f"index: [{wide}]"))
    ran = shmem("analyze", str(spec))
    assert ran.code == 0, ran.text


def test_a_toml_integer_of_thousands_of_digits_is_shown_in_hexadecimal(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(_SPEC)
    (tmp_path / "pyproject.toml").write_text(f"[tool.shmem]\ncompile-time-limit = {HEX}\n")
    ran = shmem("lint", "a.yaml", cwd=tmp_path)
    refused(
        ran,
        "pyproject.toml:2:1: error: [tool.shmem] compile-time-limit must be a number of "
        "seconds from 0.001 to 86400, got 0xffff",
        roots=[tmp_path],
    )


@pytest.mark.parametrize("name", ["time_limit", "compile_time_limit"])
@pytest.mark.parametrize("value", [10**400, 1 << 20000], ids=["10^400", "2^20000"])
def test_seconds_past_a_floats_range_are_refused_in_words(name: str, value: int) -> None:
    # math.isfinite(10**400) raised OverflowError out of trace()
    with pytest.raises(ShmemError) as err:
        shmem_cli.trace(CUBIN, block=32, **{name: value})
    assert f"trace(): {name} must be a positive number of seconds between 0.001 and 86400" in (
        err.value.message
    )
    assert f"an int of {value.bit_length()} bits" in err.value.message


@pytest.mark.parametrize(
    "command", [("analyze", "-"), ("lint", "-"), ("sweep", "-", "--pad", "0..1")]
)
@pytest.mark.parametrize("stdin", ["closed", "write-only"])
def test_a_spec_from_a_standard_input_that_cannot_be_read_is_refused_in_words(
    command: tuple[str, ...], stdin: str, tmp_path: Path
) -> None:
    # "internal error: OSError: [Errno 9] Bad file descriptor; a bug in shmem" before
    with (tmp_path / "w").open("w") as write_only:
        done = subprocess.run(
            [sys.executable, "-c", _PROGRAM, *command],
            stdin=write_only if stdin == "write-only" else None,
            capture_output=True,
            text=True,
            timeout=HANG_S,
            cwd=REPO,
            check=False,
            preexec_fn=(lambda: os.close(0)) if stdin == "closed" else None,
        )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stdout + done.stderr
    said = "cannot read standard input: closed or open for writing only; give the spec file's path"
    assert said in done.stdout + done.stderr, done.stdout + done.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("analyze", "access_specs/column_read_32x32.yaml"),
        ("lint", "--no-config", "access_specs/column_read_32x33.yaml"),
        ("schema",),
        ("--version",),
    ],
)
def test_a_closed_standard_output_is_said_with_status_2(command: tuple[str, ...]) -> None:
    # click.echo to a closed standard output (sys.stdout None) writes nothing, silently: the
    # report was lost and the command exited 0
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, *command],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        cwd=REPO,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == 2, done.stderr
    assert "<standard output>: error: cannot write the report: it is closed" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_a_picture_stops_at_its_bound_and_says_so() -> None:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from shmem_cli.render.export import drawn
    from shmem_cli.render.plain import MAX_DRAWN_LINES

    table = Table("n", "square")
    for k in range(10_000):
        table.add_row(str(k), str(k * k))
    short = [Text("head"), Table("a")]
    assert drawn(short) == short  # what fits is drawn whole, as it was
    cut = drawn([Group(Text("title"), Text("two\nlines"), table), Text("tail")])
    assert [type(r).__name__ for r in cut] == ["Text", "Text", "Table", "Text"]
    assert cut[2].row_count == MAX_DRAWN_LINES - 3 - 1  # the title, two lines, the header
    assert list(cut[2].columns[1].cells)[-1] == str((MAX_DRAWN_LINES - 5) ** 2)
    note = str(cut[-1])
    assert f"the picture stops here, at {MAX_DRAWN_LINES:,} of the report's 10,005 lines" in note
    assert "the text report, -o FILE, holds them all" in note


def test_colored_text_of_many_lines_is_laid_out_plain() -> None:
    from shmem_cli.render.plain import MAX_DRAWN_LINES, Column, Styled, Table
    from shmem_cli.render.text import blocks_text

    table = Table([Column("n"), Column("wide", min_width=150)])
    for k in range(MAX_DRAWN_LINES):
        table.add_row(str(k), Styled("x", "bold red"))
    text = blocks_text([Styled("title", "bold"), table], color=True, width=80)
    assert "\x1b[" not in text  # plain: rich would take seconds (minutes at 32,768 rows)
    assert len(text.splitlines()) == MAX_DRAWN_LINES + 2  # every row, none folded at 80
    short = blocks_text([Styled("title", "bold")], color=True, width=80)
    assert "\x1b[" in short
    table.add_row("kernel<é, 全>", Styled("x"))  # non-ASCII: not measured, laid out as it is
    text = blocks_text([table], color=True, width=80)
    assert "\x1b[" not in text and text.splitlines()[-1].startswith("kernel<é, 全>")


@pytest.mark.slow
def test_a_sweep_picture_of_thousands_of_variants_is_bounded(tmp_path: Path) -> None:
    # 10,000 variants: the SVG and HTML drew every row, 18 s for the SVG alone (now cut at
    # 4,000 lines, a note saying where); the text report keeps all of them
    spec = tmp_path / "s.yaml"
    spec.write_text(_SPEC)
    svg, text = tmp_path / "s.svg", tmp_path / "s.txt"
    ran = shmem("sweep", str(spec), "--pad", "0..4999", "--svg", str(svg), "-o", str(text))
    assert ran.code == 0, ran.text
    assert "the&#160;picture&#160;stops&#160;here,&#160;at&#160;4,000&#160;of" in svg.read_text()
    assert len(text.read_text().splitlines()) > 5000


@pytest.mark.parametrize(
    ("version", "shown"),
    [("9" * 4000, "schema_version " + "9" * 57 + "..."), ("true", "schema_version true")],
)
def test_a_baseline_version_is_shown_short_and_must_be_the_integer(
    version: str, shown: str, tmp_path: Path
) -> None:
    (tmp_path / "a.yaml").write_text(_SPEC)
    (tmp_path / "b.json").write_text(f'{{"schema_version": {version}, "findings": []}}')
    ran = shmem("lint", "--no-config", "a.yaml", "--baseline", "b.json", cwd=tmp_path)
    refused(
        ran, f"b.json: error: unsupported baseline {shown} (this shmem writes 1)", roots=[tmp_path]
    )


def test_allow_selectors_no_access_matches_are_said_short() -> None:
    result = shmem_cli.analyze(REPO / "access_specs" / "column_read_32x32.yaml")
    with pytest.raises(AssertionError) as err:
        shmem_cli.assert_no_bank_conflicts(result, allow=[1 << 20000])
    assert "allow names no access of the result: 0x1000000000" in str(err.value)
    with pytest.raises(AssertionError) as err:
        shmem_cli.assert_no_bank_conflicts(result, allow=["x" * 10**6, *range(-100, -1)])
    said = str(err.value).splitlines()[-1]
    assert said.startswith("allow names no access of the result: 'xxxxxxx")
    assert said.endswith(", -82 and 80 more") and len(said) < 400, said


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_file_named_with_a_terminal_escape_is_shown_not_sent(fmt: str, tmp_path: Path) -> None:
    name = "e\x1b]0;PWNED\x07\x1b[2J\x01.yaml"
    (tmp_path / name).write_text(_SPEC.replace("index: [threadIdx.x]", "index: [threadIdx.x * 2]"))
    ran = shmem("lint", "--no-config", ".", "-f", fmt, cwd=tmp_path)
    assert ran.code == 1, ran.text  # the spec's 2-way conflict
    assert "\x1b" not in ran.text and "\x07" not in ran.text and "\x01" not in ran.text
    assert "e\\x1b]0;PWNED\\x07\\x1b[2J\\x01.yaml" in ran.text, ran.text


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [("--block", "0x20", "write 32 for 0x20"), ("--grid", "0X2,1", "write 2 for 0X2")],
)
def test_a_hexadecimal_size_is_told_to_be_decimal(option: str, value: str, said: str) -> None:
    from shmem_cli.cuda.launch.values import LaunchError, parse_dims

    with pytest.raises(LaunchError) as err:
        parse_dims(value, option, limit=1024)
    assert err.value.message == (
        f"{option} {value!r}: sizes are decimal ('x' separates them, as in 32x8): {said}"
    )
    assert parse_dims("32x8", option, limit=1024) == (32, 8, 1)


@pytest.mark.parametrize(
    "args", [("lint", "--jobs", "9" * 100_000, "x.yaml"), ("analyze", "a" * 3000 + ".yaml")]
)
def test_an_argument_error_cuts_a_long_value(args: tuple[str, ...], tmp_path: Path) -> None:
    ran = shmem(*args, cwd=tmp_path)
    refused(ran, "shmem: error: ", "characters)", roots=[tmp_path])


# --- what a refusal names: a text's encoding, a kernel folder -------------------------------


@pytest.mark.parametrize(
    ("encoding", "said"),
    [
        ("utf-32", "UTF-32"),  # with its byte-order mark, which starts as UTF-16LE's
        ("utf-32-le", "UTF-32"),
        ("utf-32-be", "UTF-32"),
        ("utf-16", "UTF-16"),
        ("utf-16-be", "UTF-16"),
    ],
)
def test_a_wide_text_is_refused_as_the_encoding_it_is(
    tmp_path: Path, encoding: str, said: str
) -> None:
    # a UTF-32 spec was "file is UTF-16 encoded" (with its mark; without one: a NUL byte)
    (tmp_path / "s.yaml").write_bytes("name: x\nblock: [32]\n".encode(encoding))
    ran = shmem("lint", "s.yaml", cwd=tmp_path)
    refused(
        ran, f"s.yaml:1:1: error: file is {said} encoded; save it as UTF-8 text", roots=[tmp_path]
    )


def test_utf8_text_of_a_nul_is_no_wide_encoding() -> None:
    from shmem_cli.plumbing.bounded_read import wide_encoding

    assert wide_encoding(b"a\0\0\0") is None  # one character: not enough to say UTF-32
    assert wide_encoding("ab".encode("utf-32-le")) == "UTF-32"


def test_a_specs_kernel_folder_is_named_as_the_spec_names_it(tmp_path: Path) -> None:
    # "not traced ...: .: a folder, and no Triton cache entry is in it": the folder's path
    # from itself
    (tmp_path / "kernels").mkdir()
    (tmp_path / "k.yaml").write_text(
        "name: k\nblock: [32]\nkernel: {source: kernels, name: k}\n"
        "arrays:\n  a: {dtype: float, shape: [32]}\naccesses:\n  - {array: a, index: [lane]}\n"
    )
    ran = shmem("lint", "k.yaml", cwd=tmp_path)
    assert ran.code == 0 and "Traceback" not in ran.text, ran.text  # SH008 is a warning
    assert "compiled code: kernels: a folder, and no Triton cache entry is in it" in ran.text
