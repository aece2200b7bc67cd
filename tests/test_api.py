"""The documented Python API (docs/python.md)."""

from __future__ import annotations

import json

import pytest

import shmem_cli
from shmem_cli import ShmemError, analyze
from shmem_cli.analysis.analyze import RequestChoice

from .conftest import ROOT


def column_read(pad: int) -> dict[str, object]:
    return {
        "block": [32, 32],
        "arrays": {"tile": {"dtype": "float32", "shape": [32, 32], "pad": pad}},
        "accesses": [
            {"name": "column read", "array": "tile", "index": ["threadIdx.x", "threadIdx.y"]}
        ],
    }


def test_mapping_padded_column_read_is_conflict_free() -> None:
    (acc,) = analyze(column_read(1)).accesses
    # 32 warps, each reading one column of a [32][33] tile: one wavefront each
    assert (acc.requests, acc.wavefronts, acc.max_ways) == (32, 32, 1)
    assert acc.conflict_free


def test_mapping_unpadded_column_read_is_32_way() -> None:
    (acc,) = analyze(column_read(0)).accesses
    assert (acc.requests, acc.wavefronts, acc.max_ways) == (32, 32 * 32, 32)
    assert acc.excess_wavefronts == 32 * 31
    # the worst request's first wavefront serves lane 0 alone, from bank 0
    assert acc.detail is not None
    first = acc.detail.wavefronts[0]
    assert [(c.bank, c.lanes) for c in first.cells] == [(0, (0,))]


def test_path_and_mapping_agree_with_json() -> None:
    result = analyze(ROOT / "access_specs" / "column_read_32x33.yaml")
    as_json = json.loads(json.dumps(result.to_json()))
    assert as_json["path"].endswith("column_read_32x33.yaml")
    # 32 warps; the row store and the column read of the [32][33] tile: 1 wavefront each
    assert [(e["requests"], e["wavefronts"], e["max_ways"]) for e in as_json["accesses"]] == [
        (32, 32, 1)
    ] * 2
    for acc, entry in zip(result.accesses, as_json["accesses"], strict=True):
        assert entry["wavefronts"] == acc.wavefronts and entry["requests"] == acc.requests


def test_choice_selects_the_shown_request() -> None:
    spec = column_read(0)
    spec["accesses"][0]["loop"] = {"k": "0..2"}  # type: ignore[index]
    (acc,) = analyze(spec, choice=RequestChoice(warp=5, iteration=2)).accesses
    assert acc.shown is not None
    assert (acc.shown.warp, acc.shown.iteration, acc.shown.loop_values) == (5, 2, (("k", 2),))


def test_invalid_mapping_raises_located_error() -> None:
    spec = column_read(0)
    spec["arrays"]["tile"]["dtype"] = "flaot32"  # type: ignore[index]
    with pytest.raises(ShmemError) as info:
        analyze(spec)
    assert "unknown dtype 'flaot32'" in str(info.value)
    assert "did you mean 'float32'" in str(info.value)


def test_version_is_exposed() -> None:
    assert shmem_cli.__version__.count(".") == 2


def test_worst_request_figure_does_not_follow_the_chosen_request() -> None:
    # warp 0 reads a column of a [64][32] float tile (32-way: 32 wavefronts), warp 1 a row (1)
    spec = {
        "block": [32, 2],
        "arrays": {"t": {"dtype": "float", "shape": [64, 32]}},
        "accesses": [{"array": "t", "index": ["warp == 0 ? lane : 0", "warp == 0 ? 0 : lane"]}],
    }
    (acc,) = analyze(spec, choice=RequestChoice(warp=1)).accesses
    assert acc.shown is not None and acc.shown.wavefronts == 1
    assert acc.cost.max_wavefronts_per_request == 32
