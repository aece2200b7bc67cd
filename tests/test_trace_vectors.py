"""Block vectors over a grid (shmem_cli/trace/emulator/alike/vectors.py) and the compares of
two sides that both move with the block (agree.py), against a plain model in the test: each
thread's value in each block, compared block by block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from shmem_cli.trace.emulator.alike import agree
from shmem_cli.trace.emulator.alike.distinct import Load, Step
from shmem_cli.trace.emulator.alike.vectors import Unknown, Vectors

W = 1 << 32


class _NoSteps:
    def step(self, m: int, loads: Any, rows: Any, total: int) -> dict[tuple[str, int], Any]:
        raise AssertionError("whole vectors need no step")


@dataclass
class _Forms:
    vec: Vectors
    rep: int


def _model(cmp: str, signed: bool, a: Any, c: Any) -> Any:
    """Per block: every thread's ``a ? c`` (threads x blocks, 32-bit values) as in block 0."""
    if signed:
        a, c = a.astype(np.uint32).view(np.int32), c.astype(np.uint32).view(np.int32)
    out = {"LT": a < c, "LE": a <= c, "GT": a > c, "GE": a >= c, "EQ": a == c, "NE": a != c}
    got = out[cmp]
    return (got == got[:, :1]).all(axis=0)


@pytest.mark.parametrize("cmp", ["LT", "LE", "GT", "GE", "EQ", "NE"])
@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("negated", [False, True])
def test_a_compare_of_two_moving_sides_keeps_the_blocks_of_the_same_outcome(
    cmp: str, signed: bool, negated: bool
) -> None:
    rng = np.random.default_rng(7)
    blocks, threads = 60, 16
    vec = Vectors(blocks, _NoSteps())
    base = (1 << 31) - 10 if signed else 0  # signed: values around the sign change
    va = [(base + rng.integers(0, 20, blocks)) % W for _ in range(2)]
    vc = [(base + rng.integers(0, 20, blocks)) % W for _ in range(2)]
    ia = np.array([vec.intern(v.astype(np.uint32)) for v in va])
    ic = np.array([vec.intern(v.astype(np.uint32)) for v in vc])
    which_a, which_c = rng.integers(0, 2, threads), rng.integers(0, 2, threads)
    ka, kc = rng.integers(0, 12, threads), rng.integers(0, 12, threads)
    reg_a = (ka[:, None] + np.stack(va)[which_a]) % W  # threads x blocks
    reg_c = (kc[:, None] + np.stack(vc)[which_c]) % W
    op_a = (-reg_a) % W if negated else reg_a  # the compare reads -a
    side_a = (op_a[:, 0].astype(np.int64), ia[which_a], negated)
    side_c = (reg_c[:, 0].astype(np.int64), ic[which_c], False)
    got = agree._compare(_Forms(vec, 0), cmp, signed, side_a, side_c)
    assert got.tolist() == _model(cmp, signed, op_a, reg_c).tolist()
    assert got[0]


class _Adder:
    """A step that adds its two loads (IADD3 R0, R1, R2 as the shadow runs it), counting
    the (group, block) pairs it ran."""

    def __init__(self) -> None:
        self.ran = 0

    def step(self, m: int, loads: Any, rows: Any, total: int) -> dict[tuple[str, int], Any]:
        self.ran += total
        (_, _, x), (_, _, y) = loads
        assert len(x) == len(y) == total
        return {rows[0]: (x.astype(np.uint64) + y).astype(np.uint32)}


def test_a_step_past_the_eager_size_is_evaluated_by_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shmem_cli.trace.emulator.alike import vectors

    monkeypatch.setattr(vectors, "EAGER", 100)
    monkeypatch.setattr(vectors, "ELEMENTS", 64)
    blocks = 1000
    adder = _Adder()
    vec = Vectors(blocks, adder)
    b = vec.intern(np.arange(blocks, dtype=np.uint32))
    groups = 3
    load = Load("R", 1, np.array([1, 2, 3], np.uint32), np.array([b, b, -1]))
    other = Load("R", 2, np.array([10, 20, 30], np.uint32), np.array([-1, b, b]))
    made = vec.make(Step(0, (load, other), (("R", 0),), groups))[("R", 0)]
    assert adder.ran == 0 and all(vec.any_step([v]) for v in made)  # kept as the step
    want = [np.arange(blocks) + 11, 2 * np.arange(blocks) + 22, np.arange(blocks) + 33]
    assert [vec.at(v, 500) for v in made] == [int(w[500]) for w in want]
    # a second step on the first's vectors: both evaluated window by window
    again = Load("R", 1, np.zeros(groups, np.uint32), np.array(made))
    twice = vec.make(Step(1, (again, again), (("R", 0),), groups))[("R", 0)]
    seen = np.zeros((groups, blocks), dtype=np.int64)
    widths = set()
    for lo, hi, got in vec.windows(twice):
        widths.add(hi - lo)
        for g, v in enumerate(twice):
            seen[g, lo:hi] = got[v]
    assert max(widths) < blocks  # more than one window
    assert seen.tolist() == [(2 * w).tolist() for w in want]
    same = vec.same_as(twice[0], 7)
    (mask,) = vec.masks([same])
    assert mask.tolist() == [i == 7 for i in range(blocks)]


