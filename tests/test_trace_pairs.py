"""The pair rule against the pair labs (issue 30; tests/data/trace/pairs3 to pairs10): one
warp, one ``LDS.64`` of ``double bins[256]`` or ``LDS.128`` of ``float4 bins[128]`` per
launch, lane l reading element ``idx[l]`` of the launch's input file (-1: the lane stays
off), predicated, inside a branch or with every lane on (pairs7), whatever the array holds
and wherever it lives (pairs8): 1,549 launches on the H200, every fourth read of pairs6 and
every read of pairs3 to pairs5 twice, 160 reads drawn afresh on an H100 (pairs9), and 378
LDS.128 reads on the H200 that take apart those the source counters count one more
(pairs10; tests/test_trace_pairs10.py has what they showed).

Nsight Compute counts these reads two ways (docs/hardware-model.md 3). Its per-op counter
(``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld``, the ``per_op`` of measured.json)
follows the pair rule on every launch: lanes paired at distance 1 or 2 merge their phases,
bank conflicts or not; shmem and the reference model count that. Its per-instruction source
counters count a merged phase that asks a bank for two words as its unmerged phases
instead, and an ``LDS.128``'s half-warp 0 so also where lane 31 is on and, at every
distance the lanes pair up at, some active lane of half-warp 0 has its partner off; their
"ideal" column is the bytes moved in 128-byte wavefronts, capped by
that count.
"""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.engine import AccessKind, request_stats
from shmem_cli.trace.ncu.compare import compare_kernel, function_text, read_ncu_csv

from .conftest import TRACE_DATA, needs_nvdisasm
from .reference import pairs_up, request_cost, source_view
from .test_trace_everyday import per_instruction
from .test_trace_measured import cubin, traced

LABS = ("pairs3", "pairs4", "pairs5", "pairs6", "pairs7", "pairs8", "pairs9", "pairs10")
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


@pytest.mark.parametrize("lab", LABS)
def test_nsights_per_op_counter_follows_the_pair_rule(lab: str) -> None:
    """Every launch's load wavefronts per op as the reference model costs its read."""
    measured = _measured(lab)
    for launch in _launches(lab):
        addr, width = read(lab, launch)
        per_op = measured[launch["id"]]["per_op"]["ld"]
        cost = request_cost(addr, "load", width, "inc", 1)
        requests = int(any(a is not None for a in addr))  # no lane on: no request (n128_061)
        got = (per_op["requests"], per_op["wavefronts"])
        assert got == (requests, cost.wavefronts), launch["id"]


@pytest.mark.parametrize("lab", LABS)
def test_nsights_source_page_counts_some_merged_phases_unmerged(lab: str) -> None:
    """The source counters: a load whose lanes pair up costs its merged phases, each one
    that asks a bank for two words as its unmerged halves, and an ``LDS.128``'s half-warp 0
    as its quarter-warps also where lane 31 is on and half-warp 0 holds a lane whose partner
    is off at every distance the lanes pair up at (pairs6's r128_005, pairs9's n128_001,
    ...); lanes all on one address a wavefront a merged
    phase's worth of them (``reference.source_view``). Any other load: the per-op count."""
    measured = _measured(lab)
    seen = set()
    for launch in _launches(lab):
        addr, width = read(lab, launch)
        row = load_row(measured[launch["id"]])
        merged = request_cost(addr, "load", width, "inc", 1).wavefronts
        if pairs_up(addr, 1) or pairs_up(addr, 2):
            assert row["wavefronts"] == source_view(addr, width), launch["id"]
            if row["wavefronts"] != merged:
                seen.add(width)
        else:
            assert row["wavefronts"] == merged, launch["id"]
    if lab in ("pairs5", "pairs6", "pairs7", "pairs8", "pairs9"):
        assert seen == {8, 16}  # the labs hold reads of both widths the two counters differ on


def test_each_condition_of_the_lane_31_clause_is_needed() -> None:
    """docs/hardware-model.md 3: the LDS.128 clause (half-warp 0 unmerged where lane 31 is
    on and, at every distance the lanes pair up at, a lane of half-warp 0 has its partner
    off) over the 583 distinct merged LDS.128 reads of pairs3 to pairs10: without it 247
    count one too few; without its lane-31 condition 96 one too many, without its partner
    condition 41; the clause it replaced (any lane's partner off, at the first distance)
    counts 20 of pairs10's reads one too many."""
    reads: dict[tuple[int | None, ...], int] = {}  # each distinct read once, as pairs7-8 repeat
    for lab in LABS:
        measured = _measured(lab)
        for launch in _launches(lab):
            addr, width = read(lab, launch)
            if width == 16 and (pairs_up(addr, 1) or pairs_up(addr, 2)):
                reads[tuple(addr)] = load_row(measured[launch["id"]])["wavefronts"]

    def over(clause: tuple[str, ...] | None) -> list[int]:  # the variant's count less the GPU's
        return [source_view(list(a), 16, clause) - got for a, got in reads.items()]

    assert len(reads) == 583
    assert all(x == 0 for x in over(("lane 31", "partner off")))
    assert sorted(x for x in over(None) if x) == [-1] * 247
    assert sorted(x for x in over(("partner off",)) if x) == [1] * 96
    assert sorted(x for x in over(("lane 31",)) if x) == [1] * 41
    assert sorted(x for x in over(("lane 31", "any partner off")) if x) == [1] * 20


