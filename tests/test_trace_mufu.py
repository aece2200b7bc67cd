"""MUFU.RCP, RSQ, SQRT, EX2, LG2, SIN and COS bit for bit as the H200 computes them (issue 27): the
emulator's approximations (trace/emulator/mufu.py) against the H200's outputs kept in
tests/data/trace/mufu (random bit patterns, the special values, and arguments of each
table's whole measured domain)."""

from __future__ import annotations

import numpy as np
import pytest

from shmem_cli.trace.emulator import mufu

from .conftest import TRACE_DATA

MEASURED = TRACE_DATA / "mufu"


@pytest.mark.parametrize("name", ["rcp", "rsq", "sqrt", "ex2", "lg2", "sin", "cos"])
def test_mufu_gives_what_the_h200_gave(name: str) -> None:
    data = np.fromfile(MEASURED / f"{name}.bin", dtype="<u4")
    args, want = data[: len(data) // 2], data[len(data) // 2 :]
    got = getattr(mufu, name)(args)
    wrong = np.flatnonzero(got != want)
    assert not len(wrong), [(hex(args[k]), hex(got[k]), hex(want[k])) for k in wrong[:5]]


def test_the_special_values() -> None:
    """What PTX's definitions say of the special values (0x7fffffff: the GPU's NaN; the
    H200's own ``lg2`` of 1 and 2 are among the measured ones)."""
    inf, ninf, nan = 0x7F800000, 0xFF800000, 0x7FC00000
    args = np.array([0, 0x80000000, inf, ninf, nan, 0xBF800000, 1], dtype=np.uint32)
    assert mufu.rcp(args).tolist() == [inf, ninf, 0, 0x80000000, mufu.NAN, 0xBF800000, inf]
    assert mufu.rsq(args).tolist() == [inf, ninf, 0, mufu.NAN, mufu.NAN, mufu.NAN, inf]
    assert mufu.sqrt(args).tolist() == [0, 0x80000000, inf, mufu.NAN, mufu.NAN, mufu.NAN, 0]
    assert mufu.ex2(args).tolist() == [0x3F800000, 0x3F800000, inf, 0, mufu.NAN, 0x3F000000,
                                       0x3F800000]  # fmt: skip
    assert mufu.lg2(args).tolist() == [ninf, ninf, inf, mufu.NAN, mufu.NAN, mufu.NAN, ninf]
    assert mufu.lg2(np.array([0x3F800000, 0x40000000], np.uint32)).tolist() == [0, 0x3F800000]
