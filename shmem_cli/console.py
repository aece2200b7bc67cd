"""The ``shmem`` console script: Ctrl-C while shmem starts ends it quietly.

Importing the command line (click, rich, the commands' modules) takes tens of milliseconds
before :func:`shmem_cli.plumbing.interrupts.guarded` installs the handlers every command
runs under. A SIGINT in that time raised ``KeyboardInterrupt`` inside an import and Python
printed its traceback. This module, which imports nothing of shmem's, installs a handler
first that ends the process with the same status and line a command gives (130,
``shmem: interrupted``); ``guarded`` takes over from it. What is left is the interpreter's
own start-up (``site``), before any of shmem's code runs.

The Python API does not come through here: importing :mod:`shmem_cli` changes no handler.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

EXIT_SIGINT = 128 + signal.SIGINT


def _interrupted_early(signum: int, frame: FrameType | None) -> None:
    try:
        sys.stderr.write("shmem: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error is gone: the status still tells
        pass
    raise SystemExit(EXIT_SIGINT)


def main() -> None:
    """Run the ``shmem`` command group, Ctrl-C handled from the first line."""
    signal.signal(signal.SIGINT, _interrupted_early)
    from .cli import main as command_group

    command_group()
