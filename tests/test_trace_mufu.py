"""MUFU.RCP, RSQ, SQRT, EX2, LG2, SIN, COS, TANH (and its .F16 and .BF16 forms) and the double
seeds RCP64H and RSQ64H bit for bit as the H200 computes them (issue 27): the emulator's
approximations (trace/emulator/mufu/) against the H200's outputs kept in tests/data/trace/mufu
(random bit patterns, the special values, and arguments of each table's whole measured
domain)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shmem_cli.trace.emulator import mufu

from .conftest import TRACE_DATA

MEASURED = TRACE_DATA / "mufu"


def _measured(name: str) -> tuple[Any, Any]:
    data = np.fromfile(MEASURED / f"{name}.bin", dtype="<u4")
    return data[: len(data) // 2], data[len(data) // 2 :]


@pytest.mark.parametrize(
    "name", ["rcp", "rsq", "sqrt", "ex2", "lg2", "sin", "cos", "tanh", "rcp64h", "rsq64h"]
)
def test_mufu_gives_what_the_h200_gave(name: str) -> None:
    args, want = _measured(name)
    got = getattr(mufu, name)(args)
    wrong = np.flatnonzero(got != want)
    assert not len(wrong), [(hex(args[k]), hex(got[k]), hex(want[k])) for k in wrong[:5]]


@pytest.mark.parametrize("name", ["tanh_f16", "tanh_bf16"])
def test_the_half_forms_give_what_the_h200_gave(name: str) -> None:
    """``tanh.approx.f16x2``/``.bf16x2`` of words whose two halves are the same: one
    ``MUFU.TANH.F16`` (``.BF16``) of each half, the low one and the high one (``.H1``)."""
    args, want = _measured(name)
    fn = getattr(mufu, name)
    got = fn(args) | (fn(args, True) << np.uint32(16))
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


def test_the_special_values_of_tanh_and_the_seeds() -> None:
    """tanh of ±0, ±inf and NaN; the seeds of doubles (high words) that are exact powers of
    two: 1/1, 1/2, 1/sqrt(4), 1/(±0) and 1/sqrt(+inf), a negative root NaN."""
    inf, ninf, nan = 0x7F800000, 0xFF800000, 0x7FC00000
    args = np.array([0, 0x80000000, inf, ninf, nan], dtype=np.uint32)
    assert mufu.tanh(args).tolist() == [0, 0x80000000, 0x3F800000, 0xBF800000, mufu.NAN]
    words = np.array([0x3FF00000, 0x40000000, 0x40100000, 0, 0x80000000, 0x7FF00000, 0xBFF00000],
                     dtype=np.uint32)  # fmt: skip
    assert mufu.rcp64h(words[:5]).tolist() == [0x3FF00000, 0x3FE00000, 0x3FD00000, 0x7FF00000,
                                               0xFFF00000]  # fmt: skip
    assert mufu.rsq64h(words).tolist() == [0x3FF00000, 0x3FE6A09E, 0x3FE00000, 0x7FF00000,
                                           0xFFF00000, 0, 0x7FFFFFFF]  # fmt: skip


@pytest.mark.parametrize("name", ["rcp", "rsq", "sqrt", "ex2", "lg2"])
def test_a_lane_gives_alone_what_it_gives_beside_special_ones(name: str) -> None:
    """The functions take a shorter path where none of the lanes is special (a zero, a
    denormal, an infinity, a NaN, a negative root, a result out of range): each lane of a
    warp of ordinary and special arguments gives what it gives in a warp of ordinary ones
    alone, and what it gives alone."""
    rng = np.random.default_rng(27)
    ordinary = rng.integers(0x3E000000, 0x42000000, 32, dtype=np.uint32)  # 1/8 <= x < 32
    special = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001, 0x807FFFFF]
    special += [0xBF800000, 0x43000000, 0xC3000000, 0x42FF0000, 0xC2FE0001, 0x7E800000]
    special += [0xFE7FFFFF, 0x7F7FFFFF]  # about ±128 (EX2), 2**126 and more (RCP)
    fn = getattr(mufu, name)
    mixed = ordinary.copy()
    mixed[1 : 2 * len(special) : 2] = special
    alone = [int(fn(mixed[k : k + 1])[0]) for k in range(32)]
    assert fn(mixed).tolist() == alone
    assert fn(ordinary)[::2].tolist() == alone[::2]