def test_a_step_that_cannot_be_evaluated_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    from shmem_cli.trace.emulator.alike import vectors

    class _Refuses:
        def step(self, m: int, loads: Any, rows: Any, total: int) -> dict[tuple[str, int], Any]:
            return {rows[0]: None}

    monkeypatch.setattr(vectors, "EAGER", 0)
    vec = Vectors(10, _Refuses())
    b = vec.intern(np.arange(10, dtype=np.uint32))
    (made,) = vec.make(
        Step(0, (Load("R", 1, np.zeros(1, np.uint32), np.array([b])),), (("R", 0),), 1)
    )[("R", 0)]
    with pytest.raises(Unknown):
        vec.at(made, 3)


def test_steps_past_their_work_are_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    from shmem_cli.trace.emulator.alike import vectors

    monkeypatch.setattr(vectors, "EAGER", 0)
    monkeypatch.setattr(vectors, "WORK", 25)
    vec = Vectors(10, _Adder())
    b = vec.intern(np.arange(10, dtype=np.uint32))
    load = Load("R", 1, np.zeros(2, np.uint32), np.array([b, b]))
    made = vec.make(Step(0, (load, load), (("R", 0),), 2))[("R", 0)]
    assert [v for _, _, got in vec.windows(made) for v in got[made[1]]] == list(range(0, 20, 2))
    again = Load("R", 1, np.zeros(2, np.uint32), np.array(made))  # a step on the first's
    more = vec.make(Step(1, (again, again), (("R", 0),), 2))[("R", 0)]
    with pytest.raises(Unknown):  # 20 pairs evaluated, 20 more (the first kept whole) pass 25
        list(vec.windows(more))


def test_an_instruction_across_the_lanes_of_a_warp_gets_no_vector() -> None:
    # the shadow's lanes are blocks: R2UR's waterfall form takes each warp's first lane
    from shmem_cli.cuda.sass import parse_instruction
    from shmem_cli.trace.emulator.ops.warp.collective import waterfall

    assert waterfall(parse_instruction("R2UR P0, UR4, R2 ;", 0, "k.cu", 1))
    assert not waterfall(parse_instruction("R2UR UR4, R2 ;", 0, "k.cu", 1))
    assert not waterfall(parse_instruction("IADD3 R2, R3, R4, RZ ;", 0, "k.cu", 1))


