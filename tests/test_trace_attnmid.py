"""What a shuffle between a wgmma group's instructions costs in op_misc
(tests/data/trace/attnmid: the project's kernels, to be counted twice on a GPU; README.md holds
the rule's figure for every launch and what each candidate reading predicts, written before
the run): the trace's op_misc, by the rows docs/hardware-model.md 9e gives, against both runs.
Skipped until the lab is measured."""

from __future__ import annotations

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm
from .misc_counts import check_counted_twice, traced_misc

LAB = TRACE_DATA / "attnmid"
MEASURED = LAB / "measured.json"
CUBIN = LAB / "attnmid.sm_90a.cubin"
#: lab/main.cu's launches, in order: (kernel, threads), each for 1 and 8 iterations
KERNELS = [
    ("o_mid", 128),
    ("o_mid_quiet", 128),
    ("o_mid_cp", 128),
    ("o_mid_cp8", 256),
    ("o_mid8", 256),
    ("o_mid_quiet8", 256),
    ("m_mid1", 128),
    ("m_mid3", 128),
    ("m_sts", 128),
    ("m_cp_kept", 128),
    ("m_cp_spin", 128),
]
LAUNCHES = [(k, b, i) for k, b in KERNELS for i in (1, 8)]
#: the launches the rule misses, by their index in LAUNCHES: (the rule's, run1's, run2's),
#: from the measured runs only (measured.json), once the lab is measured
MISC_OPEN: dict[int, tuple[int, int, int]] = {
    0: (30, 31, 31),  # o_mid, 1
    1: (156, 164, 164),  # o_mid, 8
    2: (21, 22, 22),  # o_mid_quiet, 1
    3: (84, 92, 92),  # o_mid_quiet, 8
    5: (277, 285, 285),  # o_mid_cp, 8
    6: (116, 115, 115),  # o_mid_cp8, 1
    7: (529, 542, 542),  # o_mid_cp8, 8
    8: (56, 62, 62),  # o_mid8, 1
    9: (294, 319, 319),  # o_mid8, 8
    10: (39, 43, 43),  # o_mid_quiet8, 1
    11: (158, 188, 188),  # o_mid_quiet8, 8
    14: (34, 36, 36),  # m_mid3, 1
    15: (188, 204, 204),  # m_mid3, 8
    18: (60, 62, 62),  # m_cp_kept, 1
    19: (277, 293, 293),  # m_cp_kept, 8
    20: (60, 61, 61),  # m_cp_spin, 1
    21: (277, 284, 284),  # m_cp_spin, 8
}


@needs_nvdisasm
@pytest.mark.slow
@pytest.mark.skipif(not MEASURED.exists(), reason="the lab is not measured yet")
@pytest.mark.parametrize("i", range(len(LAUNCHES)), ids=[f"{k}_{b}_{n}" for k, b, n in LAUNCHES])
def test_op_misc_as_the_gpu_counted_twice(i: int) -> None:
    kernel, threads, n = LAUNCHES[i]
    got = traced_misc(CUBIN, kernel, 1, threads, n)
    check_counted_twice(MEASURED, len(LAUNCHES), i, got, MISC_OPEN)
