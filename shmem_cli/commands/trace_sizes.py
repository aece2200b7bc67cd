"""The launch sizes of ``shmem trace``: ``--block``, ``--grid`` and ``--cluster`` texts to
three sizes each, checked in one place (:func:`shmem_cli.cuda.launch_values.check_dims`),
a bad one a usage error (exit status 2) naming the option."""

from __future__ import annotations

from .common import fail_usage


def parse_cluster(text: str | None) -> tuple[int, int, int] | None:
    """``--cluster X[,Y[,Z]]``, checked (at most 16 CTAs), or None when not given."""
    if text is None:
        return None
    from ..cuda.launch_values import MAX_CLUSTER_CTAS, parse_dims
    from ..plumbing.errors import ShmemError

    try:
        return parse_dims(text, "--cluster", limit=MAX_CLUSTER_CTAS)
    except ShmemError as exc:
        fail_usage(exc.message)


def parse_launch_sizes(block: str, grid: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    from ..plumbing.errors import ShmemError
    from ..trace.kernel.launch import MAX_BLOCK_THREADS, MAX_GRID_BLOCKS, parse_dims

    try:
        return (
            parse_dims(block, "--block", limit=MAX_BLOCK_THREADS),
            parse_dims(grid, "--grid", limit=MAX_GRID_BLOCKS),
        )
    except ShmemError as exc:
        fail_usage(exc.message)
