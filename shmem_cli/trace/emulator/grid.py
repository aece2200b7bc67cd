"""Which blocks of a launch run, and which run together.

A grid's blocks run in batches (:class:`Batch`): the CTAs of a batch are one
:class:`~.state.Block` whose threads the scheduler runs side by side, so that a grid costs
about its longest block's steps per batch, not one block's steps per block. Blocks are
numbered in launch order (``x`` fastest, then ``y``, then ``z``), the order of their warps
in the records; a batch holds consecutive blocks, at most ``batch_threads`` threads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .state import Launch

#: threads run together at most, by default (a batch's state is a few hundred bytes a thread)
BATCH_THREADS = 1 << 16


@dataclass(frozen=True)
class Batch:
    """Consecutive blocks run together: their indices and their numbers in launch order."""

    ctas: tuple[tuple[int, int, int], ...]
    linear: tuple[int, ...]


@dataclass(frozen=True)
class Plan:
    """The blocks of a launch that run, in batches."""

    launch: Launch
    grid: bool  # every block of the grid (else only launch.block_idx)
    per_batch: int  # blocks in each batch (the last may hold fewer)

    @property
    def blocks(self) -> int:
        """Blocks that run."""
        gx, gy, gz = self.launch.grid
        return gx * gy * gz if self.grid else 1

    def batches(self) -> Iterator[Batch]:
        if not self.grid:
            yield Batch((self.launch.block_idx,), (0,))
            return
        gx, gy, _ = self.launch.grid
        for start in range(0, self.blocks, self.per_batch):
            linear = tuple(range(start, min(start + self.per_batch, self.blocks)))
            ctas = tuple((k % gx, (k // gx) % gy, k // (gx * gy)) for k in linear)
            yield Batch(ctas, linear)


def plan(launch: Launch, *, grid: bool, batch_threads: int | None = None) -> Plan:
    """The batches of a launch: every block of its grid (``grid``) or its one block."""
    most = BATCH_THREADS if batch_threads is None else batch_threads
    per_batch = max(1, most // max(1, launch.threads))
    return Plan(launch, grid, per_batch)
