"""What a new user saw in the output (issue 15), each reproduced and checked."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.analysis.analyze import analyze_many
from shmem_cli.cli import main
from shmem_cli.commands.environment import Environment
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.text import render_text

from .conftest import ROOT

SPECS = ROOT / "access_specs"

# every lane of the warp reads column 31 of a float[32][32]: word 32*lane + 31, bank 31,
# 32 distinct words -> 32 wavefronts, lane w alone in bank 31 in wavefront w
BANK31 = """\
name: bank 31
block: [32]
arrays:
  a: {dtype: float, shape: [32, 32]}
accesses:
  - name: column 31
    array: a
    index: [lane, 31]
"""

# float4 loads of lanes 0-7 only: one quarter-warp phase with lanes, three without;
# 1 wavefront, but a 16-byte access takes a cycle per phase: 4 cycles
QUARTER = """\
name: quarter
block: [32]
arrays:
  v: {dtype: float4, shape: [32]}
accesses:
  - name: first quarter
    array: v
    index: [lane]
    when: lane < 8
"""


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run(*args: str, env: Environment | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), obj=env)
    return result.exit_code, result.stdout, result.stderr


def bank31_rows(text: str) -> dict[str, list[str]]:
    """Bank-table rows by wavefront label (the rows under the lines starting 'wf')."""
    rows: dict[str, list[str]] = {}
    in_table = False
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["wf"]:
            in_table = True
        elif not words or not words[0].isdigit():
            in_table = False
        elif in_table:
            rows.setdefault(words[0], []).extend(words[1:])
    return rows


def test_narrow_terminal_folds_the_bank_table_and_hides_no_bank(tmp_path: Path) -> None:
    spec = write(tmp_path, BANK31)
    report = analyze_many([str(spec)])
    for color in (False, True):
        text = render_text(report, RenderOptions(width=80, color=color, rows=None))
        plain = text if not color else _strip_ansi(text)
        assert "(the 32 banks in 2 tables of 16, to fit 80 columns)" in plain
        assert max(len(line) for line in plain.splitlines()) <= 80
        header_banks = [
            w for line in plain.splitlines() if line.startswith("wf") for w in line.split()[1:]
        ]
        assert header_banks == [str(b) for b in range(32)]  # every bank, once
        rows = bank31_rows(plain)
        for lane in range(32):  # wavefront w serves lane w, in bank 31
            assert rows[str(lane)] == [str(lane)], (lane, rows.get(str(lane)))
    # wide enough: one table, no note
    wide = render_text(report, RenderOptions(width=200))
    assert "tables of" not in wide


def _strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_rows_option_shows_all_rows_or_n(tmp_path: Path) -> None:
    spec = write(tmp_path, BANK31)
    code, out, _ = run("analyze", str(spec), "--rows", "all")
    assert code == 0 and "not shown" not in out
    assert sorted(map(int, bank31_rows(out))) == list(range(32))
    code, out, _ = run("analyze", str(spec), "--rows", "5")
    assert code == 0
    # 4 rows (wavefronts 0-2 and the last) and a caption for the 28 left out
    assert sorted(map(int, bank31_rows(out))) == [0, 1, 2, 31]
    assert "wavefronts 3-30 not shown (28 rows; --rows all)" in out
    code, _, err = run("analyze", str(spec), "--rows", "many")
    assert code == 2 and "--rows expects" in err
    svg = tmp_path / "all.svg"
    code, _, _ = run("analyze", str(spec), "--rows", "all", "--svg", str(svg))
    assert code == 0 and "not&#160;shown" not in svg.read_text()
    assert ">30&#160;" in svg.read_text() or ">30<" in svg.read_text()


@pytest.mark.slow
def test_piped_text_has_no_trailing_spaces(tmp_path: Path) -> None:
    outputs = [
        run("analyze", str(SPECS))[1],
        run("analyze", str(SPECS / "transpose_naive.yaml"), "--width", "80")[1],  # through rich
        run("sweep", str(SPECS / "transpose_naive.yaml"), "--pad", "0..4")[1],
    ]
    for out in outputs:
        assert out
        assert not [line for line in out.splitlines() if line != line.rstrip()]


def test_sweep_header_is_not_wrapped(tmp_path: Path) -> None:
    code, out, _ = run(
        "sweep",
        str(SPECS / "transpose_naive.yaml"),
        "--pad",
        "0..4",
        "--swizzle",
        "none,32B,64B,128B",
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("sweep of 20 variant(s) (ranges inclusive); best = ")
    assert lines[2] == "  pad 0..4 (every array)"
    assert lines[3] == "  swizzle none,32B,64B,128B (every array)"
    assert max(len(line) for line in lines) <= 200


def test_repeated_sweep_axis_is_refused() -> None:
    spec = str(SPECS / "transpose_naive.yaml")
    code, out, err = run("sweep", spec, "--pad", "0..4", "--pad", "0..2")
    assert code == 2 and out == ""
    assert "--pad 0..4 and --pad 0..2 both set the pad of every array" in err
    code, _, err = run("sweep", spec, "--pad", "tile=0..1", "--pad", "tile=2")
    assert code == 2 and "the pad of tile" in err


def test_suggest_says_a_shared_fix_once() -> None:
    spec = str(SPECS / "reduction_interleaved.yaml")
    code, out, _ = run("analyze", spec, "--suggest", "--no-tables", "--no-heatmap")
    assert code == 0
    hints = [line for line in out.splitlines() if line.startswith("hint: ")]
    assert len(hints) == 3
    assert hints[0].startswith("hint: cheapest fix: swizzle sdata")
    assert sum("cheapest fix" in h for h in hints) == 1
    assert hints[1].startswith("hint: the fix for 'read sdata[index]' above: this access ")


def test_cycles_column_only_where_it_differs_from_wavefronts(tmp_path: Path) -> None:
    code, out, _ = run("analyze", str(SPECS / "column_read_32x32.yaml"), "--no-tables")
    assert code == 0 and "cycles" not in out
    spec = write(tmp_path, QUARTER)
    code, out, _ = run("analyze", str(spec), "--no-tables")
    assert code == 0
    header, row = out.splitlines()[1:3]
    assert header.split()[-1] == "cycles"
    assert row.split()[-6] == "1" and row.split()[-1] == "~4"  # 1 wavefront, 4 cycles
    assert "cycles: a 16-byte access takes a cycle for each of its quarter-warp phases" in out


def test_control_characters_of_a_spec_never_reach_the_terminal(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        BANK31.replace("name: bank 31", 'name: "evil\\e[31m"').replace(
            "name: column 31", 'name: "x\\e[2Jy"'
        ),
    )
    screen = io.StringIO()  # a terminal, as far as color goes (FORCE_COLOR)
    env = Environment(stdout=screen, stderr=io.StringIO(), env={"FORCE_COLOR": "1"}, columns=200)
    code, _, _ = run("analyze", str(spec), "--no-tables", env=env)
    colored = screen.getvalue()
    assert code == 0 and "\x1b[1m" in colored  # in color indeed
    assert "\x1b[2J" not in colored and "x\\x1b[2Jy" in colored
    code, out, _ = run("analyze", str(spec), "--no-tables")
    assert code == 0
    assert "\x1b" not in out and "evil\\x1b[31m" in out and "x\\x1b[2Jy" in out
