"""A compare on the block index read as thresholds (:func:`shmem_cli.trace.emulator.alike.
agree.arcs`): a thread's outcome of ``k + D(b) ? c`` is true where ``D(b)`` lies on one arc of
the circle of 32-bit values, and the blocks that keep the representative's outcomes, or how
many threads run under such a guard in each block, follow from the arcs' ends. Each is
checked here against the outcomes computed block by block and thread by thread."""

from __future__ import annotations

import operator
from types import SimpleNamespace

import numpy as np
import pytest

from shmem_cli.trace.emulator.alike import agree, guarded
from shmem_cli.trace.emulator.alike.distinct import Arc

W = 1 << 32
_OPS = {
    "LT": operator.lt,
    "LE": operator.le,
    "GT": operator.gt,
    "GE": operator.ge,
    "EQ": operator.eq,
    "NE": operator.ne,
}
_EDGES = [0, 1, 2, 255, 256, (1 << 31) - 1, 1 << 31, (1 << 31) + 1, W - 2, W - 1]


def _signed(x: int) -> int:
    return x - W if x >= 1 << 31 else x


def _holds(cmp: str, k: int, d: int, c: int, signed: bool) -> bool:
    a = (k + d) % W
    return bool(_OPS[cmp](_signed(a), _signed(c)) if signed else _OPS[cmp](a, c))


@pytest.mark.parametrize("cmp", sorted(_OPS))
@pytest.mark.parametrize("signed", [False, True])
def test_a_compares_true_values_are_one_arc(cmp: str, signed: bool) -> None:
    rng = np.random.default_rng(7)
    ks = [*_EDGES, *rng.integers(0, W, 6).tolist()]
    cs = [*_EDGES, *rng.integers(0, W, 6).tolist()]
    for k in ks:
        for c in cs:
            start, length = (int(x) for x in agree._true_arc(cmp, k, c, signed))
            # every d near the arc's ends and the compare's own edges, and some at random
            near = [start, start + length, -k, c - k, (1 << 31) - k, 0]
            ds = {(x + e) % W for x in near for e in (-1, 0, 1)}
            ds |= set(rng.integers(0, W, 8).tolist())
            for d in ds:
                on = (d - start) % W < length
                assert on == _holds(cmp, k, d, c, signed), (cmp, signed, k, c, d)


def _vectors(base: np.ndarray, arcs: list[tuple[bool, int, int]]) -> SimpleNamespace:
    values: list[object] = [np.zeros(len(base), np.uint32)]  # id 0: not an arc
    values += [Arc(base, neg, start, length) for neg, start, length in arcs]
    return SimpleNamespace(values=values)


def _arcs(rng: np.random.Generator, n: int) -> list[tuple[bool, int, int]]:
    out = []
    for _ in range(n):
        length = int(rng.choice([0, 1, 3, 40, 1 << 31, W - 3, W - 1, W]))
        out.append((bool(rng.integers(2)), int(rng.integers(0, W)), length))
    return out


def _table(vec: SimpleNamespace) -> np.ndarray:
    return np.stack([np.asarray(v) for v in vec.values[1:]])


@pytest.mark.parametrize("seed", range(6))
def test_the_blocks_that_keep_every_arcs_outcome_are_met_from_their_ends(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # block values near each other (a row index) and far apart, and arcs placed around them
    base = np.concatenate([rng.integers(0, 300, 200), rng.integers(0, W, 56)]).astype(np.uint32)
    arcs = _arcs(rng, 30)
    arcs += [(False, int(x), int(rng.integers(1, 400))) for x in rng.integers(0, 300, 30)]
    vec = _vectors(base, arcs)
    table = _table(vec)
    for rep in (0, 7, 199, 200, 255):
        met, rest = agree.met(vec, list(range(len(vec.values))), rep)
        assert rest == [0]
        want = (table == table[:, rep : rep + 1]).all(axis=0)
        assert np.array_equal(met, want)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("negated", [False, True])
def test_the_threads_a_guard_of_arcs_runs_are_counted_from_their_ends(
    seed: int, negated: bool
) -> None:
    rng = np.random.default_rng(100 + seed)
    base = np.concatenate([rng.integers(0, 300, 100), rng.integers(0, W, 28)]).astype(np.uint32)
    arcs = _arcs(rng, 20)  # and arcs whose ends fall on the blocks' values, wrapping past 0
    arcs += [(bool(rng.integers(2)), int(x), int(rng.integers(0, 300))) for x in base[:20]]
    arcs += [(False, W - int(rng.integers(1, 50)), int(rng.integers(50, 300))) for _ in range(5)]
    vec = _vectors(base, arcs)
    times = rng.integers(1, 9, len(vec.values) - 1)
    got, rest = agree.counted(vec, list(range(1, len(vec.values))), times, negated)
    assert rest == []
    want = (times[:, None] * (_table(vec) ^ negated)).sum(axis=0)
    assert np.array_equal(got, want)


def test_counted_refuses_a_vector_given_twice() -> None:
    # its arcs are summed from the list, its threads read by vector: a repeat would count
    # them twice, so the one caller passes distinct vectors and a repeat is refused
    vec = _vectors(np.arange(8, dtype=np.uint32), [(False, 2, 3)])
    with pytest.raises(ValueError, match="given twice"):
        agree.counted(vec, [1, 1], np.array([2, 3]), False)


@pytest.mark.parametrize("negated", [False, True])
def test_a_guard_read_by_several_threads_of_one_vector_counts_each_thread_once(
    negated: bool,
) -> None:
    # guarded.ran over threads that share vectors (three threads on arc 1, one on arc 2, two
    # not moving): each block counts each thread once, as the arcs' bool vectors say
    base = np.arange(10, dtype=np.uint32)
    vec = _vectors(base, [(False, 2, 5), (True, W - 4, 3)])
    vec.n, vec.full = len(base), False
    guard = SimpleNamespace(vids=np.array([1, 2, 1, -1, 1, -1]), k=np.array([0, 0, 0, 1, 0, 0]))
    got = guarded.ran(vec, guard, negated)
    table = _table(vec) ^ negated
    want = 3 * table[0] + table[1] + 1  # of the two still: k = 1 runs, or k = 0 under @!P
    assert np.array_equal(got, want)
