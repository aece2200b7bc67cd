"""Atomics through a generic pointer and ``op_misc`` (tests/data/trace/genatom: the project's
own kernels, the pointer on shared or global memory at run time, 1 and 4 warps, measured on
an H100, twice).

On global memory every generic add is done at once (P0 true). On shared memory a 32-bit
integer and a 64-bit integer add are done too; a float, half2, bf16x2 and double add are
declined (P0 false), the space queried (``QSPC``: 1 op_misc wavefront a warp) and the add done
by a shared compare-and-swap loop. The rule from the kernels' structure: a warp's end 1, each
of the two barriers' completions 1, the space query 1 a warp where the add falls back. The
kernel without an atomic runs its two barriers back to back, which the GPU counts as one
(listed, docs/hardware-model.md 9e). Nsight's per-op op_atom counter also counts each warp's
generic atomic on global memory and a declined 32-bit one on shared memory (listed)."""

from __future__ import annotations

import json

import pytest

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm
from .misc_open import check_misc

DATA = TRACE_DATA / "genatom"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
LAB = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
COUNTER = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_"
FALLS_BACK = {"ga_f32", "ga_h2", "ga_bf2", "ga_f64"}  # declined on shared memory
OPEN = {f"ga_none_{where}_w{w}": (w + 2, w + 1) for where in ("shared", "global") for w in (1, 4)}
# op_atom, (the trace's, the GPU's): Nsight's per-op counter also counts each warp's generic
# atomic on global memory (1 a warp, 64-bit 2) and a declined 32-bit one on shared memory (1
# a warp), which its source counters give no wavefront: not modelled (hardware-model 9e)
ATOM_OPEN = {
    **{f"ga_{k}_global_w{w}": (0, w) for k in ("u32", "f32", "h2", "bf2") for w in (1, 4)},
    **{f"ga_{k}_global_w{w}": (0, 2 * w) for k in ("u64", "f64") for w in (1, 4)},
    **{f"ga_{k}_shared_w{w}": (2 * w, 3 * w) for k in ("f32", "h2", "bf2") for w in (1, 4)},
}


def rule(lid: str) -> int:
    launch = LAUNCHES[lid]
    warps = launch["block"][0] // 32
    on_shared = launch["args"][2]["int"] == 0
    return warps + 2 + warps * (on_shared and launch["kernel"] in FALLS_BACK)


def test_every_launch_was_counted_twice_alike() -> None:
    assert len(LAB) == len(LAUNCHES) == 28
    for lid, m in LAB.items():
        assert m["measured_twice"] and COUNTER + "misc" in m["counters"], lid
        assert COUNTER + "misc" not in m.get("repeat_differs", {}), lid


@pytest.mark.parametrize("lid", sorted(LAB))
def test_the_rule_on_every_launch(lid: str) -> None:
    check_misc(lid, rule(lid), LAB[lid]["counters"][COUNTER + "misc"], OPEN)


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAB))
def test_genatom_lab_as_measured(lid: str) -> None:
    kt, _ = lab.run(lid, DATA)
    c = LAB[lid]["counters"]
    check_misc(lid, kt.misc.wavefronts, c[COUNTER + "misc"], OPEN)
    # the loads (the CAS loop's and the kernel's own), the stores and the shared atomics
    assert kt.totals["load"].wavefronts == c.get(COUNTER + "ld", 0)
    assert kt.totals["store"].wavefronts == c.get(COUNTER + "st", 0)
    atom = (kt.totals["atomic"].wavefronts, c.get(COUNTER + "atom", 0))
    assert atom == ATOM_OPEN.get(lid, (atom[1], atom[1]))
