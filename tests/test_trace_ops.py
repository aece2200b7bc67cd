"""Single-instruction semantics that the kernels exercise only partly."""

from __future__ import annotations

import numpy as np
import pytest

from shmem_cli.trace.ops_int import lut3


@pytest.mark.parametrize("lut", range(256))
def test_lop3_truth_tables(lut: int) -> None:
    # the truth-table immediate is the function applied to a = 0xF0, b = 0xCC, c = 0xAA
    a, b, c = np.uint8(0xF0), np.uint8(0xCC), np.uint8(0xAA)
    assert int(np.uint8(lut3(lut, a, b, c))) == lut
