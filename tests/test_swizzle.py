"""Swizzles: the TMA modes and CuTe Swizzle<B,M,S> against independent bit-twiddling, and
alignment."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from shmem_cli.hardware.swizzle import TMA_SWIZZLES, parse_swizzle
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.spec.compile import load_spec, spec_from_mapping
from shmem_cli.spec.layout import resolve
from shmem_cli.spec.space import Space

OFFSETS = range(0, 1 << 13)

# The formulas, bit by bit: (target bit, source bit) pairs.
TMA_BITS = {
    "32B": [(4, 7)],  # a[4] ^= a[7]
    "64B": [(4, 7), (5, 8)],  # a[5:4] ^= a[8:7]
    "128B": [(4, 7), (5, 8), (6, 9)],  # a[6:4] ^= a[9:7]
}


def flip_bits(a: int, pairs: list[tuple[int, int]]) -> int:
    out = a
    for target, source in pairs:
        if (a >> source) & 1:
            out ^= 1 << target
    return out


def cute_pairs(bits: int, base: int, shift: int) -> list[tuple[int, int]]:
    """CuTe Swizzle<B,M,S>: bit M+S+i is XOR-ed into bit M+i, i < B."""
    return [(base + i, base + shift + i) for i in range(bits)]


@pytest.mark.parametrize("mode", ["32B", "64B", "128B"])
def test_tma_modes_follow_the_bit_formulas(mode: str) -> None:
    swz = TMA_SWIZZLES[mode]
    for a in OFFSETS:
        assert swz.apply(a) == flip_bits(a, TMA_BITS[mode]), (mode, a)


@pytest.mark.parametrize("mode", ["32B", "64B", "128B"])
def test_tma_modes_on_numpy_arrays(mode: str) -> None:
    a = np.arange(1 << 13, dtype=np.int64)
    expected = np.array([flip_bits(int(x), TMA_BITS[mode]) for x in a])
    assert np.array_equal(TMA_SWIZZLES[mode].apply(a), expected)


def test_128B_is_chunk_xor_row_on_128_byte_rows() -> None:
    # the CUTLASS/TMA description: 16-byte chunk c of row r goes to chunk c ^ (r % 8)
    swz = TMA_SWIZZLES["128B"]
    for r in range(32):
        for c in range(8):
            for within in (0, 2, 14):
                assert swz.apply(r * 128 + c * 16 + within) == r * 128 + (c ^ (r % 8)) * 16 + within


@pytest.mark.parametrize(
    ("mode", "cute"),
    [("32B", "Swizzle<1,4,3>"), ("64B", "Swizzle<2,4,3>"), ("128B", "Swizzle<3,4,3>")],
)
def test_tma_modes_equal_their_cute_forms(mode: str, cute: str) -> None:
    general = parse_swizzle(cute)
    assert general is not None
    tma = TMA_SWIZZLES[mode]
    assert general.cute_form() == tma.cute_form() and general.terms == tma.terms
    for a in OFFSETS:
        assert general.apply(a) == tma.apply(a)
    assert tma.period == {"32B": 256, "64B": 512, "128B": 1024}[mode]


def test_general_cute_form_follows_its_definition() -> None:
    for bits, base, shift in itertools.product(range(0, 4), range(0, 6), range(1, 7)):
        if bits and shift < bits:
            continue
        swz = parse_swizzle(f"Swizzle<{bits},{base},{shift}>")
        assert swz is not None
        pairs = cute_pairs(bits, base, shift)
        for a in range(0, 1 << 12, 7):
            assert swz.apply(a) == flip_bits(a, pairs), (bits, base, shift, a)
        # Swizzle<0,M,S> moves nothing: the identity, aligned anywhere
        assert swz.period == (1 << (base + shift + bits) if bits else 1)


def test_swizzle_permutes_each_period() -> None:
    for swz in (
        *TMA_SWIZZLES.values(),
        parse_swizzle("Swizzle<3,4,4>"),
        parse_swizzle("Swizzle<2,2,5>"),
    ):
        assert swz is not None
        period = swz.period
        for start in (0, period, 5 * period):
            image = sorted(swz.apply(a) for a in range(start, start + period))
            assert image == list(range(start, start + period))
        assert all(swz.apply(swz.apply(a)) == a for a in range(0, 4096))


def spec_with(arrays: dict[str, Any], accesses: list[dict[str, Any]] | None = None) -> Any:
    first = next(iter(arrays))
    return spec_from_mapping(
        {
            "block": [32],
            "arrays": arrays,
            "accesses": accesses or [{"array": first, "index": [0] * len(arrays[first]["shape"])}],
        }
    )


def test_space_addresses_use_the_swizzled_offset() -> None:
    # a 64x64 half tile with 128B swizzle, column c of rows lane:
    # address = offset + swz(row*128 + c*2)
    spec = spec_with(
        {
            "pre": {"dtype": "float32", "shape": [40]},
            "A": {"dtype": "float16", "shape": [64, 64], "swizzle": "128B"},
        },
        [{"array": "A", "index": ["lane", "3 + 8 * j"], "loop": {"j": "0..7"}}],
    )
    layout = resolve(spec)
    assert (
        layout.arrays["A"].offset == 1024
    )  # after 160 bytes of 'pre', aligned to the 1024-byte period
    batch = next(Space(spec, layout, spec.accesses[0]).batches())
    for j in range(8):
        for lane in range(32):
            raw = lane * 128 + (3 + 8 * j) * 2
            assert batch.addr[j, lane] == 1024 + flip_bits(raw, TMA_BITS["128B"])


@pytest.mark.parametrize(("mode", "period"), [("32B", 256), ("64B", 512), ("128B", 1024)])
def test_explicit_offset_must_meet_the_period(mode: str, period: int) -> None:
    ok = spec_with(
        {"A": {"dtype": "float16", "shape": [8, 64], "offset": 3 * period, "swizzle": mode}}
    )
    assert resolve(ok).arrays["A"].offset == 3 * period
    bad = spec_with(
        {"A": {"dtype": "float16", "shape": [8, 64], "offset": period // 2, "swizzle": mode}}
    )
    with pytest.raises(ShmemError) as info:
        resolve(bad)
    msg = info.value.message
    assert f"multiple of {period} bytes" in msg
    assert f"starts at byte {period // 2}" in msg
    assert "into bits 4" in msg


def test_offset_error_is_located_at_the_offset(tmp_path: Any) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "block: [32]\n"
        "arrays:\n"
        "  A:\n"
        "    dtype: float16\n"
        "    shape: [8, 64]\n"
        "    offset: 512\n"
        "    swizzle: 128B\n"
        "accesses:\n"
        "  - {array: A, index: [0, lane]}\n"
    )
    with pytest.raises(ShmemError) as info:
        resolve(load_spec(path))
    assert info.value.line == 6
    assert "bits 7-9 into bits 4-6" in info.value.message
    assert "__align__(1024)" in info.value.message


def test_base_unit_must_hold_an_element() -> None:
    spec = spec_with(
        {"V": {"dtype": "float4", "shape": [32, 8], "swizzle": {"bits": 3, "base": 2, "shift": 3}}}
    )
    with pytest.raises(ShmemError) as info:
        resolve(spec)
    assert "4-byte units" in info.value.message
    assert "at least 4 (16-byte units)" in info.value.message
    fine = spec_with(
        {"V": {"dtype": "float4", "shape": [32, 8], "swizzle": {"bits": 3, "base": 4, "shift": 3}}}
    )
    assert resolve(fine).arrays["V"].swizzle is not None


def test_automatic_layout_aligns_to_the_period() -> None:
    spec = spec_with(
        {
            "a": {"dtype": "float32", "shape": [3]},
            "b": {"dtype": "float16", "shape": [8, 32], "swizzle": "64B"},
            "c": {"dtype": "float16", "shape": [8, 64], "swizzle": "128B"},
        }
    )
    lay = resolve(spec)
    assert lay.arrays["b"].offset == 512
    assert lay.arrays["c"].offset == 1024


@pytest.mark.parametrize(
    "text", ["Swizzle<1,4,0>", "Swizzle<3,4,2>", "Swizzle<9,4,9>", "256B", "swizzle(3,4,3)"]
)
def test_bad_swizzle_text(text: str) -> None:
    with pytest.raises(ValueError):
        parse_swizzle(text)
