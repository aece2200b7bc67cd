"""``shmem_cli.analyze`` given a mapping that YAML cannot write or that has no bound: each is
a ``ShmemError`` (code ``invalid-argument``) naming where the value is, in well under a
second, or the spec it stands for (issue 28: these ended in yaml's RepresenterError, a
ValueError from a 5,000-digit int, or 7 s of YAML before the size was refused)."""

from __future__ import annotations

import time
import tracemalloc
from typing import Any

import numpy as np
import pytest

import shmem_cli
from shmem_cli import ShmemError

from .conftest import HANG_S, needs_nvdisasm
from .hostile import CUBIN


def spec(**arrays: Any) -> dict[str, Any]:
    """A 32-thread read of ``a[threadIdx.x]``, ``arrays`` set into array ``a``."""
    return {
        "block": [32],
        "arrays": {"a": {"dtype": "float32", "shape": [32], **arrays}},
        "accesses": [{"name": "r", "array": "a", "index": ["threadIdx.x"]}],
    }


class _Str(str):
    def __str__(self) -> str:
        raise RuntimeError("user code ran")


class _Int(int):
    def __index__(self) -> int:
        raise RuntimeError("user code ran")


def test_numpy_values_and_subclasses_are_their_plain_values() -> None:
    """NumPy integers and arrays (a shape from a computation), a str or int subclass whose
    own methods raise: read as the values they hold, no user code run."""
    for arrays in (
        {"shape": [np.int64(32)]},
        {"shape": np.array([32])},
        {"dtype": _Str("float32"), "pad": _Int(0)},
        {"shape": (32,)},
    ):
        result = shmem_cli.analyze(spec(**arrays))
        (access,) = result.accesses
        assert (access.requests, access.wavefronts) == (1, 1)


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"pad": 10**5000}, "source['arrays']['a']['pad'] must be a str, number"),
        ({"dtype": b"float32"}, "source['arrays']['a']['dtype'] must be a str, number"),
        ({"shape": {32}}, "source['arrays']['a']['shape'] must be a str, number"),
        ({"shape": (n for n in [32])}, "got a generator"),
        ({"pad": object()}, "source['arrays']['a']['pad'] must be"),
        ({"x": {(1, 2): 3}}, "a key of source['arrays']['a']['x'] must be a str, number"),
        ({"shape": ["x" * 10_000_000]}, "source holds more than 2,097,152 characters"),
        ({"shape": np.zeros((100_000, 10))}, "['shape'] holds more than 100,000 values"),
    ],
)
def test_values_a_spec_cannot_hold_are_named(arrays: dict[str, Any], message: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ShmemError) as err:
        shmem_cli.analyze(spec(**arrays))
    assert err.value.code == "invalid-argument"
    assert message in err.value.message, err.value.message
    assert len(err.value.message) < 300
    assert time.perf_counter() - start < HANG_S  # bounded, not timed: a full walk takes minutes


def test_a_mapping_that_holds_itself_or_repeats_a_list_is_bounded() -> None:
    looped = spec()
    looped["arrays"]["a"]["self"] = looped
    with pytest.raises(ShmemError, match="nested deeper than 100 levels"):
        shmem_cli.analyze(looped)
    shared: list[Any] = [1]
    for _ in range(9):  # one list object ten times at each of 9 levels: 10^9 values
        shared = [shared] * 10
    start = time.perf_counter()
    with pytest.raises(ShmemError, match="source holds more than 100,000 values"):
        shmem_cli.analyze({**spec(), "x": shared})
    assert time.perf_counter() - start < HANG_S  # bounded, not timed: a full walk takes minutes


def test_a_huge_wrong_argument_is_shown_from_its_head() -> None:
    """The error shows a few items of a wrong argument: a 64 MiB ``bytes`` or a list of 10^7
    items was rendered whole first (a 512 MiB ``bytes``: 2 GB and 7 s for its message)."""
    big, many = bytes(64 << 20), [0] * 10_000_000
    tracemalloc.start()
    try:
        for value in (big, many):
            with pytest.raises(ShmemError, match="source must be a file path") as err:
                shmem_cli.analyze(value)
            assert len(err.value.message) < 300
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@needs_nvdisasm
def test_trace_bounds_params_and_buffers_before_writing_them() -> None:
    """``params`` bytes past any parameter block (32,764 + 128 + 65,536 bytes) and ``args``
    buffers past 128 MiB together are refused before their files are written (1 GiB of
    params, or ten 100 MiB buffers, went to temporary files first: 6-7 s of disk)."""
    too_long = r"params must be a parameter block's bytes \(at most 98,428\)"
    with pytest.raises(ShmemError, match=too_long):
        shmem_cli.trace(CUBIN, kernel="trivial", block=32, params=bytes(98_429))
    buffer = bytes(100 << 20)
    in_all = r"args\[1\] is not a kernel argument: it must be one of buffers of at most 128 MiB"
    with pytest.raises(ShmemError, match=in_all):
        shmem_cli.trace(CUBIN, kernel="many255", block=32, args={0: buffer, 1: buffer})
