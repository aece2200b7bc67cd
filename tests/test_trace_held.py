"""The block vectors no form holds any more, let go of (alike/held.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shmem_cli.trace.emulator.alike import held, vectors
from shmem_cli.trace.emulator.alike.distinct import Load, Step
from shmem_cli.trace.emulator.alike.vectors import Vectors

from .conftest import needs_nvdisasm
from .test_trace_ballots import BALLOTS
from .test_trace_classes import _same
from .test_trace_grid import classes_of


def test_the_vectors_no_form_nor_step_holds_are_let_go() -> None:
    vec = Vectors(4, stepper=None)  # type: ignore[arg-type]
    a, b, c, d = (vec.intern(np.full(4, k, np.uint32)) for k in (1, 2, 3, 4))
    agreed = vec.same_as(b, 0)  # (4 blocks, 1 byte each)
    vec.steps.append(Step(0, (Load("R", 2, np.zeros(1, np.uint32), np.array([d])),), (), 1))
    assert vec.bytes == 4 * 16 + 4
    # a form holds a (-1: none), a step kept reads d: b, c and b's agreement are let go
    dead = held.unheld(vec, [np.array([a, -1])])
    assert dead.tolist() == [False, True, True, False, True]
    vec.forget(dead)
    assert vec.values[b] is None and vec.values[agreed] is None and vec.bytes == 2 * 16
    # made again, a vector let go of is new (the old id names nothing); one held is found
    assert vec.intern(np.full(4, 3, np.uint32)) == 5
    assert vec.intern(np.full(4, 1, np.uint32)) == a


@pytest.mark.slow
@needs_nvdisasm
def test_a_grid_is_classed_alike_with_its_vectors_let_go_at_every_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bl_tiles (k = 7, 8 tiles) over 64 blocks: each thread its own group of x % 7 (256
    # vectors an instruction, 64 KiB), let go of as soon as they pass a byte (and twice what
    # was left before): the same 7 classes (b % 7) as every block run, with some tens of
    # registers' vectors held at once (kept, the rounds' took 9 MiB)
    monkeypatch.setattr(held, "TIDY", 0)
    most: list[int] = []
    forget = vectors.Vectors.forget

    def kept(self: Any, dead: Any) -> None:
        most.append(self.bytes)
        forget(self, dead)

    monkeypatch.setattr(vectors.Vectors, "forget", kept)
    got = _same("bl_tiles", (64, 1, 1), ("1=7", "2=8"), cubin=BALLOTS)
    cov = got.launch.coverage
    assert cov is not None and cov.mode == "alike" and classes_of(cov) == 7
    assert most  # let go of, often
    assert max(most) <= 2 << 20
