"""Batches of blocks that take turns, each on a thread of its own (issue 29).

A batch of blocks set aside on a wait (:mod:`.waiting_blocks`) keeps its state where the
emulator keeps it while it runs: on the stack of the thread that runs it
(:func:`..scheduler.run_block`'s frames). Were the batches run while others wait called from
the waiting batch's frames, a batch set aside could resume only after every batch set aside
after it. So each batch run while others wait runs on a thread of its own (a :class:`Turn`),
and the threads take turns: exactly one runs emulation at any time, the others wait on a
semaphore (no two ever run at once, so what they share needs no lock). The thread that
started the trace (the *owner*, :class:`Turns`) decides whose turn is next: it hands the turn
to a thread and waits until that thread ends its batch, raises, or waits again
(:meth:`Turn.pause`); then any batch set aside may go next, whatever the order they were set
aside in.

An error raised in a batch's thread is raised again by the owner. When the trace stops (an
error, an interrupt), every thread still alive unwinds (:class:`Abandoned`, raised where it
paused, or by the launch's budget check in one an interrupt cut short: ``halt``) and is
joined before the error goes on (:meth:`Turns.stop`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

#: how long the owner waits at a time for a thread an interrupt cut short (it looks again)
POLL_SECONDS = 0.05


class Abandoned(BaseException):
    """Raised in a batch's thread whose batch will never resume: the trace stopped."""


class Turn:
    """One batch's thread, and where it stands."""

    def __init__(self, body: Callable[[], None], name: str) -> None:
        self.go = threading.Semaphore(0)  # the owner hands it the turn
        self.back = threading.Semaphore(0)  # it hands the turn back
        self.state = "new"  # "running", "paused", "ended", "raised"
        self.error: BaseException | None = None
        self.verdict = False  # what its pause returns when it resumes
        self.abandon = False  # it unwinds instead (Abandoned)
        self.thread = threading.Thread(target=self._main, args=(body,), name=name, daemon=True)

    def _main(self, body: Callable[[], None]) -> None:
        self.go.acquire()
        try:
            if self.abandon:
                raise Abandoned
            body()
            self.state = "ended"
        except BaseException as exc:  # handed to the owner (Turns.resume)
            self.error, self.state = exc, "raised"
        finally:
            self.back.release()

    def pause(self) -> bool:
        """On its own thread: hand the turn back and wait for the next; the owner's verdict
        (whether what it waits on changed). Raises :class:`Abandoned` where the trace stopped."""
        self.state = "paused"
        self.back.release()
        self.go.acquire()
        if self.abandon:
            raise Abandoned
        return self.verdict


class Turns:
    """The threads of the batches that take turns, as the owner (the thread that made it)
    sees them."""

    def __init__(self) -> None:
        self.owner = threading.get_ident()
        self.current: Turn | None = None  # the thread that has the turn (None: the owner)
        self.alive: list[Turn] = []  # started and not joined
        self.started = 0

    def on_owner(self) -> bool:
        """Whether the caller is the owner's thread."""
        return threading.get_ident() == self.owner

    def start(self, body: Callable[[], None]) -> Turn:
        """Run ``body`` on a thread of its own until it ends or pauses (:meth:`resume`)."""
        self.started += 1
        turn = Turn(body, f"shmem-batch-{self.started}")
        self.alive.append(turn)
        turn.thread.start()
        self.resume(turn, True)
        return turn

    def resume(self, turn: Turn, verdict: bool) -> None:
        """Hand ``turn`` the turn (its pause returns ``verdict``) and wait until it hands it
        back; where it raised, its error is raised here (its thread joined)."""
        turn.verdict, turn.state = verdict, "running"
        self.current = turn
        turn.go.release()
        turn.back.acquire()
        self.current = None
        if turn.state != "paused":
            self._join(turn)
            if turn.error is not None:
                raise turn.error

    def stop(self, halt: Callable[[bool], None]) -> None:
        """The trace stops: a thread cut short while it had the turn (an interrupt) stops at
        its next budget check (``halt(True)`` tells the checks; ``halt(False)`` after), every
        paused one unwinds; each is joined, whatever it raised left unsaid."""
        running, self.current = self.current, None
        if running is not None and running.state == "running":
            halt(True)
            try:
                while running.state == "running":
                    _uninterrupted(lambda: running.back.acquire(timeout=POLL_SECONDS))
            finally:
                halt(False)
        for turn in list(self.alive):
            if turn.state in ("new", "paused"):
                turn.abandon = True
                turn.go.release()
            self._join(turn)

    def _join(self, turn: Turn) -> None:
        _uninterrupted(turn.thread.join)
        if turn in self.alive:
            self.alive.remove(turn)


def _uninterrupted(wait: Callable[[], object]) -> None:
    """``wait()``, again where an interrupt cut it short (the threads must be joined before
    the interrupt goes on; the one that has the turn stops within a budget check)."""
    while True:
        try:
            wait()
            return
        except KeyboardInterrupt:
            continue
