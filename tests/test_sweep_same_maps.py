"""``shmem sweep``: two swizzles that are one map over the array's own range of offsets are
one row, naming both spellings (analysis.sweep.same_maps), decided by the maps, not the
spelling: ``128B`` is ``Swizzle<3,4,3>``; ``Swizzle<0,4,3>`` has no term (``none``);
``Swizzle<3,4,3>`` XORs bits 7, 8 and 9 into bits 4, 5 and 6 and ``Swizzle<2,4,3>`` bits 7
and 8 alone, so on a 512-byte array (offsets below 2^9) the two are one map, on a 1 KiB
array two."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from shmem_cli.analysis.sweep.same_maps import reached
from shmem_cli.cli import main
from shmem_cli.hardware.swizzle import parse_swizzle

from .conftest import ROOT

COLUMN = ROOT / "shmem_cli" / "example_specs" / "column_read_32x32.yaml"

SPEC = """\
name: rows of floats
block: [32]
params: {R: 8}
arrays:
  tile:
    dtype: float
    shape: [R, 16]
accesses:
  - name: column walk
    array: tile
    op: load
    index: [threadIdx.x % R, threadIdx.x / R]
"""


def _rows(args: list[str]) -> list[dict[str, object]]:
    got = CliRunner().invoke(main, ["sweep", *args, "--format", "json"])
    assert got.exit_code == 0, got.output
    return list(json.loads(got.output)["variants"])


def test_two_spellings_of_one_map_are_one_row() -> None:
    swizzles = "none,Swizzle<0,4,3>,128B,Swizzle<3,4,3>,Swizzle<3,4,4>"
    rows = _rows([str(COLUMN), "--swizzle", swizzles])
    assert [r["swizzle"] for r in rows] == [
        "none = Swizzle<0,4,3>",
        "128B = Swizzle<3,4,3>",
        "Swizzle<3,4,4>",  # the same totals as 128B here, another map: its own row
    ]
    assert [r["index"] for r in rows] == [0, 1, 2]
    text = CliRunner().invoke(main, ["sweep", str(COLUMN), "--swizzle", swizzles]).output
    assert "best 128B = Swizzle<3,4,3> 160" in " ".join(text.split())  # its wavefronts


def test_the_maps_are_compared_over_the_arrays_range(tmp_path: Path) -> None:
    spec = tmp_path / "rows.yaml"
    spec.write_text(SPEC)  # R = 8: 8 x 16 floats, 512 bytes
    rows = _rows([str(spec), "--swizzle", "Swizzle<3,4,3>,Swizzle<2,4,3>"])
    assert [r["swizzle"] for r in rows] == ["Swizzle<3,4,3> = Swizzle<2,4,3>"]
    spec.write_text(SPEC.replace("{R: 8}", "{R: 16}"))  # 1 KiB: bit 9 is reached
    rows = _rows([str(spec), "--swizzle", "Swizzle<3,4,3>,Swizzle<2,4,3>"])
    assert [r["swizzle"] for r in rows] == ["Swizzle<3,4,3>", "Swizzle<2,4,3>"]


def test_each_pad_and_params_value_keeps_its_own_row(tmp_path: Path) -> None:
    spec = tmp_path / "rows.yaml"
    spec.write_text(SPEC)
    rows = _rows([str(spec), "--pad", "0,1", "--swizzle", "none,Swizzle<0,4,3>"])
    assert [(r["pad"], r["swizzle"]) for r in rows] == [
        (0, "none = Swizzle<0,4,3>"),
        (1, "none = Swizzle<0,4,3>"),
    ]
    # the range is the one under each params value: R = 8 merges, R = 16 does not
    args = [str(spec), "--param", "R=8,16", "--swizzle", "Swizzle<3,4,3>,Swizzle<2,4,3>"]
    assert [(r["params"], r["swizzle"]) for r in _rows(args)] == [
        ({"R": 8}, "Swizzle<3,4,3> = Swizzle<2,4,3>"),
        ({"R": 16}, "Swizzle<3,4,3>"),
        ({"R": 16}, "Swizzle<2,4,3>"),
    ]


def test_reached_keeps_the_terms_an_offset_below_the_size_sets() -> None:
    swz = parse_swizzle("Swizzle<3,4,3>")  # sources 7, 8, 9 into 16, 32, 64
    assert reached(swz, 512) == ((7, 16), (8, 32))
    assert reached(swz, 513) == ((7, 16), (8, 32), (9, 64))
    assert reached(swz, 128) == ()
    assert reached(None, 1 << 20) == ()
