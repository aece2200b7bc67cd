"""Heat-map cells judged against each request's own phases (AccessResult.heat_phases).

A cell is a bank conflict when its request costs more wavefronts than its phases with
an active lane (docs/hardware-model.md section 8), the tables' verdict; the excess over
Nsight's ideal of a partly active request is not one.

float4 (16-byte) loads: a request has one phase per quarter-warp (lanes 8q..8q+7)
that has an active lane, each moving 8 x 16 = 128 bytes; a quarter-warp phase
costs one wavefront when its 8 lanes read 128 contiguous bytes (32 distinct banks).
Lanes n and n^1 reading the same address pack into half-warp phases (arch.py).
double (8-byte) loads: one phase per half-warp with an active lane; the ideal is no
more than the active lanes' bytes in 128-byte wavefronts.
Every expectation below is derived from those rules by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shmem_cli.analysis.analyze import analyze
from shmem_cli.model import AccessResult, Report
from shmem_cli.render.heatmap import bucket_worst, heatmap
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.plain import Styled, Table
from shmem_cli.render.text import render_text


def float4_spec(
    index: str, loop: Any, when: str | None = None, dtype: str = "float4"
) -> dict[str, Any]:
    access: dict[str, Any] = {
        "name": "v",
        "array": "buf",
        "op": "load",
        "index": [index],
        "loop": loop,
    }
    if when is not None:
        access["when"] = when
    return {
        "name": "ideal",
        "block": [32],
        "arrays": {"buf": {"dtype": dtype, "shape": [128]}},
        "accesses": [access],
    }


def access_of(mapping: dict[str, Any]) -> AccessResult:
    return analyze(mapping).accesses[0]


def text_of(mapping: dict[str, Any]) -> list[str]:
    report = Report(files=(analyze(mapping),))
    out = render_text(report, RenderOptions(width=200, tables=False, heat=True))
    return [line.rstrip() for line in out.splitlines()]


# i = 0: lanes 0-7 only, buf[tid]: quarter 0 alone, 128 contiguous bytes -> 1 wavefront, ideal 1
# i = 1: lanes 0-7 only, buf[2 * tid]: lane k at byte 32k, lanes k and k+4 are 128 bytes apart
#        (same banks, different words) -> 2 wavefronts, ideal 1
# i = 2: all lanes, buf[tid]: 4 quarters, each 128 contiguous bytes -> 4 wavefronts, ideal 4
QUARTERS = float4_spec("tid * (1 + i % 2)", {"i": [0, 1, 2]}, when="i == 2 || tid < 8")


def test_heat_phases_holds_each_requests_own_phases() -> None:
    acc = access_of(QUARTERS)
    assert acc.heat is not None and acc.heat_phases is not None
    assert acc.heat.tolist() == [[1], [2], [4]]
    assert acc.heat_phases.tolist() == [[1], [1], [4]]
    assert acc.heat_phases.dtype == np.int32
    assert (acc.requests, acc.wavefronts, acc.ideal_wavefronts) == (3, 7, 6)


def test_no_request_is_minus_one_in_both_arrays() -> None:
    # warp 1 of a 64-thread block is idle when i == 1
    mapping = float4_spec("tid", {"i": [0, 1]}, when="i == 0 || tid < 32")
    mapping["block"] = [64]
    acc = access_of(mapping)
    assert acc.heat is not None and acc.heat_phases is not None
    assert acc.heat.tolist() == [[4, 4], [4, -1]]
    assert acc.heat_phases.tolist() == [[4, 4], [4, -1]]


def test_cells_compare_with_their_own_phases() -> None:
    # the mean, 6 / 3 = 2, would have shown i = 1 (2 wavefronts) as '.' and
    # the conflict-free i = 2 (4 wavefronts) as a conflict
    lines = text_of(QUARTERS)
    k = lines.index("i \\ warp  0")
    assert lines[k + 1 : k + 4] == ["       0  .", "       1  2", "       2  ."]
    assert (
        "'.' no bank conflict (no more than its phases with an active lane, 1-4), blank: none"
        in lines[k - 1]
    )
    assert lines[k + 4].startswith("1 of 3 requests conflict")


def grid_cells(acc: AccessResult) -> list[list[Any]]:
    blocks = heatmap(acc)
    assert blocks is not None
    table = blocks[1]
    assert isinstance(table, Table)
    return [row[1:] for row in table.rows]


def test_color_is_the_ratio_to_the_requests_phases() -> None:
    # i = 0: buf[tid / 2], all lanes: lanes 2k and 2k+1 share an address, so the pair
    #        rule gives half-warp phases: lanes 0-15 read elements 0-7 (128 bytes),
    #        lanes 16-31 elements 8-15 -> 2 wavefronts over 2 phases
    # i = 1: buf[2 * tid], all lanes: each quarter spans 256 bytes, lanes k and k+4 of a
    #        quarter share banks -> 2 wavefronts per quarter, 8 in all over 4 phases: ratio 2
    acc = access_of(float4_spec("i == 0 ? tid / 2 : 2 * tid", {"i": [0, 1]}))
    assert acc.heat is not None and acc.heat_phases is not None
    assert acc.heat.tolist() == [[2], [8]]
    assert acc.heat_phases.tolist() == [[2], [4]]
    (first,), (second,) = grid_cells(acc)
    assert isinstance(first, Styled) and first.plain == "." and first.base == "green"
    # 8 / 4 = 2x: yellow (the mean 3 phases would have given 8 / 3, orange)
    assert isinstance(second, Styled) and second.plain == "8" and second.base == "black on yellow"


def test_buckets_keep_the_worst_ratio_not_the_most_wavefronts() -> None:
    # 64 iterations, 2 per row: even i all lanes buf[tid] (4 wavefronts, 4 phases, fine),
    # odd i lanes 0-7 buf[2 * tid] (2 wavefronts, 1 phase, a 2-way conflict)
    lines = text_of(float4_spec("tid * (1 + i % 2)", {"i": "0..63"}, when="i % 2 == 0 || tid < 8"))
    k = lines.index("iteration \\ warp  0")
    rows = lines[k + 1 : k + 33]
    assert rows[0] == "             0-1  2"
    assert rows[-1] == "           62-63  2"
    assert all(row.endswith("  2") for row in rows)
    assert "(2 iterations per row: worst request shown)" in lines[k - 1]


def test_bucket_worst_on_a_small_grid() -> None:
    heat = np.array([[4, 2, -1], [8, 3, -1], [-1, -1, 5]], dtype=np.int32)
    phases = np.array([[4, 1, -1], [4, 1, -1], [-1, -1, 5]], dtype=np.float64)
    wf, worst_phases = bucket_worst(heat, phases, 2, 2)
    # top-left bucket ratios 1, 2, 2, 3: the 3-wavefront request in 1 phase
    # top-right: no request; bottom-left: none; bottom-right: 5 over 5 phases
    assert wf.tolist() == [[3, -1], [-1, 5]]
    assert worst_phases[0, 0] == 1 and worst_phases[1, 1] == 5
    # equal ratios: the request with more wavefronts wins (8 / 4 over 2 / 1)
    wf, worst_phases = bucket_worst(heat[:2, :2].copy(), np.array([[4.0, 1.0], [4.0, 4.0]]), 2, 2)
    assert (int(wf[0, 0]), float(worst_phases[0, 0])) == (8, 4.0)


# i = 0: lanes 0, 1, 2 and 16 only, buf[tid] (doubles; lanes 0 and 1, 0 and 2 differ: no
#        pair merge): two half-warp phases, 1 wavefront each -> 2 wavefronts over 2 phases,
#        no bank conflict; 4 x 8 bytes fit in one wavefront, so Nsight's ideal is 1 (an
#        excess of 1 that is the phase split, not a conflict)
# i = 1: all lanes, buf[2 * tid]: a half-warp's lanes span 256 bytes, lanes k and k+8 of a
#        half share banks -> 2 wavefronts per half, 4 over 2 phases: a 2-way conflict
SPLIT = float4_spec(
    "tid * (1 + i)", {"i": [0, 1]}, when="i == 1 || tid < 3 || tid == 16", dtype="double"
)


def test_a_partly_active_request_without_bank_conflict_is_a_dot() -> None:
    acc = access_of(SPLIT)
    assert acc.heat is not None and acc.heat_phases is not None
    assert acc.heat.tolist() == [[2], [4]]
    assert acc.heat_phases.tolist() == [[2], [2]]
    assert (acc.wavefronts, acc.ideal_wavefronts, acc.conflicted_requests) == (6, 3, 1)
    (first,), (second,) = grid_cells(acc)
    # wavefronts / ideal would be 2 / 1: a yellow "2" next to "0 conflicting requests" there
    assert isinstance(first, Styled) and first.plain == "." and first.base == "green"
    assert isinstance(second, Styled) and second.plain == "4" and second.base == "black on yellow"
    lines = text_of(SPLIT)
    k = lines.index("i \\ warp  0")
    assert "(no more than its phases with an active lane, 2)" in lines[k - 1]
    assert lines[k + 3].startswith("1 of 2 requests conflict; color: wavefronts / phases")
