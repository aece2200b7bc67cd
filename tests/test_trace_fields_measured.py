"""The view kernel's lab (tests/data/trace/fields: view.cu, launches.json, lab/), measured on
the H200: ``view_reverse(View v, float *out)`` with its struct's fields (the data pointer at
byte 0, ``n`` at 8, ``stride`` at 12) given as ``--arg 0+0=@... --arg 0+8=N --arg
0+12=S``, as a host program fills the struct it passes by value.

Each launch is traced with those arguments and compared with the H200: the values it wrote,
every shared instruction's executions and wavefronts (Nsight Compute's source counters) and
the per-op counters. Independently of both, ``out`` is checked against CUDA's semantics
(out[t] = p[n - 1 - t] for t < n, zeros past n) and the wavefronts against the bank rule
worked here lane by lane (a warp's request costs the most distinct words any bank holds).
Measured 2026-12-05 on the H200 (and an H100 before it, alike): all 18 exact.
Skipped where the lab has not been measured (lab/run.sh, then lab/parse_ncu.py).
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm

DATA = TRACE_DATA / "fields"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
MEASURED = DATA / "measured.json"
pytestmark = pytest.mark.skipif(not MEASURED.exists(), reason="the view lab is not measured yet")


def _lab() -> dict[str, dict[str, object]]:
    return {m["id"]: m for m in json.loads(MEASURED.read_text())["launches"]}


def _shape(lid: str) -> tuple[int, int, int]:
    """block, n, stride of a launch."""
    L = LAUNCHES[lid]
    fields = {f["at"]: f for f in L["args"][0]["struct"]["fields"]}
    return L["block"][0], fields[8]["int"], fields[12]["int"]


def _wavefronts(words: list[int]) -> int:
    """One warp's request over 4-byte ``words``: the most distinct words one bank holds."""
    per_bank = Counter(w % 32 for w in set(words))
    return max(per_bank.values(), default=0)


def _by_hand(lid: str) -> tuple[int, int]:
    """(requests, wavefronts) of the store and of the load alike: warp w's lanes t < n store
    word t * stride, and load word (n - 1 - t) * stride (the same set of banks' words)."""
    block, n, stride = _shape(lid)
    requests = wavefronts = 0
    for w in range(0, block, 32):
        lanes = [t for t in range(w, min(w + 32, block)) if t < n]
        if lanes:
            requests += 1
            wavefronts += _wavefronts([t * stride for t in lanes])
    return requests, wavefronts


def test_the_load_costs_what_the_store_does_by_hand() -> None:
    """The reversed load touches, per warp, words of the same stride pattern: the by-hand
    figure covers both (checked here on one launch by listing the load's words)."""
    block, n, stride = _shape("view_b64_n48_s2")
    loads = [[(n - 1 - t) * stride for t in range(w, min(w + 32, n))] for w in (0, 32)]
    assert [_wavefronts(x) for x in loads] == [2, 1]
    assert _by_hand("view_b64_n48_s2") == (2, 3)


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAUNCHES))
def test_view_lab_as_measured(lid: str) -> None:
    block, n, stride = _shape(lid)
    kt, out = lab.run(lid, DATA)
    gpu = (DATA / "outputs" / f"{lid}.arg1.bin").read_bytes()
    p = np.fromfile(DATA / "inputs" / "p128.bin", dtype=np.float32)
    want = np.zeros(128, dtype=np.float32)
    want[:n] = p[:n][::-1]
    assert gpu == want.tobytes()  # the GPU did what the source says
    assert out[1] == gpu
    m = _lab()[lid]
    assert m["measured_twice"] and not m["repeat_differs"], lid
    rows = {
        i["pc"]: (i["Instructions Executed"], i["L1 Wavefronts Shared"])
        for i in m["instructions"]  # type: ignore[attr-defined]
        if str(i["sass"]).startswith(("LDS", "STS")) and i["Instructions Executed"]
    }
    got = {
        a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts)
        for a in kt.accesses
        if a.cost.requests + a.predicated_off
    }
    assert got == rows
    c = m["counters"]
    # op_misc: the warps' ends and the barrier (docs/hardware-model.md 9e)
    assert kt.misc.wavefronts == c.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc", 0)  # type: ignore[attr-defined]
    requests, wavefronts = _by_hand(lid)
    for op, kind in (("ld", "load"), ("st", "store")):
        assert kt.totals[kind].wavefronts == wavefronts
        # (the lab keeps the counters that counted anything: none at n = 0)
        assert c.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}", 0) == wavefronts  # type: ignore[attr-defined]
        assert kt.totals[kind].requests == requests
