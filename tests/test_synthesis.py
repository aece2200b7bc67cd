"""Swizzle synthesis (issue 31): the XOR map found for an array is the best of its class.

The checks do not trust the engine or the search: the best map of a small class is
found here by costing every map with the plain-Python reference model
(tests/reference.py, the hardware rule written out lane by lane), and the algebra of
the maps against bit-by-bit definitions (CuTe's ``Swizzle<B,M,S>``, Triton's
``swizzled_shared`` phase formula).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from shmem_cli.analysis.spec_synthesis import synthesized
from shmem_cli.analysis.swizzle_terms import terms
from shmem_cli.hardware.swizzle import Swizzle, parse_swizzle, written
from shmem_cli.spec.compile import SpecFile, spec_from_mapping
from shmem_cli.spec.layout import Variant, resolve

from . import reference as ref


def _spec(
    dtype: str, shape: list[int], accesses: list[dict[str, Any]], block: int = 32
) -> SpecFile:
    return spec_from_mapping(
        {"block": [32], "arrays": {"a": {"dtype": dtype, "shape": shape}}, "accesses": accesses}
    )


def _reference_requests(spec: SpecFile) -> list[tuple[str, str, int, list[list[int | None]]]]:
    """Every request of every access as the reference model forms it, unswizzled:
    (op, atomic, element bytes, [lane addresses])."""
    layout = resolve(spec, Variant(swizzle={"a": None}))
    arr = layout.arrays["a"]
    out = []
    block = layout.block
    threads = block[0] * block[1] * block[2]
    for acc in spec.accesses:
        requests = []
        for loop_env in ref.iterations(acc):
            for w in range(-(-threads // ref.WARP)):
                addr: list[int | None] = [None] * ref.WARP
                for lane in range(ref.WARP):
                    tid = w * ref.WARP + lane
                    if tid >= threads:
                        continue
                    env = {**ref.thread_env(tid, block), **layout.params, **loop_env}
                    index = [ref.evaluate(loc.expr, env) for loc in acc.index]
                    addr[lane] = ref.byte_address(index, arr)
                requests.append(addr)
        out.append((acc.op, acc.atomic, arr.esize, requests))
    return out


def _reference_total(requests: Any, swz: Swizzle) -> int:
    total = 0
    for op, atomic, esize, reqs in requests:
        for addr in reqs:
            moved = [None if a is None else swz.apply(a) for a in addr]
            total += ref.request_cost(moved, op, esize, atomic, 1).wavefronts
    return total


def _every_map(targets: range, sources: range) -> list[Swizzle]:
    masks = [0]
    for t in targets:
        masks += [m | 1 << t for m in masks]
    return [
        Swizzle.from_terms(dict(zip(sources, choice, strict=True)))
        for choice in itertools.product(masks, repeat=len(sources))
    ]


TX, TY = "threadIdx.x", "threadIdx.y"
RANDOM_INDICES = [
    ["(lane * 5) % 4", "(lane / 4) * 4 + lane % 3"],
    ["lane % 4", "(lane * 9) % 32"],
    ["(lane / 2) % 4", "(lane % 2) * 16 + lane / 8"],
]


@pytest.mark.parametrize("index", RANDOM_INDICES)
def test_the_map_found_is_the_best_of_its_class_by_the_reference_model(index: list[str]) -> None:
    """float a[4][32] (512 bytes): the class is every XOR of bits 7-8 into bits 2-6,
    1,024 maps, each costed here with the reference model."""
    spec = _spec(
        "float32",
        [4, 32],
        [
            {"name": "read", "array": "a", "index": index},
            {"name": "write", "array": "a", "op": "store", "index": ["lane / 8", "lane % 8 * 4"]},
        ],
    )
    requests = _reference_requests(spec)
    best = min(_reference_total(requests, m) for m in _every_map(range(2, 7), range(7, 9)))
    found = synthesized(spec, "a")
    assert found is not None
    assert found.wavefronts == best
    assert _reference_total(requests, found.swizzle) == best
    assert found.optimal and found.bound <= best


def test_a_wide_access_keeps_its_vector_whole() -> None:
    """8-byte lanes: no map may write bit 2, or a double would be split."""
    rng = random.Random(7)
    rows = [f"({rng.randrange(1, 31)} * lane + {rng.randrange(32)}) % 8" for _ in range(2)]
    spec = _spec(
        "float64",
        [8, 16],
        [{"name": f"r{k}", "array": "a", "index": [r, "lane % 16"]} for k, r in enumerate(rows)],
    )
    found = synthesized(spec, "a")
    assert found is not None and found.targets == (3, 4, 5, 6)
    assert found.swizzle.unit >= 8
    requests = _reference_requests(spec)
    best = min(_reference_total(requests, m) for m in _every_map(range(3, 7), range(7, 10)))
    assert found.wavefronts == best


@pytest.mark.parametrize(
    ("dtype", "ideal"),
    [("float32", 64), ("float64", 128)],
)
def test_a_32x32_transpose_reaches_its_ideal_with_no_byte_added(dtype: str, ideal: int) -> None:
    """The row store and the column load of a 32x32 tile, one warp per row: every request
    one phase per 128 bytes, so the ideal is 32 (float) or 64 (double) per access."""
    spec = spec_from_mapping(
        {
            "block": [32, 32],
            "arrays": {"tile": {"dtype": dtype, "shape": [32, 32]}},
            "accesses": [
                {
                    "name": "w",
                    "array": "tile",
                    "op": "store",
                    "index": ["threadIdx.y", "threadIdx.x"],
                },
                {"name": "r", "array": "tile", "index": ["threadIdx.x", "threadIdx.y"]},
            ],
        }
    )
    found = synthesized(spec, "tile")
    assert found is not None
    assert (found.wavefronts, found.bound, found.reaches_bound) == (ideal, ideal, True)
    assert found.current > ideal


def test_a_tma_filled_array_only_takes_a_tma_mode() -> None:
    """A uint4 [64][8] tile (128-byte rows) read down a column: 128B is the best mode."""
    from shmem_cli.analysis.spec_synthesis import array_accesses
    from shmem_cli.analysis.synthesis import synthesize
    from shmem_cli.hardware.arch import SM90

    spec = _spec("uint4", [64, 8], [{"name": "r", "array": "a", "index": ["lane", "0"]}])
    found = array_accesses(spec, "a")
    assert found is not None
    accesses, size, base = found
    answer = synthesize(accesses, size, SM90, base=base, fill="tma")
    assert answer.swizzle.label == written(parse_swizzle("128B") or Swizzle((), ""))
    assert any("TMA" in n for n in answer.notes)


# --- the maps themselves ----------------------------------------------------------------


def _cute(offset: int, bits: int, base: int, shift: int) -> int:
    """CuTe's definition: bits base+shift.. XOR-ed into bits base.. (bit by bit)."""
    out = offset
    for i in range(bits):
        if offset >> (base + shift + i) & 1:
            out ^= 1 << (base + i)
    return out


