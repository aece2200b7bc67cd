"""How a command ends when it is interrupted or its output fails.

Every command runs inside :func:`guarded`:

* Ctrl-C (SIGINT) ends it with status 130 and SIGTERM with 143, the shell's
  128 + signal number, never 1 (which means "findings"). Both unwind the stack
  normally, so temporary files are removed and worker processes stopped on the
  way out.
* A :class:`~shmem_cli.plumbing.errors.ShmemError` that reaches the top (an output file
  that cannot be written, standard output gone) is printed as
  ``path: error: message`` and ends the command with status 2.
* A ``MemoryError`` (a memory limit below what shmem's bounds allow: ``ulimit -v``) is said
  in words and ends it with status 2, without a traceback.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from .errors import ShmemError

EXIT_USAGE = 2
EXIT_SIGINT = 128 + signal.SIGINT
EXIT_SIGTERM = 128 + signal.SIGTERM


class Terminated(SystemExit):
    """Raised in the main thread when SIGTERM arrives; exits with status 143."""

    def __init__(self) -> None:
        super().__init__(EXIT_SIGTERM)


_received: list[int] = []  # signals that arrived, in case their exception was swallowed


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise Terminated()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def _note(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)


@contextmanager
def deferred() -> Iterator[None]:
    """Within this block SIGTERM and SIGINT are only noted; :func:`raise_pending` raises
    them. For code that forks: an exception raised inside ``os.fork`` is lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old_term = signal.signal(signal.SIGTERM, _note)
    old_int = signal.signal(signal.SIGINT, _note)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)
    raise_pending()


def raise_pending() -> None:
    """Raise the exception of a signal noted so far (SIGTERM first)."""
    if signal.SIGTERM in _received:
        raise Terminated()
    if signal.SIGINT in _received:
        raise KeyboardInterrupt


def _say(message: str) -> None:
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error is gone too: the status still tells
        pass


@contextmanager
def guarded() -> Iterator[None]:
    """Run a command with the exit statuses and clean-up described in this module."""
    installed = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if installed else None
    previous_int = signal.signal(signal.SIGINT, _on_sigint) if installed else None
    _received.clear()
    try:
        yield
    except KeyboardInterrupt:
        _say("shmem: interrupted")
        sys.exit(EXIT_SIGINT)
    except Terminated:
        _say("shmem: terminated")
        raise
    except ShmemError as err:
        _say(err.render())
        sys.exit(EXIT_USAGE)
    except MemoryError:  # only under a memory limit below shmem's own bounds (ulimit -v)
        _say(
            "shmem: error: out of memory: the work was within shmem's bounds (about 1 GiB at "
            "most), but this process may use less (ulimit -v?): raise the limit, or ask for "
            "less (fewer blocks, shorter loops)"
        )
        sys.exit(EXIT_USAGE)
    finally:
        if installed and previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if installed and previous_int is not None:
            signal.signal(signal.SIGINT, previous_int)
