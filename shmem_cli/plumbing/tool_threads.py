"""Several of NVIDIA's tools at once, in threads, that all end the moment the command does.

:func:`map_tools` runs a function (one that starts tools through
:func:`~shmem_cli.plumbing.tool_process.run_tool`, such as a compile) over items in a few
threads and returns the results in order. If anything stops the command while they run
(Ctrl-C, SIGTERM, an error), nothing more is started, every tool running is killed with its
process group and its private folder removed, and the threads, which return as soon as their
tool is gone, are waited for before the exception goes on: Ctrl-C during a compiled sweep
ends it at once instead of after the compiles in flight (up to nvcc's time limit each).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from .tool_process import POLL_SECONDS, end_all

T = TypeVar("T")
R = TypeVar("R")

#: how long the threads are given to return once their tools are killed
STOP_SECONDS = 10.0


class Stopped(Exception):
    """An item not started because the command is ending."""


def map_tools(fn: Callable[[T], R], items: Iterable[T], workers: int) -> list[R]:
    """``fn`` over ``items`` in ``workers`` threads, in order (see the module docstring)."""
    stop = threading.Event()

    def guarded(item: T) -> R:
        if stop.is_set():
            raise Stopped
        return fn(item)

    pool = ThreadPoolExecutor(max_workers=workers)
    futures: list[Future[R]] = []
    try:
        futures = [pool.submit(guarded, item) for item in items]
        results = [f.result() for f in futures]
    except BaseException:
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        _end(futures)
        raise
    pool.shutdown(wait=True)
    return results


def _end(futures: list[Future[R]]) -> None:
    """Kill the tools the threads run until every thread has returned (a tool started after
    a first kill is caught by the next)."""
    deadline = time.monotonic() + STOP_SECONDS
    while not all(f.done() for f in futures) and time.monotonic() < deadline:
        end_all()
        time.sleep(POLL_SECONDS)
    end_all()
