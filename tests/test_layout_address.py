"""The array layout as a function from indices to byte addresses, on hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest

from shmem_cli.hardware.swizzle import TMA_SWIZZLES
from shmem_cli.spec.compile import spec_from_mapping
from shmem_cli.spec.layout import Variant, resolve


def test_padding_and_offset_enter_the_address() -> None:
    spec = spec_from_mapping(
        {
            "block": [32],
            "arrays": {"a": {"dtype": "float32", "shape": [4, 5], "pad": 3, "offset": 128}},
            "accesses": [{"array": "a", "index": ["0", "lane % 5"]}],
        }
    )
    a = resolve(spec).arrays["a"]
    # row pitch 5 + 3 = 8 floats: element [2][1] is float 17 after byte 128
    assert a(2, 1) == 128 + 17 * 4
    assert a(0, 0) == 128


def test_the_swizzle_is_composed_in() -> None:
    spec = spec_from_mapping(
        {
            "block": [32],
            "arrays": {"t": {"dtype": "float32", "shape": [8, 32], "swizzle": "128B"}},
            "accesses": [{"array": "t", "index": ["0", "lane"]}],
        }
    )
    t = resolve(spec).arrays["t"]
    # row 1 starts at byte 128: bit 7 set, so 128B XORs 1 into bits 4-6 (16 bytes)
    assert t(1, 0) == t.offset + 128 + 16
    assert t(1, 4) == t.offset + 128 + 0  # byte 144 of the row swaps with byte 128
    # a variant without the swizzle: the plain row-major address
    plain = resolve(spec, Variant(swizzle={"t": None})).arrays["t"]
    assert plain(1, 0) == plain.offset + 128
    assert TMA_SWIZZLES["128B"].apply(128) == 144


def test_arrays_of_indices_broadcast() -> None:
    spec = spec_from_mapping(
        {
            "block": [32],
            "arrays": {"a": {"dtype": "float64", "shape": [3, 4]}},
            "accesses": [{"array": "a", "index": ["0", "0"]}],
        }
    )
    a = resolve(spec).arrays["a"]
    rows = np.arange(3, dtype=np.int64)[:, None]
    cols = np.arange(4, dtype=np.int64)[None, :]
    got = a(rows, cols)
    assert got.shape == (3, 4)
    assert got.tolist() == [[a.offset + 8 * (4 * r + c) for c in range(4)] for r in range(3)]
    with pytest.raises(ValueError, match="a has 2 dimensions, not 1"):
        a(1)
