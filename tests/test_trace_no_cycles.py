"""A batch's state is freed when its run ends, without waiting for Python's cyclic garbage
collector: a reference cycle through a batch's :class:`~shmem_cli.trace.emulator.state.Block`
(its clock holding the scheduler's clock waits, which held the block) kept every batch of a
whole grid alive until the collector ran, and a grid of 16,384 blocks of 1,024 threads
peaked at 1.6 GB instead of 0.55 (tests/test_hostile_budget.py's slow test of that grid).
Checked on a grid whose blocks wait on each other (batches set aside and resumed) and on a
plain grid, and for a batch's thread that ends by an error or is abandoned."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

import shmem_cli
from shmem_cli.trace.emulator import grid as grids
from shmem_cli.trace.emulator.state import Block
from shmem_cli.trace.emulator.sync.turns import Turn, Turns

from .conftest import needs_nvdisasm
from .hostile import HOSTILE
from .test_trace_spinwait import given, run


def _blocks() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, Block))


@pytest.mark.slow
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


@pytest.mark.slow
@needs_nvdisasm
def test_a_batch_of_blocks_is_freed_when_it_ends_not_left_to_the_garbage_collector() -> None:
    # the clock's waits (clock_wait.ClockWaits, the block's clock's host) held the block back:
    # a cycle, so every batch's arrays stayed until the collector ran (a sampled grid of
    # 65,536 blocks of per_block-like kernels: 1.05 GB resident where 0.45 GB is enough)
    cubin = HOSTILE / "hostile.sm_90.cubin"
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        shmem_cli.trace(cubin, kernel="trivial", block=(1024, 1, 1), grid=(3, 1, 1), args={0: 0})
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, Block)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not left  # each freed by its last reference going, as the batch ended


class _Marker:
    """An object a batch's frames hold (as a batch's frames hold its Block)."""


def _held_by_a_batch_s_frame(fate: str) -> weakref.ref[_Marker]:
    """Run a batch's body on a thread of :mod:`.sync.turns` that holds a marker in its frame
    and ends by ``fate``: "raises" (an error of its own, which the owner raises again) or
    "abandoned" (it pauses and the trace stops); the marker, weakly."""
    handle: list[weakref.ref[_Marker]] = []
    turns = Turns()
    me: list[Turn] = []

    def body() -> None:
        marker = _Marker()
        handle.append(weakref.ref(marker))
        if fate == "raises":
            raise ValueError("the batch's own error")
        me[0].pause()

    if fate == "raises":
        with pytest.raises(ValueError, match="own error"):
            turns.start(body)
    else:
        # the turn is known only once it started: hand it over through the list
        turn = Turn(body, "shmem-batch-test")
        me.append(turn)
        turns.alive.append(turn)
        turn.thread.start()
        turns.resume(turn, True)
        assert turn.state == "paused"
        turns.stop(lambda stopping: None)
        del turn
    me.clear()
    return handle[0]


@pytest.mark.slow
@pytest.mark.parametrize("fate", ["raises", "abandoned"])
def test_a_batch_s_thread_that_ends_by_an_error_frees_its_frames(fate: str) -> None:
    """The error a batch's thread ends by (its own, or :class:`.turns.Abandoned` where the
    trace stopped) holds the thread's frames in its traceback; kept on the turn, whose own
    frame (``Turn._main``) is one of them, it made a cycle that kept the batch's Block alive
    till the collector ran."""
    gc.collect()
    gc.disable()
    try:
        marker = _held_by_a_batch_s_frame(fate)
        alive = marker() is not None
    finally:
        gc.enable()
    assert not alive, f"a batch's frames ({fate}) kept alive by a reference cycle"
