"""``shmem_cli.analyze`` given a mapping that YAML cannot write or that has no bound: each is
a ``ShmemError`` (code ``invalid-argument``) naming where the value is, in well under a
second, or the spec it stands for (issue 28: these ended in yaml's RepresenterError, a
ValueError from a 5,000-digit int, or 7 s of YAML before the size was refused)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

import shmem_cli
from shmem_cli import ShmemError


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
        ({"shape": ["x" * 10_000_000]}, "source holds more than 8,388,608 characters"),
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
    assert time.perf_counter() - start < 1.0


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
    assert time.perf_counter() - start < 1.0
