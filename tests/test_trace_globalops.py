"""Global-memory instructions and ``op_misc`` (tests/data/trace/globalops: the project's own
kernels/globalops.cu, each operation in 1 or 32 lanes of 1 or 4 warps, measured on an H100,
twice) and the rule shmem counts them by (docs/hardware-model.md 9e).

The rule from the kernels' structure: a warp's end 1, a CTA barrier's completion 1, and a
store a warp reaches with every lane's guard false 1 (global ``STG``, generic ``ST``, shared
``STS``); global loads, stores, atomics and reductions that run cost nothing, and ptxas
branches around a guarded-off load, atomic or reduction (``@!P0 BRA``), so no warp reaches
those with its lanes off. Then every launch is traced and its ``misc`` total compared.
"""

from __future__ import annotations

import json

import pytest

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm

DATA = TRACE_DATA / "globalops"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
LAB = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
MISC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc"

# per warp, from kernels/globalops.cu: a store every warp reaches with its guards false
STORES_OFF = {"g_stg_off", "g_st_generic_off", "g_sts_off"}
BARRIERS = {"g_tile": 1}


def rule(lid: str) -> int:
    launch = LAUNCHES[lid]
    k, warps = launch["kernel"], launch["block"][0] // 32
    return warps * (1 + (k in STORES_OFF)) + BARRIERS.get(k, 0)


def test_every_launch_was_counted_twice_alike() -> None:
    assert len(LAB) == len(LAUNCHES) == 68
    for lid, m in LAB.items():
        assert m["measured_twice"] and MISC in m["counters"], lid
        assert MISC not in m.get("repeat_differs", {}), lid


@pytest.mark.parametrize("lid", sorted(LAB))
def test_the_rule_on_every_launch(lid: str) -> None:
    assert rule(lid) == LAB[lid]["counters"][MISC]


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAB))
def test_globalops_lab_as_measured(lid: str) -> None:
    kt, _ = lab.run(lid, DATA)
    c = LAB[lid]["counters"]
    assert kt.misc.wavefronts == c[MISC]
    for op, unit in (("load", "ld"), ("store", "st")):
        counter = f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{unit}"
        assert kt.totals[op].wavefronts == c.get(counter, 0), unit
