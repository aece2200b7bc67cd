"""The pair rule against the H200's pair labs (issue 30; tests/data/trace/pairs3 to pairs8):
one warp, one ``LDS.64`` of ``double bins[256]`` or ``LDS.128`` of ``float4 bins[128]`` per
launch, lane l reading element ``idx[l]`` of the launch's input file (-1: the lane stays
off), predicated, inside a branch or with every lane on (pairs7), whatever the array holds
and wherever it lives (pairs8): 1,549 launches, every fourth read of pairs6 and every read of
pairs3 to pairs5 twice.

Nsight Compute counts these reads two ways (docs/hardware-model.md 3). Its per-op counter
(``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld``, the ``per_op`` of measured.json)
follows the pair rule on every launch: lanes paired at distance 1 or 2 merge their phases,
bank conflicts or not; shmem and the reference model count that. Its per-instruction source
counters count an ``LDS.64`` whose merged phase asks a bank for two words as its unmerged
half-warps instead; an ``LDS.128``'s between the two.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .reference import asks_twice, pairs_up, phase_cost, request_cost
from .test_trace_everyday import per_instruction
from .test_trace_measured import traced

LABS = ("pairs3", "pairs4", "pairs5", "pairs6", "pairs7", "pairs8")
Addr = list[int | None]


def _launches(lab: str) -> list[dict[str, Any]]:
    return list(json.loads((TRACE_DATA / lab / "launches.json").read_text())["launches"])


def _measured(lab: str) -> dict[str, dict[str, Any]]:
    doc = json.loads((TRACE_DATA / lab / "measured.json").read_text())
    return {m["id"]: m for m in doc["launches"]}


def read(lab: str, launch: dict[str, Any]) -> tuple[Addr, int]:
    """The read's byte address per lane (None: off) and its width."""
    width = 8 if launch["kernel"].endswith("64") else 16
    index = struct.unpack("<32i", (TRACE_DATA / lab / launch["args"][1]["file"]).read_bytes())
    return [None if k < 0 else k * width for k in index], width


def load_row(m: dict[str, Any]) -> dict[str, Any]:
    """The source counters of the launch's one executed load."""
    (row,) = [i for i in m["instructions"] if "LDS" in i["sass"] and i["executed"]]
    return dict(row)


def _costs(addr: Addr, width: int, lanes: int) -> int:
    """Wavefronts of ``addr`` cut into phases of ``lanes`` consecutive lanes."""
    total = 0
    for p in range(0, 32, lanes):
        live = [(n, a) for n in range(p, p + lanes) if (a := addr[n]) is not None]
        total += phase_cost(live, width, True) if live else 0
    return total


@pytest.mark.parametrize("lab", LABS)
def test_nsights_per_op_counter_follows_the_pair_rule(lab: str) -> None:
    """Every launch's load wavefronts per op as the reference model costs its read."""
    measured = _measured(lab)
    for launch in _launches(lab):
        addr, width = read(lab, launch)
        per_op = measured[launch["id"]]["per_op"]["ld"]
        cost = request_cost(addr, "load", width, "inc", 1)
        assert (per_op["requests"], per_op["wavefronts"]) == (1, cost.wavefronts), launch["id"]


@pytest.mark.parametrize("lab", LABS)
def test_nsights_source_page_counts_a_conflicted_merge_unmerged(lab: str) -> None:
    """The source counters: an ``LDS.64`` whose lanes pair up and whose merged phase asks a
    bank for two words costs its half-warps there (2 to 32 lanes on); any other ``LDS.64``
    what the per-op counter counts. An ``LDS.128`` lies between its merged and its unmerged
    cost (which quarter-warps it keeps is open: docs/hardware-model.md 10), but one whose
    lanes all read one address costs a wavefront for every 16 lanes on there."""
    measured = _measured(lab)
    seen = 0
    for launch in _launches(lab):
        addr, width = read(lab, launch)
        row = load_row(measured[launch["id"]])
        merged = request_cost(addr, "load", width, "inc", 1).wavefronts
        unmerged = _costs(addr, width, 128 // width)
        pairs = pairs_up(addr, 1) or pairs_up(addr, 2)
        wide = [list(range(p, p + 256 // width)) for p in range(0, 32, 256 // width)]
        on = [a for a in addr if a is not None]
        if width == 16 and len(set(on)) == 1:  # one address: a wavefront a 16 lanes
            assert row["wavefronts"] == -(-len(on) // 16), launch["id"]
        elif width == 16:
            assert merged <= row["wavefronts"] <= unmerged, launch["id"]
        elif pairs and asks_twice(addr, wide, width):
            assert row["wavefronts"] == unmerged, launch["id"]
            seen += unmerged != merged
        else:
            assert row["wavefronts"] == merged, launch["id"]
    if lab in ("pairs5", "pairs6", "pairs7", "pairs8"):
        assert seen  # the labs hold such reads


def _traced_ids() -> list[Any]:
    """pairs3 to pairs5 whole, the chosen reads of pairs6 to pairs8 (``m_``, ``_5_``)."""
    out = []
    for lab in LABS:
        for launch in _launches(lab):
            lid = launch["id"]
            if lid.endswith("_r2"):
                continue
            if lab in ("pairs3", "pairs4", "pairs5") or "_m_" in lid or lid.startswith("m_"):
                out.append(pytest.param(lab, lid, id=f"{lab}-{lid}"))
    return out


@needs_nvdisasm
@pytest.mark.slow
@pytest.mark.parametrize(("lab", "launch_id"), _traced_ids())
def test_the_trace_counts_each_read_as_nsights_per_op_counter(
    lab: str, launch_id: str, tmp_path: Path
) -> None:
    launch = next(x for x in _launches(lab) if x["id"] == launch_id)
    kernel = traced(launch, tmp_path, TRACE_DATA / lab)
    m = _measured(lab)[launch_id]
    load = kernel.totals["load"]
    assert (load.requests, load.wavefronts) == (
        m["per_op"]["ld"]["requests"],
        m["per_op"]["ld"]["wavefronts"],
    )
    row = load_row(m)
    got = per_instruction(kernel)[row["pc"]]
    assert got == (1, m["per_op"]["ld"]["wavefronts"])
    assert kernel.misc.wavefronts == m["misc_wavefronts"]  # hardware-model 9e
