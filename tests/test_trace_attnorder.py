"""Where a wgmma attention loop's warp shuffles sit relative to its O += P V group, in op_misc
(tests/data/trace/attnorder: the project's kernels, counted twice on a GPU; README.md holds
the rule's figure for every launch and what each candidate reading predicted before the
run): the trace's op_misc, by the rows docs/hardware-model.md 9e gives, against both runs.
Skipped until the lab is measured."""

from __future__ import annotations

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .misc_counts import check_counted_twice, traced_misc

LAB = TRACE_DATA / "attnorder"
MEASURED = LAB / "measured.json"
CUBIN = LAB / "attnorder.sm_90a.cubin"
#: lab/main.cu's launches, in order: (kernel, threads, iterations)
KERNELS = [
    ("o_none", 128),
    ("o_before", 128),
    ("o_mid", 128),
    ("o_after", 128),
    ("o_mid_nobar", 128),
    ("o_mid_quiet", 128),
    ("o_before_w1", 128),
    ("o_mid_cp", 128),
    ("o_mid_cp8", 256),
    ("o_before_cp8", 256),
]
LAUNCHES = [(k, b, i) for k, b in KERNELS for i in (1, 8)]
#: the launches the rule misses, by their index in LAUNCHES: (the rule's, run1's, run2's),
#: from the measured runs only (measured.json), once the lab is measured
MISC_OPEN: dict[int, tuple[int, int, int]] = {
    4: (30, 31, 31),  # o_mid, 1 iteration
    5: (156, 164, 164),  # o_mid, 8
    8: (29, 30, 30),  # o_mid_nobar, 1
    9: (155, 163, 163),  # o_mid_nobar, 8
    10: (21, 22, 22),  # o_mid_quiet, 1
    11: (84, 92, 92),  # o_mid_quiet, 8
    16: (116, 115, 115),  # o_mid_cp8, 1
    17: (529, 542, 542),  # o_mid_cp8, 8
    18: (115, 112, 112),  # o_before_cp8, 1
    19: (521, 518, 518),  # o_before_cp8, 8
}


@needs_nvdisasm
@pytest.mark.slow
@pytest.mark.skipif(not MEASURED.exists(), reason="the lab is not measured yet")
@pytest.mark.parametrize("i", range(len(LAUNCHES)), ids=[f"{k}_{b}_{n}" for k, b, n in LAUNCHES])
def test_op_misc_as_the_gpu_counted_twice(i: int) -> None:
    kernel, threads, n = LAUNCHES[i]
    got = traced_misc(CUBIN, kernel, 1, threads, n)
    check_counted_twice(MEASURED, len(LAUNCHES), i, got, MISC_OPEN)
