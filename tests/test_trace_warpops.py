"""Which warp-level instructions cost ``op_misc`` wavefronts (tests/data/trace/warpops: the
project's own kernels/warpops.cu, each operation once or 8 times in 1, 16 or 32 lanes of 1
or 4 warps, measured on an H100 with Nsight Compute, twice) and the rule shmem counts them by
(docs/hardware-model.md 9e).

The rule is written out here from the kernels' own structure: a warp's end 1, a CTA
barrier's completion 1, each shuffle 1 (64 bits: two), and each kept value 1 (``KEEP``: the
global store a warp reaches with every lane's guard false); votes, match, redux, warpsync,
nanosleep, clock reads and the shared loads themselves cost nothing. Then every launch is
traced and its ``misc`` total compared with the GPU's.
"""

from __future__ import annotations

import pytest

from .conftest import fast_few, needs_nvdisasm
from .misc_lab import MiscLab
from .misc_open import check_misc

LAB = MiscLab("warpops")

# per warp, from kernels/warpops.cu: (shuffles, kept values); the *_x8 kernels run theirs 8
# times (w_lds_used_x8 keeps each of its 8 loads' sums, the others the last value once)
SHUFFLES = {
    "w_shfl_bfly": 1,
    "w_shfl_bfly_x8": 8,
    "w_shfl_idx": 1,
    "w_shfl_idx_reg": 1,
    "w_shfl_up": 1,
    "w_shfl_down": 1,
    "w_shfl_u64": 2,  # a 64-bit shuffle is two
}
KEPT = {"w_lds_used_x8": 8}
NOT_KEPT = {"w_base", "w_bar_base", "w_syncwarp", "w_nanosleep", "w_lds_unused"}
BARRIERS = {"w_bar_base": 1, "w_lds_after_bar": 1}


def rule(lid: str) -> int:
    launch = LAB.launches[lid]
    k, warps = launch["kernel"], launch["block"][0] // 32
    kept = 0 if k in NOT_KEPT else KEPT.get(k, 1)
    return warps * (1 + SHUFFLES.get(k, 0) + kept) + BARRIERS.get(k, 0)


def test_every_launch_was_counted_twice_alike() -> None:
    LAB.check_counted_twice_alike(110)


@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_the_rule_on_every_launch(lid: str) -> None:
    check_misc(lid, rule(lid), int(LAB.counter(lid, "misc")), {})


@needs_nvdisasm
@pytest.mark.parametrize("lid", fast_few(sorted(LAB.measured)))
def test_warpops_lab_as_measured(lid: str) -> None:
    LAB.check_traced(lid, {}, ("ld",))
