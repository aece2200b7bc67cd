"""Request totals: the engine's per-request answers summed, for analyze and sweep alike.

:func:`scan_access` is the one loop over an access's requests (chunk by chunk
through its :class:`~shmem_cli.spec.space.Space`); :func:`stats_totals` the one place
per-request numbers become :class:`~shmem_cli.model.Totals`. ``shmem analyze``
passes a ``visit`` callback to see each chunk's numbers (heat map, worst request);
``shmem sweep`` also sums requests it has deduplicated itself
(:func:`request_totals`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from ..hardware.arch import ArchProfile
from ..hardware.engine import AccessKind, RequestStats, request_stats
from ..model import Totals
from ..spec.space import Batch, Space

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"
#: called with a chunk, the rows of it that are requests, and their engine answers
Visit: TypeAlias = Callable[[Batch, I64, RequestStats], None]


def stats_totals(stats: RequestStats, weight: I64 | None = None) -> Totals:
    """The totals of a batch of requests; row r stands for ``weight[r]`` requests (default 1)."""
    if not len(stats.wavefronts):
        return Totals()
    if weight is None:
        return Totals(
            requests=len(stats.wavefronts),
            wavefronts=int(stats.wavefronts.sum()),
            ideal_wavefronts=int(stats.ideal.sum()),
            max_ways=int(stats.ways.max()),
            cycles=int(stats.cycles.sum()),
            conflicted_requests=int((stats.wavefronts > stats.ideal).sum()),
        )
    return Totals(
        requests=int(weight.sum()),
        wavefronts=int((stats.wavefronts * weight).sum()),
        ideal_wavefronts=int((stats.ideal * weight).sum()),
        max_ways=int(stats.ways.max()),
        cycles=int((stats.cycles * weight).sum()),
        conflicted_requests=int(weight[stats.wavefronts > stats.ideal].sum()),
    )


def scan_access(space: Space, kind: AccessKind, visit: Visit | None = None) -> Totals:
    """Totals of every request of ``space``: each (loop iteration, warp) with an active lane.

    Without ``visit``, requests that repeat (up to a shift of all addresses by whole
    bank rows) go to the engine once (:func:`request_totals`).
    """
    arch = space.spec.arch
    total = Totals()
    for batch in space.batches():
        if visit is None:
            total += request_totals(batch.addr, batch.active, kind, arch)
            continue
        has = batch.active.any(axis=1)
        if bool(has.all()):
            addr, active = batch.addr, batch.active
        else:
            addr, active = batch.addr[has], batch.active[has]
        if not len(addr):
            continue
        stats = request_stats(addr, active, kind, arch)
        total += stats_totals(stats)
        visit(batch, np.nonzero(has)[0], stats)
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
    stats = request_stats(np.maximum(reps, 0), reps >= 0, kind, arch)
    weight = np.bincount(group, weights=count, minlength=len(reps)).astype(np.int64)
    return stats_totals(stats, weight)
