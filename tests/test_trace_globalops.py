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

import pytest

from .conftest import needs_nvdisasm
from .misc_lab import MiscLab
from .misc_open import check_misc

LAB = MiscLab("globalops")

# per warp, from kernels/globalops.cu: a store every warp reaches with its guards false
STORES_OFF = {"g_stg_off", "g_st_generic_off", "g_sts_off"}
BARRIERS = {"g_tile": 1}


def rule(lid: str) -> int:
    launch = LAB.launches[lid]
    k, warps = launch["kernel"], launch["block"][0] // 32
    return warps * (1 + (k in STORES_OFF)) + BARRIERS.get(k, 0)


def test_every_launch_was_counted_twice_alike() -> None:
    LAB.check_counted_twice_alike(68)


@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_the_rule_on_every_launch(lid: str) -> None:
    check_misc(lid, rule(lid), int(LAB.counter(lid, "misc")), {})


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_globalops_lab_as_measured(lid: str) -> None:
    LAB.check_traced(lid, {}, ("ld", "st"))
