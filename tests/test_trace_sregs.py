"""Special registers, loops, barriers and ``op_misc`` (tests/data/trace/sregs: the project's
own kernels/sregs.cu with 1D and 2D blocks, measured on an H100, twice) and the rule shmem
counts them by (docs/hardware-model.md 9e).

The rule from the kernels' structure: a warp's end 1, a CTA barrier's completion 1, and
reading ``threadIdx.y`` or ``.z``, the lane index, the warp id or ``%lanemask_lt`` (an
``S2R`` of ``SR_TID.Y``, ``SR_TID.Z``, ``SR_LANEID``, ``SR_VIRTID``, ``SR_LTMASK``) 1 a warp;
``threadIdx.x``, ``blockIdx.y``, ``blockDim.y``, ``%smid`` and loops cost nothing. Barriers
with only arithmetic and branches between count once (the loop of four barriers, unrolled,
``VIADD`` between: 1, docs/hardware-model.md 9e). Then every launch is traced and its
``misc`` total compared.
"""

from __future__ import annotations

import pytest

from .conftest import fast_few, needs_nvdisasm
from .misc_lab import MiscLab
from .misc_open import check_misc

LAB = MiscLab("sregs")

# per warp, from kernels/sregs.cu: the costly special registers each kernel reads
# (s_linear: threadIdx.y and .z; s_transpose: threadIdx.y)
READS = {"s_tid_y": 1, "s_tid_z": 1, "s_laneid": 1, "s_warpid": 1, "s_lanemask_lt": 1}
READS |= {"s_linear": 2, "s_transpose": 1}
# barrier completions per CTA that cost: s_loop_bar's first (its others follow it with only
# VIADD and branches between: hardware.misc.STIRS), s_bar's and s_transpose's one
BARRIERS = {"s_loop_bar": 1, "s_bar": 1, "s_transpose": 1}
# the launches the rule misses: (the rule's, the GPU's): none
OPEN: dict[str, tuple[int, int]] = {}


def rule(lid: str) -> int:
    launch = LAB.launches[lid]
    k = launch["kernel"]
    warps = launch["block"][0] * launch["block"][1] // 32
    bars = BARRIERS.get(k, 0)
    return warps * (1 + READS.get(k, 0)) + bars


def test_every_launch_was_counted_twice_alike() -> None:
    LAB.check_counted_twice_alike(43)


@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_the_rule_on_every_launch(lid: str) -> None:
    check_misc(lid, rule(lid), int(LAB.counter(lid, "misc")), OPEN)


@needs_nvdisasm
@pytest.mark.parametrize("lid", fast_few(sorted(LAB.measured)))
def test_sregs_lab_as_measured(lid: str) -> None:
    LAB.check_traced(lid, OPEN, ("ld",))
