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
MISC_OPEN: dict[int, tuple[int, int, int]] = {}


@needs_nvdisasm
@pytest.mark.slow
@pytest.mark.skipif(not MEASURED.exists(), reason="the lab is not measured yet")
@pytest.mark.parametrize("i", range(len(LAUNCHES)), ids=[f"{k}_{b}_{n}" for k, b, n in LAUNCHES])
def test_op_misc_as_the_gpu_counted_twice(i: int) -> None:
    kernel, threads, n = LAUNCHES[i]
    got = traced_misc(CUBIN, kernel, 1, threads, n)
    check_counted_twice(MEASURED, len(LAUNCHES), i, got, MISC_OPEN)