@pytest.mark.parametrize("lab", LABS)
def test_nsights_ideal_column_is_the_bytes_moved_capped_by_the_count(lab: str) -> None:
    """The source page's "L1 Wavefronts Shared Ideal" of each read: the 128-byte
    wavefronts its active lanes' bytes fill, never more than its wavefronts there."""
    measured = _measured(lab)
    for launch in _launches(lab):
        addr, width = read(lab, launch)
        row = load_row(measured[launch["id"]])
        lanes = sum(a is not None for a in addr)
        assert row["ideal"] == min(-(-lanes * width // 128), row["wavefronts"]), launch["id"]


@pytest.mark.parametrize("lab", LABS)
def test_the_engines_source_view_figure_is_nsights_source_counter(lab: str) -> None:
    """Per-op wavefronts plus ``source_extra`` are the source counters' wavefronts on every
    launch."""
    measured = _measured(lab)
    differ = 0
    for launch in _launches(lab):
        addr, width = read(lab, launch)
        lanes = np.array([[0 if a is None else a for a in addr]], dtype=np.int64)
        on = np.array([[a is not None for a in addr]])
        stats = request_stats(lanes, on, AccessKind("load", width), SM90)
        source = int(stats.wavefronts[0] + stats.source_extra[0])
        assert load_row(measured[launch["id"]])["wavefronts"] == source, launch["id"]
        differ += bool(stats.source_extra[0])
    if lab in ("pairs5", "pairs6", "pairs7", "pairs8"):
        assert differ  # the labs hold reads the two counters count differently


def source_page(lab: str, launch: dict[str, Any], path: Path) -> Path:
    """The launch's Source-page CSV as Nsight Compute exports it, each instruction of the
    cubin with its measured counters (measured.json) at its address."""
    m = _measured(lab)[launch["id"]]
    _, disassembly = cubin(TRACE_DATA / lab / (Path(launch["source"]).stem + ".sm_90.cubin"))
    code = function_text(disassembly, launch["mangled"])
    counted = {i["pc"]: i for i in m["instructions"]}
    with path.open("w", newline="") as f:
        out = csv.writer(f, quoting=csv.QUOTE_ALL)
        out.writerow(["Kernel Name", m["ncu_kernel_name"]])
        columns = ["Instructions Executed", "L1 Wavefronts Shared", "L1 Wavefronts Shared Ideal"]
        out.writerow(["Address", "Source", *columns])
        for pc, text in sorted(code.items()):
            c = counted.get(pc, {})
            row = [c.get(k, 0) for k in ("executed", "wavefronts", "ideal")]
            out.writerow([f"0x{0x7F0000000000 + pc:x}", text, *row])
    return path


@needs_nvdisasm
def test_compare_agrees_with_a_source_page_that_counts_the_merge_unmerged(
    tmp_path: Path,
) -> None:
    """pairs5's a_lo01 (an LDS.64 whose merged phase asks a bank for two words): 2 wavefronts
    per op, 3 on the source page; ``--compare`` against its source counters agrees."""
    launch = next(x for x in _launches("pairs5") if x["id"] == "a_lo01")
    kernel = traced(launch, tmp_path, TRACE_DATA / "pairs5")
    _, disassembly = cubin(TRACE_DATA / "pairs5" / (Path(launch["source"]).stem + ".sm_90.cubin"))
    code = function_text(disassembly, launch["mangled"])
    path = source_page("pairs5", launch, tmp_path / "source.csv")
    (result,) = [compare_kernel(kernel, code, read_ncu_csv(path), str(path))]
    (load,) = [i for i in result.instructions if "LDS" in i.sass]
    assert load.measured == (1, 3, 1)  # the source page: the two half-warps
    assert load.traced == (1, 2, 1)  # per op: the merged phase, 2-way
    assert load.verdict == "pair merge"
    assert result.agrees
    assert result.counts()["pair merge"] == 1
    rows = {a.site.pc: a.to_json() for a in kernel.accesses}
    assert rows[load.pc]["source_wavefronts"] == 3  # the JSON says so, on that row only
    assert [pc for pc, row in rows.items() if "source_wavefronts" in row] == [load.pc]
    assert not any("source_ideal" in row for row in rows.values())  # ideal 1 on both pages


# reads whose Source-page ideal (the active bytes in 128-byte wavefronts, at most the page's
# wavefronts) is not shmem's own (its phases with an active lane, at most those bytes):
# (lab, read, Source page (executions, wavefronts, ideal) as measured, traced, verdict,
# shmem's own ideal), each worked by hand from the read's lanes
SOURCE_IDEALS = [
    # LDS.64, all 32 lanes paired (doubles 0, 16, 0, 16, 65, 66, ...): one merged phase,
    # 2-way (doubles 0 and 16) per op; the page counts its half-warps, 2 + 1 = 3; ideal
    # min(32 x 8 / 128, 3) = 2; shmem's own: 1 phase
    ("pairs5", "a_k32", (1, 3, 2), (1, 2, 2), "pair merge", 1),
    # LDS.128, lanes 0-15 paired (float4s 0, 8, 33..38): merged half-warp 0, 2-way (0 and 8);
    # unmerged on the page, 2 + 1 = 3; ideal min(16 x 16 / 128, 3) = 2; shmem's own: 1 phase
    ("pairs5", "p_lo16_d1", (1, 3, 2), (1, 2, 2), "pair merge", 1),
    # LDS.128, 20 scattered lanes paired at distance 2 (float4s 98, 77, 99, 109, 45 in each
    # half-warp): 6 on both pages; ideal ceil(20 x 16 / 128) = 3; shmem's own: 2 half-warps
    ("pairs6", "r128_011", (1, 6, 3), (1, 6, 3), "match", 2),
    # LDS.128, 14 scattered lanes all on float4 118: a broadcast in each merged half-warp,
    # 2 per op; the page packs them, ceil(14 / 16) = 1, so its ideal is 1; shmem's own: 2
    ("pairs6", "r128_060", (1, 1, 1), (1, 2, 1), "pair merge", 2),
    # LDS.64, 18 scattered lanes paired (doubles 33, 40, 211, 128, 159, 40, 159, 1, 160):
    # one merged phase, 2-way (33 and 1), 2 on both pages (the two doubles sit in different
    # half-warps); ideal ceil(18 x 8 / 128) = 2; shmem's own: 1 phase
    ("pairs9", "n64_013", (1, 2, 2), (1, 2, 2), "match", 1),
]


@needs_nvdisasm
@pytest.mark.parametrize(
    ("lab", "launch_id", "measured", "traced_", "verdict", "own"),
    SOURCE_IDEALS,
    ids=[f"{x[0]}-{x[1]}" for x in SOURCE_IDEALS],
)
def test_compare_takes_the_source_pages_ideal(
    lab: str,
    launch_id: str,
    measured: tuple[int, int, int],
    traced_: tuple[int, int, int],
    verdict: str,
    own: int,
    tmp_path: Path,
) -> None:
    """``shmem trace --compare`` against the measured Source page of a read whose page ideal
    is not shmem's: the traced ideal column is the page's, the read agrees, exit status 0;
    the JSON keeps shmem's own ``ideal`` and adds the page's as ``source_ideal``."""
    launch = next(x for x in _launches(lab) if x["id"] == launch_id)
    data = TRACE_DATA / lab
    args = ["trace", str(data / (Path(launch["source"]).stem + ".sm_90.cubin"))]
    args += ["-k", launch["mangled"], "--block", "32", "--grid", "1"]
    args += [
        "--arg",
        f"0=@{tmp_path / 'zeros.bin'}",
        "--arg",
        f"1=@{data / launch['args'][1]['file']}",
    ]
    (tmp_path / "zeros.bin").write_bytes(bytes(launch["args"][0]["zeros"]))
    page = source_page(lab, launch, tmp_path / "source.csv")
    args += ["--compare", str(page), "--format", "json", "--no-tables"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    (load,) = [i for i in doc["compare"][0]["instructions"] if "LDS" in i["sass"]]
    keys = ("executions", "wavefronts", "ideal_wavefronts")
    assert tuple(load["ncu"][k] for k in keys) == measured
    assert tuple(load["shmem"][k] for k in keys) == traced_
    assert load["verdict"] == verdict
    (row,) = [a for a in doc["files"][0]["kernels"][0]["accesses"] if a["pc"] == load["pc"]]
    assert (row["ideal_wavefronts"], row["source_ideal"]) == (own, measured[2])


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
