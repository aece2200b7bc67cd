"""Signals that land in the hand-offs of batches that take turns (sync/turns.py, issue 29).

A signal's handler runs in the main thread between two of its bytecodes: a Ctrl-C (or a
SIGTERM) may come while the thread that owns the trace hands a batch's thread the turn,
starts one, or joins one, not only while it waits. Each test raises the interrupt there,
as the handler would, in a trace of the project's own ``sw_relay`` (8 blocks, a block a
batch: blocks 1-7 run on threads of their own, blocks 1-3 wait and resume), and checks that
the interrupt goes on and that every thread of the trace ended. The trace runs on a thread
of the test's own (its owner), so that a hand-off lost for ever fails the test, not the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from shmem_cli.plumbing.interrupts import Terminated
from shmem_cli.trace.emulator import grid as grids
from shmem_cli.trace.emulator.sync import turns

from .conftest import HANG_S, needs_nvdisasm
from .test_trace_spinwait import given, run


class _CutShort(threading.Semaphore):
    """A semaphore whose ``nth`` release is cut short by Ctrl-C before it releases (the
    handler runs as ``release`` is entered)."""

    def __init__(self, nth: int) -> None:
        super().__init__(0)
        self.nth, self.calls = nth, 0

    def release(self, n: int = 1) -> None:
        self.calls += 1
        if self.calls == self.nth:
            raise KeyboardInterrupt
        super().release(n)


def _batch_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("shmem-batch-")]


def _traced_on_a_thread(tmp_path: Path) -> BaseException | None:
    """Trace sw_relay, a block a batch, on a thread of its own; what it raised (None:
    nothing). Fails where the trace has not ended within HANG_S."""
    caught: list[BaseException] = []

    def body() -> None:
        try:
            run("sw_relay", 64, (8, 1, 1), (given(tmp_path, list(range(8 * 64))),))
        except BaseException as exc:  # handed to the test
            caught.append(exc)

    owner = threading.Thread(target=body, name="test-owner", daemon=True)
    owner.start()
    owner.join(HANG_S)
    assert not owner.is_alive(), "the trace never ended: a batch's turn was lost"
    return caught[0] if caught else None


@pytest.fixture
def one_block_a_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grids, "BATCH_THREADS", 64)
    assert _batch_threads() == []


@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
@pytest.mark.parametrize("nth", [1, 2])  # block 1's thread started; resumed after its wait
def test_an_interrupt_as_a_batch_is_handed_the_turn_ends_every_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nth: int
) -> None:
    """The owner had marked block 1's thread as the one running when the interrupt came,
    before it let it go: that thread waited for a turn that never came, and the owner waited
    for it to stop running, for ever (Ctrl-C again was swallowed)."""
    made = turns.Turn.__init__

    def cut(self: turns.Turn, body: Callable[[], None], name: str) -> None:
        made(self, body, name)
        if name == "shmem-batch-1":
            self.go = _CutShort(nth)

    monkeypatch.setattr(turns.Turn, "__init__", cut)
    assert isinstance(_traced_on_a_thread(tmp_path), KeyboardInterrupt)
    assert _batch_threads() == []


@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
def test_an_interrupt_as_a_batch_s_thread_starts_is_the_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interrupt came in Thread.start before block 2's thread started: joining it raised
    RuntimeError ('cannot join thread before it is started'), a traceback and status 1
    instead of Ctrl-C's 130, and the threads after it in the list were never joined."""
    start = threading.Thread.start

    def cut(self: threading.Thread) -> None:
        if self.name == "shmem-batch-2":
            raise KeyboardInterrupt
        start(self)

    monkeypatch.setattr(threading.Thread, "start", cut)
    assert isinstance(_traced_on_a_thread(tmp_path), KeyboardInterrupt)
    assert _batch_threads() == []


@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
def test_a_sigterm_while_the_threads_are_joined_goes_on_once_all_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C as block 3's thread would start, then SIGTERM (shmem's handler raises
    Terminated, a SystemExit) while the owner joins block 1's: it went on at once, leaving
    block 2's thread waiting for ever; it goes on once every thread is joined."""
    start, join, said = threading.Thread.start, threading.Thread.join, []

    def cut(self: threading.Thread) -> None:
        if self.name == "shmem-batch-3":
            raise KeyboardInterrupt
        start(self)

    def joined(self: threading.Thread, timeout: float | None = None) -> None:
        if self.name.startswith("shmem-batch-") and not said:
            said.append(self.name)
            raise Terminated
        join(self, timeout)

    monkeypatch.setattr(threading.Thread, "start", cut)
    monkeypatch.setattr(threading.Thread, "join", joined)
    caught = _traced_on_a_thread(tmp_path)
    assert said == ["shmem-batch-1"]
    assert isinstance(caught, Terminated) and caught.code == 143
    assert _batch_threads() == []


@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
def test_an_interrupt_while_an_ended_batch_s_thread_is_joined_is_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C as the owner joins block 4's thread, which ran to its end: the join went on
    (as it must) and the interrupt was dropped, the trace running on to its end."""
    join, said = threading.Thread.join, []

    def joined(self: threading.Thread, timeout: float | None = None) -> None:
        if self.name == "shmem-batch-4" and not said:
            said.append(self.name)
            raise KeyboardInterrupt
        join(self, timeout)

    monkeypatch.setattr(threading.Thread, "join", joined)
    assert isinstance(_traced_on_a_thread(tmp_path), KeyboardInterrupt)
    assert said == ["shmem-batch-4"]
    assert _batch_threads() == []
