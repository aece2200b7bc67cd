"""The launch sizes of ``shmem trace``: ``--block``, ``--grid`` and ``--cluster`` texts to
three sizes each, checked in one place (:func:`shmem_cli.cuda.launch.values.check_dims`),
a bad one a usage error (exit status 2) naming the option; and byte counts
(``--buffer-size``, ``--dynamic-smem``) with an optional binary unit (:class:`ByteCount`)."""

from __future__ import annotations

import re
from typing import Any

import click

from .common import fail_usage

#: a byte count's units: powers of 1024 (K and KiB alike), in any case
_UNITS = {"": 0, "k": 1, "m": 2, "g": 3}
_BYTE_COUNT = re.compile(r"([0-9]+)\s*([kmg]?)(?:i?b)?", re.IGNORECASE)


class ByteCount(click.types.IntParamType):
    """A byte count: digits, optionally followed by K, M or G (KiB, MiB, GiB: powers of
    1024), within [``low``, ``high``]."""

    name = "bytes"

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            n = value
        else:
            m = _BYTE_COUNT.fullmatch(str(value).strip())
            if m is None:
                self.fail(
                    f"{str(value)[:40]!r} is not a byte count: give a number of bytes, or one "
                    "with a unit of 1024s (8388608, 8M, 8MiB, 48K)",
                    param,
                    ctx,
                )
            digits = m.group(1).lstrip("0") or "0"
            # (more than 30 digits pass any bound: not made into an int)
            n = self.high + 1 if len(digits) > 30 else int(digits)
            n <<= 10 * _UNITS[m.group(2).lower()]
        if not self.low <= n <= self.high:
            shown = str(value) if len(str(value)) <= 40 else f"{str(value)[:37]}..."
            said = f"{shown} is not in the range {self.low:,} to {self.high:,} bytes"
            self.fail(said, param, ctx)
        return n


def parse_cluster(text: str | None) -> tuple[int, int, int] | None:
    """``--cluster X[,Y[,Z]]``, checked (at most 16 CTAs), or None when not given."""
    if text is None:
        return None
    from ..cuda.launch.values import MAX_CLUSTER_CTAS, parse_dims
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
