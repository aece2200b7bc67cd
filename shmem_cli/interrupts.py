"""How a command ends when it is interrupted or its output fails.

Every command runs inside :func:`guarded`:

* Ctrl-C (SIGINT) ends it with status 130 and SIGTERM with 143, the shell's
  128 + signal number, never 1 (which means "findings"). Both unwind the stack
  normally, so temporary files are removed and worker processes stopped on the
  way out.
* A :class:`~shmem_cli.errors.ShmemError` that reaches the top (an output file
  that cannot be written, standard output gone) is printed as
  ``path: error: message`` and ends the command with status 2.
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


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


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
    finally:
        if installed and previous is not None:
            signal.signal(signal.SIGTERM, previous)
