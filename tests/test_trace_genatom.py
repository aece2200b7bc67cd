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

import pytest

from .conftest import needs_nvdisasm
from .misc_lab import MiscLab
from .misc_open import check_misc

LAB = MiscLab("genatom")
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
    launch = LAB.launches[lid]
    warps = launch["block"][0] // 32
    on_shared = launch["args"][2]["int"] == 0
    return warps + 2 + warps * (on_shared and launch["kernel"] in FALLS_BACK)


def test_every_launch_was_counted_twice_alike() -> None:
    LAB.check_counted_twice_alike(28)


@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_the_rule_on_every_launch(lid: str) -> None:
    check_misc(lid, rule(lid), int(LAB.counter(lid, "misc")), OPEN)


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_genatom_lab_as_measured(lid: str) -> None:
    kt = LAB.check_traced(lid, OPEN, ("ld", "st"))
    atom = (kt.totals["atomic"].wavefronts, int(LAB.counter(lid, "atom")))
    assert atom == ATOM_OPEN.get(lid, (atom[1], atom[1]))
