"""Which CTA barrier completions cost an ``op_misc`` wavefront (tests/data/trace/barrules: the
project's own kernels/barrules.cu, 1 and 4 warps, each launch counted twice on the GPU).

Two barriers with nothing between, with an LDC, a shared store, a global load or a shuffle between,
after thread 0's arithmetic in a branch, after its eight mbarrier inits (miscops' ``m_base``:
ptxas's ``FENCE.VIEW.ASYNC.S`` and eight ``SYNCS.EXCH.64``), after one init (no fence), after the
inits and ``fence.proxy.async.shared::cta`` (``MEMBAR.ALL.CTA`` and ``FENCE.VIEW.ASYNC.S``), after
the fence alone; one barrier after the same. The rule from the kernels' structure as
docs/hardware-model.md 9e states it: a warp's end 1, a shuffle 1 a warp, a barrier's completion 1
where a warp reached a memory-pipe instruction since the previous completion (the first always: the
STS, LDG and shuffle between, not the LDC, thread 0's branch or the mbarrier init),
``FENCE.VIEW.ASYNC.S`` and ``MEMBAR.ALL.CTA`` 1 a warp execution (here thread 0's warp), the inits
nothing. What the GPU reads otherwise would be listed (OPEN), each launch by (the rule's, the
GPU's): none. ``lab/predicted.json`` holds what the trace said before the run (``misc``) and what
the rule under test said (``misc_quiet``); not checked here."""

from __future__ import annotations

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm

if not (TRACE_DATA / "barrules" / "measured.json").exists():
    pytest.skip("barrules not measured yet (its README)", allow_module_level=True)

from .misc_lab import MiscLab  # noqa: E402
from .misc_open import check_misc  # noqa: E402

LAB = MiscLab("barrules")
#: launches whose op_misc the rule misses: (the rule's, the GPU's), the same in both runs
OPEN: dict[str, tuple[int, int]] = {}


#: the kernels whose second barrier costs (a memory-pipe instruction between)
STIRRED = {"r_bar2_sts", "r_bar2_ldg", "r_bar2_shfl"}
#: fences thread 0's warp runs once: ptxas's FENCE.VIEW.ASYNC.S before the eight inits, and
#: fence.proxy.async.shared::cta's MEMBAR.ALL.CTA and FENCE.VIEW.ASYNC.S
FENCES = {"r_init_bar1": 1, "r_init_bar2": 1, "r_fence_bar1": 2, "r_fence_bar2": 2}
FENCES |= {"r_init_fence_bar1": 3, "r_init_fence_bar2": 3}


def rule(lid: str) -> int:
    kernel = LAB.launches[lid]["kernel"]
    warps = LAB.warps(lid)
    barriers = 1 + (kernel in STIRRED)
    return warps * (1 + (kernel == "r_bar2_shfl")) + barriers + FENCES.get(kernel, 0)


def test_every_launch_was_counted_twice_alike() -> None:
    LAB.check_counted_twice_alike(28)


@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_the_misc_rule_on_every_launch(lid: str) -> None:
    check_misc(lid, rule(lid), int(LAB.counter(lid, "misc")), OPEN)


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_barrules_lab_as_measured(lid: str) -> None:
    LAB.check_traced(lid, OPEN, ("ld", "st"))
