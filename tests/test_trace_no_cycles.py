"""A batch's state is freed when its run ends, without waiting for Python's cyclic garbage
collector: a reference cycle through a batch's :class:`~shmem_cli.trace.emulator.state.Block`
(its clock holding the scheduler's clock waits, which held the block) kept every batch of a
whole grid alive until the collector ran, and a grid of 16,384 blocks of 1,024 threads
peaked at 1.6 GB instead of 0.55 (tests/test_hostile_budget.py's slow test of that grid)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from shmem_cli.trace.emulator import grid as grids
from shmem_cli.trace.emulator.state import Block

from .conftest import needs_nvdisasm
from .test_trace_spinwait import given, run


def _blocks() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, Block))


@needs_nvdisasm
def test_every_batch_is_freed_as_it_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grids, "BATCH_THREADS", 64)  # a block a batch: 8 batches
    values = [(5 * i) % 17 - 8 for i in range(8 * 64)]
    gc.collect()
    before = _blocks()
    gc.disable()
    try:
        _, buffers = run("sw_relay", 64, (8, 1, 1), (given(tmp_path, values),))
        left = _blocks() - before
    finally:
        gc.enable()
    assert any(buffers["param1"])  # it ran
    assert left == 0, f"{left} Block(s) kept alive by a reference cycle"
