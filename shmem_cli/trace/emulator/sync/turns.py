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
joined before the error goes on (:meth:`Turns.stop`). A signal's handler runs in the owner
between any two of its bytecodes, so an interrupt may also cut short a hand-off, a thread's
start or a join: the stop hands every thread the turn to unwind, whatever it was told, and
a signal that comes while the threads are joined goes on once they all are
(tests/test_trace_turns.py).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

from ..trace_error import TraceError

#: the stack of a batch's thread. The emulator's frames run about 60 deep whatever the
#: kernel (its calls, loops and recursion are data, not Python frames): every test that sets
#: batches aside passes with 64 KiB. The platform's default (on Linux RLIMIT_STACK, 8 MiB)
#: took 512 MiB of address space for 64 batches set aside, against a memory limit (ulimit -v)
STACK_BYTES = 1 << 20
#: glibc's ``mallopt`` parameter that caps its memory arenas (M_ARENA_MAX)
_ARENA_MAX = -8


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
        if self.started == 1:
            _one_arena()
        size = _stack_size(STACK_BYTES)  # the process's, set for this start only
        try:
            turn.thread.start()
        except RuntimeError as exc:  # no memory for its stack, or no thread left
            self.alive.remove(turn)
            raise TraceError(
                f"a batch of blocks set aside on a wait runs on a thread of its own, and no "
                f"thread could be started ({exc}: a memory limit, ulimit -v, or a limit on "
                "processes, ulimit -u): raise the limit, or trace fewer blocks (--grid)"
            ) from exc
        finally:
            _stack_size(size)
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
            late = self._join(turn)
            if late is not None:
                raise late
            error, turn.error = turn.error, None  # (see _join)
            if error is not None:
                try:
                    raise error
                finally:  # this frame joins its traceback: no local may hold it
                    del error

    def stop(self, halt: Callable[[bool], None]) -> None:
        """The trace stops: every thread still alive unwinds and is joined, one at a time,
        the one that had the turn first. Each is handed the turn to unwind: one paused or
        not yet started at once, one an interrupt cut short while it ran at its next budget
        check (``halt(True)`` tells the checks; ``halt(False)`` after) or pause. So is one
        whose hand-off the interrupt cut short (marked running, never let go), and one whose
        start it cut short ends as soon as it starts, if ever. Whatever the threads raised
        is left unsaid; an interrupt or SIGTERM that comes meanwhile goes on once all are
        joined."""
        running, self.current = self.current, None
        late: BaseException | None = None
        halt(True)
        try:
            for turn in sorted(self.alive, key=lambda t: t is not running):
                turn.abandon = True
                turn.go.release()
                came = self._join(turn)
                late = late or came
        finally:
            halt(False)
        if late is not None:
            raise late

    def _join(self, turn: Turn) -> BaseException | None:
        """Join ``turn``'s thread (not one never started); an interrupt or SIGTERM that came
        meanwhile, for the caller to raise."""
        late = None if turn.thread.ident is None else _uninterrupted(turn.thread.join)
        if turn in self.alive:
            self.alive.remove(turn)
        # what it raised is the caller's to raise, not the turn's to keep: its traceback
        # holds the thread's frames, the turn's own among them (a cycle that kept the
        # batch's Block alive till the collector ran)
        if turn.state == "raised" and isinstance(turn.error, Abandoned):
            turn.error = None
        return late


def _uninterrupted(wait: Callable[[], object]) -> BaseException | None:
    """``wait()``, again where an interrupt or SIGTERM (shmem's handler raises SystemExit)
    cut it short: the threads must be joined before it goes on (the one that has the turn
    stops within a budget check). The first that came, for the caller to raise."""
    came: BaseException | None = None
    while True:
        try:
            wait()
            return came
        except (KeyboardInterrupt, SystemExit) as exc:
            came = came or exc


def _stack_size(size: int) -> int:
    """Set the stack size of the threads started next; the one it replaces (where the
    platform cannot set it, nothing changes: 0, its default)."""
    try:
        return threading.stack_size(size)
    except (RuntimeError, ValueError):
        return 0


def _one_arena() -> None:
    """Keep every thread's allocations in one of glibc's memory arenas. glibc gives each new
    thread an arena of its own (64 MiB of address space reserved each, up to 8 per core);
    batches that take turns never allocate at once, so one arena costs them nothing, where
    an arena each took 560 MB of address space for the 16 blocks of a relay (against a
    memory limit, ulimit -v, and 3x the time under one). The cap is the process's from then
    on (glibc cannot lift it): under Python's GIL its threads seldom allocate at once anyway.
    Elsewhere than glibc: nothing."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(_ARENA_MAX, 1)
    except (OSError, AttributeError):
        pass
