"""The warp x iteration heat map (shmem_cli/render/heatmap.py) and its CLI switches."""

from __future__ import annotations

from typing import Any

import numpy as np
from click.testing import CliRunner

from shmem_cli.analysis.analyze import analyze
from shmem_cli.cli import main
from shmem_cli.model import Report
from shmem_cli.render.heatmap import bucket_max, excess_style, loop_labels
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.text import render_text


def spec(index: str, loop: Any, block: int = 64, size: int = 2048, **extra: Any) -> dict[str, Any]:
    access = {"name": "a", "array": "buf", "op": "load", "index": [index], "loop": loop, **extra}
    return {
        "name": "heat",
        "block": [block],
        "arrays": {"buf": {"dtype": "float", "shape": [size]}},
        "accesses": [access],
    }


def text_of(mapping: dict[str, Any], **kw: Any) -> list[str]:
    report = Report(files=(analyze(mapping),))
    out = render_text(report, RenderOptions(width=200, tables=False, heat=True, **kw))
    return [line.rstrip() for line in out.splitlines()]


def test_loop_labels_follow_the_flat_iteration_order() -> None:
    assert loop_labels(("j = 0..24:8",), 4) == ("j", ["0", "8", "16", "24"])
    assert loop_labels(("s in [1, 2, 4]",), 3) == ("s", ["1", "2", "4"])
    # the last loop varies fastest
    assert loop_labels(("kk = 0..1", "n in [3, 5]"), 4) == ("kk,n", ["0,3", "0,5", "1,3", "1,5"])
    assert loop_labels(("j = 0..3",), 5) is None  # count does not match
    assert loop_labels(("something else",), 1) is None


def test_bucket_max_keeps_no_request_only_where_the_whole_bucket_is_empty() -> None:
    heat = np.array([[-1, 2], [3, -1], [-1, -1]], dtype=np.int32)
    assert bucket_max(heat, 0, 2).tolist() == [[3, 2], [-1, -1]]
    assert bucket_max(heat, 1, 2).tolist() == [[2], [3], [-1]]


def test_excess_levels() -> None:
    assert excess_style(2) == "black on yellow"
    assert excess_style(3) == excess_style(4) == "black on dark_orange"
    assert excess_style(8) == "white on red"
    assert excess_style(32) == "white on magenta"


def test_grid_shows_which_iteration_conflicts() -> None:
    # 2 warps, loop st = 1, 2, 1, 32 over buf[tid * st]: stride 1 is conflict-free ('.'),
    # stride 2 puts lanes i and i+16 in one bank (2 wavefronts), stride 32 all lanes (32)
    lines = text_of(spec("tid * st", {"st": [1, 2, 1, 32]}))
    i = lines.index("st \\ warp  0  1")
    assert lines[i + 1 : i + 5] == [
        "        1  .  .",
        "        2  2  2",
        "        1  .  .",
        "       32 32 32",
    ]
    assert "'.' no bank conflict (no more than its phases with an active lane, 1)" in lines[i - 1]
    assert lines[i + 5].startswith("4 of 8 requests conflict")


def test_warps_without_request_are_blank() -> None:
    # only warp 0 is active when st = 2 (tid < 32)
    lines = text_of(spec("tid * st", {"st": [1, 2]}, when="st == 1 || tid < 32"))
    i = lines.index("st \\ warp  0  1")
    assert lines[i + 1 : i + 3] == ["        1  .  .", "        2  2"]


def test_uniform_requests_get_one_line() -> None:
    lines = text_of(spec("tid * 32", {"j": "0..3"}, block=32, size=4096))
    assert (
        "requests: all 4 (1 warp(s) x 4 iteration(s)) cost 32 wavefront(s) each, "
        "1 phase(s) with an active lane" in lines
    )
    assert not any("\\ warp" in line for line in lines)


def test_conflict_free_access_has_no_heat_map() -> None:
    lines = text_of(spec("tid", {"j": "0..3"}))
    assert not any(line.startswith("requests") for line in lines)


def test_many_iterations_are_bucketed_with_the_worst_request() -> None:
    # 64 iterations of one warp: even i stride 1 (1 wavefront), odd i stride 2 (2 wavefronts);
    # buckets of 2 iterations each hold one of each, so every row shows 2
    lines = text_of(spec("tid * (1 + i % 2)", {"i": "0..63"}, block=32, size=64))
    i = lines.index("iteration \\ warp  0")
    rows = lines[i + 1 : i + 33]
    assert rows[0] == "             0-1  2"
    assert rows[-1] == "           62-63  2"
    assert "(2 iterations per row: worst request shown)" in lines[i - 1]


def test_cli_heatmap_switches(tmp_path: Any) -> None:
    import yaml

    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec("tid * st", {"st": [1, 2, 1, 32]})))
    runner = CliRunner()
    default = runner.invoke(main, ["analyze", str(path)]).output
    off = runner.invoke(main, ["analyze", str(path), "--no-heatmap"]).output
    summary_only = runner.invoke(main, ["analyze", str(path), "--no-tables"]).output
    heat_only = runner.invoke(main, ["analyze", str(path), "--no-tables", "--heatmap"]).output
    assert "st \\ warp" in default
    assert "st \\ warp" not in off and "st \\ warp" not in summary_only
    assert "st \\ warp" in heat_only and "wf 0  1  2" not in heat_only
    # without the heat map the output is the bank-table report unchanged
    assert off == default.replace(
        default[default.index("requests (warps") : default.index("\ncells:")], ""
    )
