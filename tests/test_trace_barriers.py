"""CTA barriers, named barriers, lane masks and ``op_misc`` (tests/data/trace/barriers: the
project's own kernels/barriers.cu, 1, 2 or 4 warps, measured on an H100, twice) and the rule
shmem counts them by (docs/hardware-model.md 9e).

The rule from the kernels' structure: a warp's end 1, each CTA barrier's completion 1
(named, reducing or plain) where a warp of the CTA reached a memory-pipe instruction since
the previous one (the first always: hardware.misc.STIRS), a shuffle 1, reading a lane mask
(``S2R SR_LEMASK``, ...) 1 a warp; an mbarrier's init by one thread, a clock read and
arithmetic cost nothing. So barriers with nothing but arithmetic, ``B2R`` or constant loads
between count once (two named ones 1, two that reduce 1). A read of ``threadIdx.x``
(``S2R SR_TID.X``) between two barriers makes the second cost, as a memory-pipe instruction
does (hardware.misc.STIRRING_READS): the b_bar2 kernels, whose second barrier has only an
``LDC.64``, a ``ULDC.64`` and that read before it, were listed as the rule's misses until then.
"""

from __future__ import annotations

import pytest

from .conftest import needs_nvdisasm
from .misc_lab import MiscLab
from .misc_open import check_misc

LAB = MiscLab("barriers")

# from kernels/barriers.cu: barrier completions per CTA that cost (b_bar_loop_sts: n, an STS
# before each), and per warp the shuffles and lane-mask reads
BARRIERS = {"b_bar1": 1, "b_named": 1, "b_named2": 1, "b_count2": 1}
BARRIERS |= {k: 2 for k in ("b_bar2_sts", "b_bar2_lds", "b_bar2_stg")}
# a second barrier after only an LDC.64, ULDC.64 and S2R SR_TID.X (b_bar2_alu: and IMADs;
# b_bar2_clock, _alu: and a CS2R clock read; b_bar4: then two more with nothing between,
# which cost nothing): the threadIdx.x read makes it cost
BARRIERS |= {k: 2 for k in ("b_bar2", "b_bar2_alu", "b_bar2_clock", "b_bar2_shfl", "b_bar4")}
BARRIERS |= {"b_arrive_sync": 1}
PER_WARP = {"b_bar2_shfl": 1, "b_lemask": 1, "b_gemask": 1, "b_gtmask": 1, "b_eqmask": 1}
# the launches the rule misses, (the rule's, the GPU's): none
OPEN: dict[str, tuple[int, int]] = {}


def rule(lid: str) -> int:
    launch = LAB.launches[lid]
    k, warps = launch["kernel"], launch["block"][0] // 32
    bars = launch["args"][2]["int"] if k == "b_bar_loop_sts" else BARRIERS.get(k, 0)
    return warps * (1 + PER_WARP.get(k, 0)) + bars


def test_every_launch_was_counted_twice_alike() -> None:
    LAB.check_counted_twice_alike(42)


@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_the_rule_on_every_launch(lid: str) -> None:
    check_misc(lid, rule(lid), int(LAB.counter(lid, "misc")), OPEN)


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_barriers_lab_as_measured(lid: str) -> None:
    LAB.check_traced(lid, OPEN, ())
