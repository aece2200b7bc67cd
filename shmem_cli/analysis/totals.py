"""Request totals of a spec's access: the loop over its requests, with deduplication.

:func:`scan_access` totals every request of an access (chunk by chunk through its
:class:`~shmem_cli.spec.space.Space`), sending requests that repeat (up to a shift of
every address by whole bank rows) to the engine once (:func:`request_totals`); this is
``shmem sweep``'s fast path. The sum of engine answers is :func:`~.cost.stats_totals`,
and ``shmem analyze``'s loop, with heat map and worst request, is
:func:`~.cost.cost_requests` (:func:`space_batches` turns a space into its batches).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from ..hardware.arch import ArchProfile
from ..hardware.engine import AccessKind
from ..model import Totals
from ..spec.space import Space
from .cost import RequestBatch, rows_stats, stats_totals

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

__all__ = ["distinct_rows", "request_totals", "scan_access", "space_batches", "stats_totals"]


def space_batches(space: Space) -> Iterator[RequestBatch]:
    """The requests of ``space``, chunk by chunk: each (loop iteration, warp) with an active
    lane, labelled with its warp and iteration."""
    warps = space.warps
    for batch in space.batches():
        has = batch.active.any(axis=1)
        if bool(has.all()):
            addr, active = batch.addr, batch.active
            rows = np.arange(len(addr), dtype=np.int64)
        else:
            addr, active = batch.addr[has], batch.active[has]
            rows = np.nonzero(has)[0].astype(np.int64)
        if len(addr):
            yield RequestBatch(addr, active, rows % warps, batch.first_iteration + rows // warps)


def scan_access(space: Space, kind: AccessKind) -> Totals:
    """Totals of every request of ``space``: each (loop iteration, warp) with an active lane.

    Requests that repeat (up to a shift of all addresses by whole bank rows) go to the
    engine once (:func:`request_totals`).
    """
    arch = space.spec.arch
    total = Totals()
    for batch in space.batches():
        total += request_totals(batch.addr, batch.active, kind, arch)
    return total


def _odd_multipliers(count: int) -> I64:
    """``count`` odd 62-bit multipliers from a splitmix64 sequence (fixed, no numpy.random:
    importing it costs several milliseconds of every run's start-up)."""
    state, out = 20240601, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & (1 << 64) - 1
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (1 << 64) - 1
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (1 << 64) - 1
        out.append(((z ^ (z >> 31)) >> 2) | 1)
    return np.array(out, dtype=np.int64)


#: the most address columns one grouping hashes
_HASH_COLUMNS = 9


@lru_cache(maxsize=4)
def _hash(lanes: int) -> I64:
    """The multipliers of each column's lanes, (columns, lanes), for rows of ``lanes``."""
    return _odd_multipliers(_HASH_COLUMNS * lanes).reshape(_HASH_COLUMNS, lanes)


def distinct_rows(columns: Sequence[I64]) -> tuple[I64, I64]:
    """Rows equal in every column, grouped: (index of each group's first row, group of every row).

    Rows are hashed, then checked against their group's first row, so the grouping is exact;
    with a hash collision (or too many columns) every row is its own group.
    """
    rows = len(columns[0])
    lanes = columns[0].shape[1]
    if len(columns) > _HASH_COLUMNS or rows < 2 or any(c.shape[1] != lanes for c in columns):
        return np.arange(rows), np.arange(rows)
    multipliers = _hash(lanes)
    key = columns[0] @ multipliers[0]
    for c, h in zip(columns[1:], multipliers[1:], strict=False):
        key = key + c @ h
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    for c in columns:
        if not np.array_equal(c[first][group], c):
            return np.arange(rows), np.arange(rows)
    return first, group


def request_totals(
    addr: I64, active: B8, kind: AccessKind, arch: ArchProfile, count: I64 | None = None
) -> Totals:
    """Totals of rows of ``warp_size`` lanes, each row once through the engine.

    Row r stands for ``count[r]`` requests (1 without ``count``); rows without an
    active lane are no request. Rows equal up to a shift of every address by a
    multiple of banks x bank bytes get the same engine answer, so each is computed once.
    """
    has = active.any(axis=1)
    if count is None:
        count = np.ones(len(addr), dtype=np.int64)
    if not has.all():
        addr, active, count = addr[has], active[has], count[has]
    if not len(addr):
        return Totals()
    span = arch.banks * arch.bank_bytes
    if active.all():
        low = addr.min(axis=1)
        norm = addr - (low - low % span)[:, None]
    else:
        low = np.where(active, addr, np.iinfo(np.int64).max).min(axis=1)
        norm = np.where(active, addr - (low - low % span)[:, None], -1)
    first, group = distinct_rows([norm])
    reps = norm[first]
    stats = rows_stats(np.maximum(reps, 0), reps >= 0, kind, arch)
    weight = np.bincount(group, weights=count, minlength=len(reps)).astype(np.int64)
    return stats_totals(stats, weight)
