"""Worker processes that never outlive the command that started them.

:func:`ordered_map` runs a function over chunks of work in a process pool and
yields the results in order. If anything stops the command on the way
(Ctrl-C, SIGTERM, an error), the workers are terminated and the pool is shut
down before the exception goes on: no worker keeps running, or keeps the output
pipe open, after the command has ended. Workers also ask the kernel to stop
them if the command dies without a chance to clean up (Linux only).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from .interrupts import deferred, raise_pending

T = TypeVar("T")
R = TypeVar("R")

_PR_SET_PDEATHSIG = 1
#: How long the parent waits for a result before it looks at signals again.
POLL_SECONDS = 0.2


def _worker_stop(signum: int, frame: object) -> None:
    """SIGTERM in a worker: end the tools it runs (nvcc and its children), then exit."""
    from .tool_process import end_all

    end_all()
    os._exit(128 + signum)


def _worker_start() -> None:
    """In each worker: SIGTERM ends it (and the tools it runs), SIGINT is left to the
    parent, and it dies with the parent (Linux)."""
    signal.signal(signal.SIGTERM, _worker_stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it stops us
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def ordered_map(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """``fn`` over ``items`` in ``workers`` processes (fork where available), in order."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_start)
    try:
        with deferred():  # signals are noted and raised below, never inside a fork
            futures = [pool.submit(fn, item) for item in items]
            results = []
            for future in futures:
                while True:
                    try:
                        results.append(future.result(timeout=POLL_SECONDS))
                        break
                    except TimeoutError:
                        raise_pending()
    except BaseException:
        stop(pool)
        raise
    pool.shutdown(wait=True)
    yield from results


#: how long :func:`stop` waits for a told worker to end before it kills it
WORKER_END_SECONDS = 10.0


def stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started, stop the workers and wait for them to end."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown forgets it
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    for process in processes:
        with contextlib.suppress(Exception):
            # a worker ends its tools first (``tool_process.end_all``: 2 s a tool at most);
            # on a loaded machine it may wait its turn for the CPU before it even starts,
            # and a worker killed before it has killed its tools' groups leaves their
            # children running (only its direct child dies with it)
            process.join(timeout=WORKER_END_SECONDS)
            if process.is_alive():  # still starting up, its handlers not yet the default
                process.kill()
                process.join(timeout=2)
    # the pool's manager thread closes its wake-up pipe when it sees the workers gone; at
    # exit Python wakes every such thread, and a pipe closed in between is written to (an
    # "Exception ignored ... Bad file descriptor" on standard error): let it finish here
    if manager is not None:
        with contextlib.suppress(Exception):
            manager.join(timeout=WORKER_END_SECONDS)