@pytest.mark.parametrize("collide", [False, True])
def test_a_step_runs_once_per_distinct_block_of_its_sources(
    monkeypatch: pytest.MonkeyPatch, collide: bool
) -> None:
    # a 32 x 16 grid (block b = x + 32 y): a vector of x holds 32 distinct values, so a step
    # on it and constants runs 32 pairs a group, not 512, and every block gets its value;
    # with y too every block is distinct; a hash that collides (every factor 0) merges no
    # blocks: the step runs for all 512
    from shmem_cli.trace.emulator.alike import distinct

    if collide:
        monkeypatch.setattr(distinct, "_FACTORS", np.zeros(4, dtype=np.uint64))
    blocks = 32 * 16
    x, y = np.arange(blocks) % 32, np.arange(blocks) // 32
    adder = _Adder()
    vec = Vectors(blocks, adder)
    vx = vec.intern(x.astype(np.uint32))
    vy = vec.intern((y * 1000).astype(np.uint32))
    groups = 4
    ks = np.array([0, 5, 5, 7], np.uint32)
    a = Load("R", 1, ks, np.array([vx, vx, vx, -1]))
    b = Load("R", 2, np.array([1, 0, 0, 2], np.uint32), np.full(groups, -1))
    before = vec.bytes
    made = vec.make(Step(0, (a, b), (("R", 0),), groups))[("R", 0)]
    assert adder.ran == (blocks if collide else 32) * groups
    want = [x + 1, x + 5, x + 5, np.full(blocks, 9)]
    assert [np.asarray(vec.values[v]).tolist() for v in made] == [w.tolist() for w in want]
    assert made[1] == made[2]  # one vector, interned once
    # its 3 distinct rows held at the 32 distinct blocks (4 bytes each) and the blocks' map
    # (4 bytes a block), or whole where the hash collided
    assert vec.bytes - before == (3 * 4 * blocks if collide else 3 * 4 * 32 + 4 * blocks)
    assert [vec.at(v, 37) for v in made] == [6, 10, 10, 9]  # block 37: x = 5
    adder.ran = 0
    c = Load("R", 2, np.zeros(groups, np.uint32), np.array([vy, vy, -1, vy]))
    both = vec.make(Step(1, (a, c), (("R", 0),), groups))[("R", 0)]
    assert adder.ran == blocks * groups  # x and y: every block its own
    want = [x + 1000 * y, x + 5 + 1000 * y, x + 5, 7 + 1000 * y]
    assert [np.asarray(vec.values[v]).tolist() for v in both] == [w.tolist() for w in want]
    if collide:
        return
    # steps on the vectors held spread on x's map: once per its 32 distinct blocks; with a
    # whole vector of y beside them, once per block
    zeros = np.zeros(2, np.uint32)
    spread = Load("R", 1, zeros, np.array([made[1], made[3]]))  # x + 5, 9
    for other, ran, want in (
        (Load("R", 2, zeros, np.array([made[0], made[0]])), 32, [2 * x + 6, x + 10]),
        (Load("R", 2, zeros, np.array([made[0], vy])), blocks, [2 * x + 6, 9 + 1000 * y]),
    ):
        adder.ran = 0
        got = vec.make(Step(2, (spread, other), (("R", 0),), 2))[("R", 0)]
        assert adder.ran == ran * 2
        assert [np.asarray(vec.values[v]).tolist() for v in got] == [w.tolist() for w in want]


def test_the_spread_vectors_read_and_compared_at_their_distinct_blocks() -> None:
    # vectors held spread on two maps and one whole, read at a window and at chosen blocks
    # as stacking each one's values would, and compared with a value per vector block by
    # block as the whole arrays are; a load whose groups all read a whole vector is each
    # group's k plus its vector's values (a predicate: the values alone)
    from shmem_cli.trace.emulator.alike.distinct import Spread, agreeing, loaded, planned, rows

    blocks = 40
    x = np.arange(blocks) % 4
    y = np.arange(blocks) // 8
    mx, my = x.astype(np.int32), y.astype(np.int32)
    held = [
        Spread(np.array([5, 6, 7, 8], np.uint32), mx),
        Spread(np.array([1, 1, 2, 9, 9], np.uint32), my),
        np.arange(100, 100 + blocks, dtype=np.uint32),
        Spread(np.array([0, 3, 0, 3], np.uint32), mx),
    ]
    whole = [np.asarray(v) for v in held]
    assert whole[0].tolist() == (x + 5).tolist() and whole[1][[0, 8, 24]].tolist() == [1, 1, 9]
    for cut in (slice(3, 29), np.array([0, 5, 17, 39])):
        assert rows(held, cut).tolist() == [w[cut].tolist() for w in whole]
    for rep in (0, 13, 38):
        want = np.ones(blocks, bool)
        for w in (whole[0], whole[1], whole[3]):
            want &= w == w[rep]
        got = agreeing([(held[i], int(whole[i][rep])) for i in (0, 1, 3)], blocks)
        assert got.tolist() == want.tolist()
    vids = np.array([2, 0, 2, 1])
    plan = planned(vids, held, type(None))
    ks = np.array([1, 2, 3, 4], np.uint32)
    src = rows([held[v] for v in plan.whole], slice(0, blocks))
    want_sum = [(whole[v] + ks[g]).tolist() for g, v in enumerate(vids.tolist())]
    assert loaded(ks, False, plan, src, blocks).tolist() == want_sum
    same = planned(np.array([2, 2, 2, 2]), held, type(None))
    one = rows([held[v] for v in same.whole], slice(0, blocks))
    assert loaded(ks, False, same, one, blocks).tolist() == [(whole[2] + k).tolist() for k in ks]
    part = planned(np.array([2, -1, 0, -1]), held, type(None))
    src = rows([held[v] for v in part.whole], slice(0, blocks))
    want_part = [whole[2] + 1, np.full(blocks, 2), whole[0] + 3, np.full(blocks, 4)]
    assert loaded(ks, False, part, src, blocks).tolist() == [w.tolist() for w in want_part]
