"""The specs shown in docs/spec-format.md are what the page says they are.

A ```yaml block preceded by ``<!-- spec -->`` is a complete, valid spec; one preceded
by ``<!-- invalid-spec -->`` is followed by a ```text block holding the exact error
shmem reports for it (as ``bad.yaml:LINE:COLUMN: error: ...``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shmem_cli import analyze
from shmem_cli.plumbing.errors import ShmemError

from .conftest import ROOT

DOC = ROOT / "docs" / "spec-format.md"
TEXT = DOC.read_text()

VALID = re.findall(r"<!-- spec -->\n```yaml\n(.*?)```", TEXT, re.S)
INVALID = re.findall(r"<!-- invalid-spec -->\n```yaml\n(.*?)```\s*```text\n(.*?)\n```", TEXT, re.S)


def test_the_page_has_its_examples() -> None:
    assert len(VALID) >= 5
    assert len(INVALID) >= 2


@pytest.mark.parametrize("body", VALID, ids=[f"spec{i}" for i in range(len(VALID))])
def test_complete_specs_are_valid(body: str, tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(body)
    result = analyze(path)
    assert result.accesses
    assert all(a.requests > 0 for a in result.accesses)


@pytest.mark.parametrize("body,message", INVALID, ids=[f"bad{i}" for i in range(len(INVALID))])
def test_invalid_specs_fail_as_shown(body: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(ShmemError) as info:
        analyze(path)
    assert info.value.render() == message.replace("bad.yaml", str(path), 1)


def _example(title: str) -> str:
    """The complete spec right after the heading ``title``."""
    section = TEXT.split(title, 1)[1]
    found = re.search(r"<!-- spec -->\n```yaml\n(.*?)```", section, re.S)
    assert found
    return found.group(1)


def _by_name(body: str, tmp_path: Path) -> dict[str, tuple[int, int, int]]:
    path = tmp_path / "example.yaml"
    path.write_text(body)
    return {a.name: (a.requests, a.wavefronts, a.ideal_wavefronts) for a in analyze(path).accesses}


def test_first_spec_is_two_way(tmp_path: Path) -> None:
    # float a[2*lane]: lanes 0 and 16 read words 0 and 32, both in bank 0
    assert _by_name(_example("## A first spec"), tmp_path) == {"a #0": (1, 2, 1)}


def test_annotated_example_figures(tmp_path: Path) -> None:
    body = _example("## A complete annotated example")
    # 8 warps x 4 iterations, one wavefront each; the atomic is warp-uniform per warp
    assert _by_name(body, tmp_path) == {
        "row write tile[ty + j][tx]": (32, 32, 32),
        "column read tile[tx][ty + j]": (32, 32, 32),
        "atomicAdd(&rowsum[ty], value)": (8, 8, 8),
    }
    unpadded = body.replace("pad: 1 ", "pad: 0 ", 1)
    assert unpadded != body
    # without the pad, the 32 lanes of a column read hit one bank: 32-way
    assert _by_name(unpadded, tmp_path)["column read tile[tx][ty + j]"] == (32, 1024, 32)


def test_loop_nesting_example(tmp_path: Path) -> None:
    body = _example("### Loops")
    assert _by_name(body, tmp_path) == {"for i { for j { a[i][j][lane] } }": (6, 6, 6)}


def test_atomics_example(tmp_path: Path) -> None:
    got = _by_name(_example("### Atomics"), tmp_path)
    # 8 warps; ATOMS.MAX on 4 addresses with 8 lanes each: 8 wavefronts per warp
    assert got["atomicMax(&hist[lane % 4], v)"] == (8, 64, 8)
    assert got["atomicAdd(&hist[byte], 1)"] == (8, 8, 8)


def test_ldmatrix_example(tmp_path: Path) -> None:
    # 4 warps x 4 k-steps; rows 144 bytes apart: each 8x8 matrix conflict-free, 4 per request
    got = _by_name(_example("### ldmatrix and stmatrix"), tmp_path)
    assert got == {"ldmatrix.x4 A fragment": (16, 64, 64)}
