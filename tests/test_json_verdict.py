"""The verdict of the text tables is in the JSON too, as one word a script can match.

``"verdict"`` is ``"ok"`` (no bank conflict, no excess over the ideal), ``"ok*"`` (no bank
conflict, an excess: the phases themselves), ``"conflict"`` (``max_ways`` its degree) or
``"idle"`` (no request), in the JSON of ``shmem analyze``, ``shmem trace`` and ``shmem
sweep``. Every expected verdict below is worked out by hand from the spec or the kernel.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.model import Totals
from shmem_cli.render.text import verdict_word

from .conftest import ROOT, TRACE_DATA, needs_nvdisasm

WIDE = ROOT / "access_specs" / "tutorial_wide.yaml"
COLUMN = ROOT / "access_specs" / "column_read_32x32.yaml"
#: access_specs/tutorial_wide.yaml, access by access (its comments say why):
#: d[lane]: two half-warp phases of 128 bytes, 1 wavefront each = the ideal 2;
#: d[2*lane]: a half-warp spans 256 bytes, lanes k and k + 8 share banks: 2-way;
#: d[lane/2] loads: lane pairs share a double, the pair rule packs them: 1 wavefront;
#: d[lane/2] stores: no pairing, two phases of 128 bytes = the ideal 2;
#: lanes 0 and 16 store: one lane in each phase, 2 wavefronts, their 16 bytes ideal 1
WIDE_VERDICTS = [
    ("d[lane] (stride 1)", "ok", 1),
    ("d[2*lane] (stride 2)", "conflict", 2),
    ("d[lane/2] (lane pairs)", "ok", 1),
    ("d[lane/2] = v (lane pairs, store)", "ok", 1),
    ("d[lane] = v (lanes 0 and 16)", "ok*", 1),
]


def _json(*args: str) -> Any:
    run = CliRunner().invoke(main, [*args, "--format", "json"])
    assert run.exit_code == 0, run.output
    return json.loads(run.output)


def test_analyze_json_has_each_access_verdict() -> None:
    doc = _json("analyze", str(WIDE))
    got = [(a["name"], a["verdict"], a["max_ways"]) for a in doc["files"][0]["accesses"]]
    assert got == WIDE_VERDICTS
    # the keys a script read before are kept, and agree
    for a in doc["files"][0]["accesses"]:
        assert a["conflict_free"] == (a["verdict"] != "conflict")
        assert (a["excess_wavefronts"] > 0) == (a["verdict"] in ("ok*", "conflict"))


def test_analyze_text_shows_the_same_verdicts() -> None:
    run = CliRunner().invoke(main, ["analyze", str(WIDE), "--no-color"])
    assert run.exit_code == 0, run.output
    firsts = [line.split()[0] for line in run.output.splitlines() if " d[" in line[:12]]
    assert firsts[:5] == ["ok", "2-way", "ok", "ok", "ok*"]


def test_sweep_json_has_variant_and_access_verdicts() -> None:
    # tile[32][32] floats: the row store is one wavefront per warp (ok); the column read
    # tile[tx][ty] is a stride of 32 words at pad 0, every lane in one bank (32-way), and of
    # 33 at pad 1, every lane in its own bank (ok)
    doc = _json("sweep", str(COLUMN), "--pad", "0..1")
    variants = doc["variants"]
    assert [v["verdict"] for v in variants] == ["conflict", "ok"]
    assert [v["max_ways"] for v in variants] == [32, 1]
    assert [[a["verdict"] for a in v["accesses"]] for v in variants] == [
        ["ok", "conflict"],
        ["ok", "ok"],
    ]


def test_sweep_json_access_ok_star() -> None:
    # a pad on the one-dimensional d changes no address: every variant is the spec itself
    doc = _json("sweep", str(WIDE), "--pad", "0..1")
    for v in doc["variants"]:
        assert v["verdict"] == "conflict" and v["max_ways"] == 2  # d[2*lane]
        got = [(a["name"], a["verdict"], a["max_ways"]) for a in v["accesses"]]
        assert got == WIDE_VERDICTS


def test_verdict_word_is_the_model_verdict_as_the_tables_show_it() -> None:
    # figures made up by hand: no request; the ideal; an excess without a conflicted
    # request; a 4-way conflicted request
    idle = Totals()
    ok = Totals(requests=2, wavefronts=4, ideal_wavefronts=4, max_ways=1, phases=4)
    split = Totals(requests=1, wavefronts=2, ideal_wavefronts=1, max_ways=1, phases=2)
    conflict = Totals(
        requests=1, wavefronts=4, ideal_wavefronts=1, max_ways=4, conflicted_requests=1, phases=1
    )
    assert [t.verdict for t in (idle, ok, split, conflict)] == ["idle", "ok", "ok*", "conflict"]
    assert [verdict_word(t) for t in (idle, ok, split, conflict)] == [
        "idle",
        "ok",
        "ok*",
        "4-way",
    ]
    assert [t.json("verdict") for t in (ok, conflict)] == [
        {"verdict": "ok"},
        {"verdict": "conflict"},
    ]


IDEAL2 = TRACE_DATA / "ideal2"


@needs_nvdisasm
def test_trace_json_has_each_instruction_verdict(tmp_path: Path) -> None:
    # ip_st64 (tests/data/trace/ideal2/kernels/ip.cu), one warp: line 7 zeroes bins[256]
    # (8 STS.64 of 32 consecutive doubles: 2 wavefronts each = the ideal: ok), line 10
    # stores bins[idx[lane]] where idx[lane] >= 0, line 12 reads bins back like line 7 (ok)
    cases = {
        # no lane stores: the instruction runs with every lane off, no request
        "idle": ([-1] * 32, "idle", 0),
        # lanes 0 and 16: one lane per half-warp phase, 2 wavefronts, 16 bytes ideal 1
        "ok*": ([t if t % 16 == 0 else -1 for t in range(32)], "ok*", 1),
        # bins[2 * lane]: a half-warp spans 256 bytes, lanes k and k + 8 share banks: 2-way
        "conflict": ([2 * t for t in range(32)], "conflict", 2),
    }
    for name, (idx, verdict, ways) in cases.items():
        data = tmp_path / f"idx_{verdict.replace('*', '_star')}.bin"
        data.write_bytes(struct.pack("<32i", *idx))
        doc = _json(
            "trace",
            str(IDEAL2 / "ip.sm_90.cubin"),
            "-k",
            "ip_st64",
            "--block",
            "32",
            "--arg",
            f"1=@{data}",
        )
        rows = doc["files"][0]["kernels"][0]["accesses"]
        got = {a["line"]: (a["verdict"], a["max_ways"]) for a in rows}
        assert got == {7: ("ok", 1), 10: (verdict, ways), 12: ("ok", 1)}, name