def test_a_general_map_is_a_permutation_and_composes() -> None:
    rng = random.Random(3)
    for _ in range(50):
        a = Swizzle.from_terms({s: rng.randrange(1 << 7) & ~3 for s in range(7, 10)})
        b = Swizzle.from_terms({s: rng.randrange(1 << 7) & ~3 for s in range(7, 11)})
        period = max(a.period, b.period)
        assert sorted(a.apply(o) for o in range(period)) == list(range(period))
        both = a.then(b)
        assert all(both.apply(o) == b.apply(a.apply(o)) for o in range(0, 4 * period, 3))


def test_cute_pieces_read_back() -> None:
    for bits, base, shift in [(3, 4, 3), (5, 2, 5), (2, 3, 6), (1, 2, 9)]:
        swz = Swizzle.cute(bits, base, shift)
        assert swz.cute_form() == (bits, base, shift)
        assert all(swz.apply(o) == _cute(o, bits, base, shift) for o in range(0, 1 << 13, 5))
    mixed = parse_swizzle("Swizzle<3,4,3> ^ Swizzle<1,2,9>")
    assert mixed is not None and mixed.cute_form() is None
    assert all(
        mixed.apply(o) == _cute(o, 3, 4, 3) ^ _cute(o, 1, 2, 9) ^ o for o in range(0, 1 << 12, 7)
    )
    assert written(mixed) == "Swizzle<1,2,9> ^ Swizzle<3,4,3>"
    form = mixed.to_json()
    assert form["xor"] == [[7, [4]], [8, [5]], [9, [6]], [11, [2]]]
    matrix = form["matrix"]
    assert isinstance(matrix, list)
    for o in range(0, 1 << 12, 11):  # the matrix times the offset's bits, over GF(2)
        bits = [o >> c & 1 for c in range(len(matrix))]
        out = sum(
            (sum(r * b for r, b in zip(row, bits, strict=True)) % 2) << k
            for k, row in enumerate(matrix)
        )
        assert out == mixed.apply(o)


@pytest.mark.parametrize(
    ("element", "name", "expression"),
    [
        (4, "float", "i ^ ((i >> 3) & 0x1c)"),
        (16, "uint4", "i ^ ((i >> 3) & 0x7)"),
    ],
)
def test_the_index_expression_is_for_the_declared_element(
    element: int, name: str, expression: str
) -> None:
    """128B (Swizzle<3,4,3> on bytes): on a uint4 index it XORs index bits 3-5 into 0-2."""
    said = terms(Swizzle.cute(3, 4, 3), element, name)
    assert said.expression() == expression
    swz = Swizzle.cute(3, 4, 3)
    for i in range(0, 4096 // element):
        new = eval(expression, {"i": i})  # noqa: S307 - the test's own literal expressions
        assert new * element == swz.apply(i * element)


@pytest.mark.parametrize("cols", [32, 64, 128])
def test_triton_parameters_say_the_same_layout(cols: int) -> None:
    """Triton's swizzled_shared formula, written out here, against the element map."""
    for swz in (Swizzle.cute(3, 4, 3), Swizzle.cute(2, 3, 5), Swizzle.cute(3, 4, 4)):
        said = terms(swz, 2, "half", cols)
        if said.triton is None or said.on_elements is None:
            continue
        vec, per, most = said.triton.vec, said.triton.per_phase, said.triton.max_phase
        for r in range(16):
            for c in range(cols):
                phase = (r // per) % most
                new_c = ((c // vec) ^ phase) * vec + c % vec
                assert said.on_elements.apply(r * cols + c) == r * cols + new_c
