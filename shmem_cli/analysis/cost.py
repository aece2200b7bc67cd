"""The one door from a front end to a cost: a site's request batches in, a :class:`Cost` out.

A front end (the spec's iteration space, or the trace's records of one SASS
instruction) hands over its requests as :class:`RequestBatch` rows: each row is one
warp-level request, ``lanes`` byte addresses with the lanes that take part, the warp
it came from and its iteration (a loop iteration of a spec, the warp's n-th execution
of an instruction in a trace). A cp.async batch also carries its global side
(:class:`CopySource`). :func:`cost_requests` costs every batch (:func:`batch_stats`:
the engine's rule, or the measured cp.async rule of :mod:`shmem_cli.hardware.async_copy`),
sums them (:func:`stats_totals`, the one sum of engine answers), keeps the warp x
iteration heat map and the worst request, and explains the request shown wavefront by
wavefront. ``shmem analyze`` and ``shmem trace`` both report through it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ..hardware.arch import ArchProfile
from ..hardware.async_copy import async_copy_stats
from ..hardware.engine import B8, I64, AccessKind, RequestStats, explain_request, request_stats
from ..model import Cost, RequestRef, Totals, bank_conflicted
from ..plumbing.frozen import frozen

if TYPE_CHECKING:
    import numpy.typing as npt

HEAT_LIMIT = 1 << 22  # keep the per-request wavefront map up to 4M requests
PART = 1 << 16  # requests (and rows) costed and summed at once
_FIELDS = ("wavefronts", "ideal", "ways", "cycles", "phases", "source_extra", "source_ideal_extra")
#: (warp, iteration) -> the labelled place of a request, e.g. (("i", 3),) or (("occurrence", 2),)
Where: TypeAlias = Callable[[int, int], tuple[tuple[str, int], ...]]
#: integers of any width (a trace keeps its warps and occurrences as int32)
Ints: TypeAlias = "npt.NDArray[np.signedinteger[Any]]"
#: a heat map: (iterations, warps) cells
Map: TypeAlias = "npt.NDArray[np.int32]"


@frozen
class CopySource:
    """The global side of a cp.async batch: each lane's source address, which lanes read
    at least one source byte (``.ca``) or all of them (``.cg``), and whether it bypasses L1."""

    addr: I64
    copies: B8
    bypass: bool


@frozen
class RequestBatch:
    """Warp-level requests of one site, one per row, from any front end.

    With ``row``, the rows are the distinct requests and ``row[r]`` is request r's row
    (a grid's blocks repeat their requests: each distinct one is costed once); without,
    request r is row r."""

    addr: I64  # (rows, lanes) byte addresses
    active: B8  # (rows, lanes) the lanes that take part (ldmatrix/stmatrix: address lanes)
    warp: Ints  # (R,) the warp each request came from
    iteration: Ints  # (R,) its loop iteration, or the warp's occurrence of the instruction
    source: CopySource | None = None  # cp.async only (rows, lanes like addr)
    # a rule measured per instruction, not per lane (wgmma): each request's wavefronts
    wavefronts: I64 | None = None
    row: I64 | None = None  # (R,) each request's row of addr, active and source
    # with ``row``: the engine's answer for each row, where already asked (a trace costing
    # several ranges of one instruction's requests asks once, :func:`row_answers`)
    answers: RequestStats | None = None

    @property
    def requests(self) -> int:
        return len(self.warp)


def rows_stats(addr: I64, active: B8, kind: AccessKind, arch: ArchProfile) -> RequestStats:
    """The engine's answer for plain (R, lanes) requests: no global side, no measured rule
    (the door for callers that hold rows, not a site's batches: the sweep's deduplicated
    rows, a vector form's requests)."""
    return request_stats(addr, active, kind, arch)


def _row_stats(batch: RequestBatch, kind: AccessKind, arch: ArchProfile) -> RequestStats:
    """The engine's answer for each row of ``batch.addr``, :data:`PART` rows at a time (the
    engine's work arrays are a few times the rows it gets); those given, where given."""
    if batch.answers is not None and batch.row is not None:
        return batch.answers
    parts = []
    for start in range(0, max(len(batch.addr), 1), PART):
        at = slice(start, start + PART)
        if batch.source is not None:
            s = batch.source
            parts.append(
                async_copy_stats(
                    batch.addr[at],
                    s.addr[at],
                    batch.active[at],
                    s.copies[at],
                    kind.size,
                    s.bypass,
                    arch,
                )  # fmt: skip
            )
        else:
            parts.append(rows_stats(batch.addr[at], batch.active[at], kind, arch))
    if len(parts) == 1:
        return parts[0]
    return RequestStats(*(np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS))


def row_answers(batch: RequestBatch, kind: AccessKind, arch: ArchProfile) -> RequestStats | None:
    """The engine's answer for each distinct row of a batch with ``row`` (None for a batch
    without, or of a measured rule's requests), to hand to the batches of its parts
    (:attr:`RequestBatch.answers`): each row asked once however many parts it serves."""
    if batch.row is None or batch.wavefronts is not None:
        return None
    return _row_stats(batch, kind, arch)


def _per_request(stats: RequestStats, row: I64) -> RequestStats:
    return RequestStats(*(getattr(stats, f)[row] for f in _FIELDS))


def batch_stats(batch: RequestBatch, kind: AccessKind, arch: ArchProfile) -> RequestStats:
    """The engine's answer for every request of a batch (cp.async, wgmma: the measured rule),
    one entry per request (a batch with ``row``: each distinct row costed once)."""
    if batch.wavefronts is not None:
        c = batch.wavefronts
        ones, zeros = np.ones_like(c), np.zeros_like(c)
        return RequestStats(
            wavefronts=c,
            ideal=c,
            ways=ones,
            cycles=c,
            phases=c,
            source_extra=zeros,
            source_ideal_extra=zeros,
        )
    stats = _row_stats(batch, kind, arch)
    return stats if batch.row is None else _per_request(stats, batch.row)


def _parts(
    batch: RequestBatch, kind: AccessKind, arch: ArchProfile
) -> Iterator[tuple[RequestBatch, RequestStats]]:
    """The batch's requests, :data:`PART` at a time, each part with its answers: what is
    held at once stays bounded however many requests a site has (a batch with ``row``: its
    distinct rows costed once, for all the parts)."""
    n = batch.requests
    if n <= PART:
        yield batch, batch_stats(batch, kind, arch)
        return
    by_row = None
    if batch.wavefronts is None and batch.row is not None:
        by_row = _row_stats(batch, kind, arch)
    for start in range(0, n, PART):
        at = slice(start, start + PART)
        part = dataclasses.replace(
            batch,
            warp=batch.warp[at],
            iteration=batch.iteration[at],
            wavefronts=None if batch.wavefronts is None else batch.wavefronts[at],
            row=None if batch.row is None else batch.row[at],
        )
        if batch.row is None and batch.wavefronts is None:  # row r is request r
            source = batch.source
            if source is not None:
                source = dataclasses.replace(source, addr=source.addr[at], copies=source.copies[at])
            part = dataclasses.replace(
                part, addr=batch.addr[at], active=batch.active[at], source=source
            )
        if by_row is not None and part.row is not None:
            yield part, _per_request(by_row, part.row)
        else:
            yield part, batch_stats(part, kind, arch)


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
            conflicted_requests=int(bank_conflicted(stats.wavefronts, stats.phases).sum()),
            phases=int(stats.phases.sum()),
            source_extra=int(stats.source_extra.sum()),
            source_ideal_extra=int(stats.source_ideal_extra.sum()),
        )
    return Totals(
        requests=int(weight.sum()),
        wavefronts=int((stats.wavefronts * weight).sum()),
        ideal_wavefronts=int((stats.ideal * weight).sum()),
        max_ways=int(stats.ways.max()),
        cycles=int((stats.cycles * weight).sum()),
        conflicted_requests=int(weight[bank_conflicted(stats.wavefronts, stats.phases)].sum()),
        phases=int((stats.phases * weight).sum()),
        source_extra=int((stats.source_extra * weight).sum()),
        source_ideal_extra=int((stats.source_ideal_extra * weight).sum()),
    )


@frozen
class _Shown:
    """A request kept while the batches pass: its place, its numbers and its lanes."""

    warp: int
    iteration: int
    wavefronts: int
    ideal: int
    ways: int
    lanes: list[int | None] | None  # None: no lanes to explain (a measured rule's request)


def _keep(batch: RequestBatch, stats: RequestStats, row: int) -> _Shown:
    lanes = None
    if batch.wavefronts is None:
        at = row if batch.row is None else int(batch.row[row])
        pairs = zip(batch.addr[at], batch.active[at], strict=True)
        lanes = [int(a) if on else None for a, on in pairs]
    return _Shown(
        warp=int(batch.warp[row]),
        iteration=int(batch.iteration[row]),
        wavefronts=int(stats.wavefronts[row]),
        ideal=int(stats.ideal[row]),
        ways=int(stats.ways[row]),
        lanes=lanes,
    )


def _blank(iterations: int, warps: int) -> Map:
    """A heat map no request has reached yet (-1 in every cell)."""
    return np.full((iterations, warps), -1, dtype=np.int32)


def heat_bytes(warps: int, iterations: int) -> int:
    """The bytes of a heat map of ``warps`` x ``iterations`` and its phases' map."""
    return 2 * np.dtype(np.int32).itemsize * warps * iterations


def heat_maps(
    batch: RequestBatch, kind: AccessKind, arch: ArchProfile, *, warps: int, iterations: int
) -> tuple[Map, Map]:
    """The warp x iteration heat map of ``batch`` (each request's wavefronts at its
    iteration and warp, -1 where none) and its phases' map, as :func:`cost_requests` keeps
    them: for a caller that decides whether it wants a map once the totals are known (a
    trace keeps only a bank-conflicted instruction's)."""
    heat, phases = _blank(iterations, warps), _blank(iterations, warps)
    for part, stats in _parts(batch, kind, arch):
        heat[part.iteration, part.warp] = stats.wavefronts
        phases[part.iteration, part.warp] = stats.phases
    return heat, phases


def cost_requests(
    batches: Iterable[RequestBatch],
    kind: AccessKind,
    arch: ArchProfile,
    *,
    warps: int,
    iterations: int,
    where: Where,
    pick: tuple[int, int] | None = None,
    detail: bool = True,
    heat: bool = True,
    lane_accesses: int | None = None,
) -> Cost:
    """The cost of a site's requests.

    ``warps`` x ``iterations`` is the heat map's size (kept up to :data:`HEAT_LIMIT`
    requests, and only with ``heat``); the request shown is ``pick`` (warp, iteration)
    when given, else the first request with the most wavefronts, explained lane by lane
    with ``detail``. ``where`` labels the request shown; ``lane_accesses`` defaults to
    the active lanes counted.
    """
    keep_heat = heat and warps * iterations <= HEAT_LIMIT
    heat_map = _blank(iterations, warps) if keep_heat else None
    heat_phases = _blank(iterations, warps) if keep_heat else None
    total = Totals()
    lanes_seen = 0
    worst: _Shown | None = None
    chosen: _Shown | None = None
    for whole in batches:
        if not whole.requests:
            continue
        row_lanes = None if whole.row is None else np.count_nonzero(whole.active, axis=1)
        for batch, stats in _parts(whole, kind, arch):
            total += stats_totals(stats)
            if batch.row is None or row_lanes is None:
                lanes_seen += int(np.count_nonzero(batch.active))
            else:
                lanes_seen += int(row_lanes[batch.row].sum())
            if heat_map is not None and heat_phases is not None:
                heat_map[batch.iteration, batch.warp] = stats.wavefronts
                heat_phases[batch.iteration, batch.warp] = stats.phases
            k = int(np.argmax(stats.wavefronts))
            if worst is None or int(stats.wavefronts[k]) > worst.wavefronts:
                worst = _keep(batch, stats, k)
            if pick is not None and chosen is None:
                at = np.flatnonzero((batch.warp == pick[0]) & (batch.iteration == pick[1]))
                if len(at):
                    chosen = _keep(batch, stats, int(at[0]))
    shown = chosen if pick is not None else worst
    ref = explained = None
    if shown is not None:
        ref = RequestRef(
            warp=shown.warp,
            iteration=shown.iteration,
            loop_values=where(shown.warp, shown.iteration),
            wavefronts=shown.wavefronts,
            ideal=shown.ideal,
            ways=shown.ways,
        )
        if detail and shown.lanes is not None:
            explained = explain_request(shown.lanes, kind, arch)
    return Cost.of(
        total,
        op=kind.op,
        width=kind.size,
        lane_accesses=lanes_seen if lane_accesses is None else lane_accesses,
        warps=warps,
        iterations=iterations,
        shown=ref,
        detail=explained,
        heat=heat_map,
        heat_phases=heat_phases,
        max_wavefronts_per_request=worst.wavefronts if worst is not None else 0,
    )
