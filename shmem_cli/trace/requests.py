"""The shared-memory requests a traced block made, per SASS instruction, for the engine.

Every executed shared-memory instruction adds one row per warp that had at least one
active lane (its guard predicate true): the lane addresses (int64, offsets in the CTA's
shared window; inactive lanes hold 0; the profile's ``warp_size`` lanes), the active
mask, the warp index, the warp's occurrence count of that instruction (the iteration
axis of heat maps) and whether any active lane's address, or the decision that the lane
runs it, depends on global-memory data (or on a value the emulator could not compute).
A row repeated (by other blocks, other iterations) is kept once (:mod:`.distinct_rows`);
the arrays grow by doubling. An instruction also keeps the OR of the taint its requests
carried and of the decisions that chose whether to run it at all (``sources``,
``decided``: the emulator's taint bits, which name the buffers read).

Records that reach their bound are costed, summed and dropped (:meth:`InstructionRecords.fold`,
:mod:`.folds`); a grid traced by class counts what a class's block recorded again for the
other blocks of its class (:attr:`InstructionRecords.spans`). :class:`.recorder.Recorder`
collects a block's records and decides when.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ..analysis.cost import CopySource, RequestBatch, batch_stats
from ..cuda.sass import Instruction
from ..hardware import ops
from ..hardware.arch import DEFAULT_ARCH, PROFILES, SM90, ArchProfile
from ..hardware.engine import AccessKind, RequestStats
from ..plumbing.frozen import frozen
from .distinct_rows import Allowance, DistinctRows, every_lane, resize, taint_or
from .folds import Tally
from .rows_seen import RowsSeen, SeenBudget

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..model import Cost

#: the cost of requests [first, end) of an instruction's records for each range, as the
#: report costs them without a heat map, each request costed once for them all
#: (:func:`.aggregate.records_costs`)
Coster: TypeAlias = "Callable[[InstructionRecords, Sequence[tuple[int, int]]], list[Cost]]"

I64: TypeAlias = "npt.NDArray[np.int64]"
I32: TypeAlias = "npt.NDArray[np.int32]"
B8: TypeAlias = "npt.NDArray[np.bool_]"
U8: TypeAlias = "npt.NDArray[np.uint8]"


@dataclass
class InstructionRecords:
    """All requests of one SASS instruction: each distinct row once (:mod:`.distinct_rows`),
    and per request its row, warp, occurrence and flags."""

    index: int  # position in the function
    instruction: Instruction
    kind: AccessKind
    lanes: int = SM90.warp_size  # of the architecture traced
    n: int = field(init=False)  # requests: warp executions with at least one active lane
    # warp executions with every lane predicated off (no request, but Nsight Compute's
    # per-instruction "Instructions Executed" counts them)
    predicated_off: int = 0
    # the requests kept, set by :meth:`clear` (where the records start, and after each fold)
    distinct: DistinctRows = field(init=False)
    row: I64 = field(init=False)
    warp: I32 = field(init=False)
    iteration: I32 = field(init=False)
    data_dependent: B8 = field(init=False)
    not_modelled: B8 = field(init=False)
    # wgmma only: each request's wavefronts (the measured rule), and what it reads, in words
    cost: I64 | None = field(default=None, init=False)
    reads: str | None = None
    # taint bits (emulator state.py): of every request, and of the decisions on global data
    # that chose which lanes run it or how often, whether or not any ran it
    sources: int = 0
    decided: int = 0
    #: the bytes the trace's records may still take (shared by every instruction's)
    allowance: Allowance = field(default_factory=Allowance, repr=False)
    #: the bytes the memos of rows seen may still take (rows_seen; shared likewise)
    seen_budget: SeenBudget = field(default_factory=SeenBudget, repr=False)
    # the requests folded away when the records reached their bound (:meth:`Recorder.fold`),
    # and whether they carried cp.async's global side
    folded: Tally = field(default_factory=Tally, repr=False)
    folded_source: bool = False
    # a grid traced by class (:meth:`Recorder.open_class`): (first, end, times) of the kept
    # requests of a class's block, counted ``times`` more (the other blocks of its class);
    # those folded away, tallied ``times`` over; those of the class's block running now,
    # folded before its class is known; the warps predicated off counted again
    spans: list[tuple[int, int, int]] = field(init=False, repr=False)
    again: Tally = field(default_factory=Tally, repr=False)
    pending: Tally = field(default_factory=Tally, repr=False)
    # the same, where several classes' blocks run together: per block (its number)
    pending_by: dict[int, Tally] = field(default_factory=dict, repr=False)
    again_off: int = 0

    def __post_init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Drop every request kept (after :meth:`Recorder.fold` costed them): the one place
        that says what records holding none are (a wgmma's keep their cost array, empty)."""
        self.n = 0
        self.spans = []
        self.distinct = DistinctRows(self.lanes, self.allowance)
        self.seen = RowsSeen(self.seen_budget)
        self.row = np.zeros(0, dtype=np.int64)
        self.warp = np.zeros(0, dtype=np.int32)
        self.iteration = np.zeros(0, dtype=np.int32)
        self.data_dependent = np.zeros(0, dtype=bool)
        self.not_modelled = np.zeros(0, dtype=bool)
        if self.cost is not None:
            self.cost = np.zeros(0, dtype=np.int64)

    @property
    def addr(self) -> I64:
        """(n, lanes) lane addresses of every request (inactive lanes hold 0)."""
        return self.distinct.addr[self.row[: self.n]]

    @property
    def active(self) -> B8:
        return self.distinct.active[self.row[: self.n]]

    @property
    def src(self) -> I64 | None:
        """cp.async only: each lane's global source address, per request."""
        src = self.distinct.src
        return None if src is None else src[self.row[: self.n]]

    @property
    def src_bytes(self) -> I64 | None:
        """cp.async only: how many source bytes each lane reads, per request."""
        nbytes = self.distinct.nbytes
        return None if nbytes is None else nbytes[self.row[: self.n]]

    def _grow(self, extra: int) -> None:
        need = self.n + extra
        cap = len(self.warp)
        if need <= cap:
            return
        row_bytes = 8 + 4 + 4 + 1 + 1 + (8 if self.cost is not None else 0)
        new = self.allowance.capacity(cap, need, row_bytes)
        self.row = resize(self.row, new)
        self.warp = resize(self.warp, new)
        self.iteration = resize(self.iteration, new)
        self.data_dependent = resize(self.data_dependent, new)
        self.not_modelled = resize(self.not_modelled, new)
        if self.cost is not None:
            self.cost = resize(self.cost, new)

    def add(
        self,
        addr: I64,
        active: B8,
        warp: I64,
        iteration: I64,
        taint: U8,
        src: I64 | None = None,
        src_bytes: I64 | None = None,
        period: int = 0,
        cost: I64 | None = None,
    ) -> None:
        """Requests, one a row (:class:`RecordsFull` before anything changes where they do
        not fit); ``cost``: a wgmma's wavefronts, one a request. One request (a warp's) may
        give its warp, iteration and taint as ints."""
        k = len(addr)
        if cost is not None and self.cost is None:  # kept beside the others from now on
            self.allowance.take(8 * len(self.warp))
            self.cost = np.zeros(len(self.warp), dtype=np.int64)
        one = k == 1 and src is None  # a warp's one request: its row's number as is
        if one and cost is None and isinstance(taint, int):
            self.add_one(addr, active, warp, iteration, taint)  # a warp's (most steps)
            return
        self._grow(k)
        s = slice(self.n, self.n + k)
        if one:
            self.row[self.n] = self.distinct.add_row(addr, active)
        else:
            self.row[s] = self.distinct.add(addr, active, src, src_bytes, period)
        if cost is not None:
            assert self.cost is not None
            self.cost[s] = cost
        self.warp[s] = warp
        self.iteration[s] = iteration
        self.data_dependent[s] = (taint & 1) != 0
        self.not_modelled[s] = (taint & 2) != 0
        if k:
            self.sources |= taint_or(taint)
        self.n += k

    def add_one(
        self, addr: I64, active: B8, warp: Any, iteration: Any, taint: int, whole: bool = False
    ) -> None:
        """:meth:`add` of one row (addresses of (lanes,) or (1, lanes), active lanes of
        (1, lanes): ``whole``, :func:`.distinct_rows.every_lane`'s) whose warp, iteration and
        taint are numbers: each kept at its place (an item set costs a third of a slice's on
        a warp's step)."""
        n = self.n
        if n >= len(self.warp):
            self._grow(1)
        self.row[n] = self._row_of(addr, active, whole)
        self.warp[n] = warp
        self.iteration[n] = iteration
        self.data_dependent[n] = (taint & 1) != 0
        self.not_modelled[n] = (taint & 2) != 0
        self.sources |= taint
        self.n = n + 1

    def _row_of(self, addr: I64, active: B8, whole: bool) -> int:
        """The number of one row, a row of every lane on (``whole``, or :func:`every_lane`'s
        ``active``) found again by its bytes where it was seen before (:mod:`.rows_seen`)."""
        every = whole or active is every_lane(self.lanes)
        if not every or self.distinct.src is not None:
            return self.distinct.add_row(addr.reshape(1, -1), active)
        raw = addr.tobytes()
        number = self.seen.rows.get(raw)
        if number is None:
            row = addr.reshape(1, -1)
            number = self.distinct.add_row(row, active)
            if self.distinct.kept(row, active) == number:
                self.seen.keep(raw, number)
        return number

    def by_block(self, first: int, warps: int) -> I64:
        """Reorder the requests from ``first`` on by the block of their warp (``warps`` a
        block: the grid's warp numbers run block by block), each block's in the order they
        ran, as if the blocks had run one after the other; returns each one's block."""
        s = slice(first, self.n)
        blocks = self.warp[s].astype(np.int64) // warps
        order = np.argsort(blocks, kind="stable")
        for a in (self.row, self.warp, self.iteration, self.data_dependent, self.not_modelled):
            a[s] = a[s][order]
        if self.cost is not None:
            self.cost[s] = self.cost[s][order]
        return blocks[order]

    @property
    def recorded_bytes(self) -> int:
        """The memory these records hold (their arrays, spare room included)."""
        per_request = (self.row, self.warp, self.iteration, self.cost)
        return (
            self.distinct.nbytes_held
            + sum(a.nbytes for a in per_request if a is not None)
            + 2 * len(self.warp)
        )

    def rows(self, arch: ArchProfile | None = None) -> tuple[I64, B8]:
        """(R, lanes) addresses and active masks of the requests for the engine, in
        execution order (ldmatrix/stmatrix: only the lanes that give row addresses, as
        ``arch``'s profile says, the default profile's without one)."""
        active = self.active
        if self.kind.is_matrix:
            profile = arch if arch is not None else PROFILES[DEFAULT_ARCH]
            active = active & self.kind.address_lanes(profile)[None, :]
        return self.addr, active

    def batch(
        self,
        arch: ArchProfile,
        *,
        distinct: bool = False,
        span: tuple[int, int] | None = None,
    ) -> RequestBatch:
        """The requests as one batch for the cost door, with cp.async's global side; with
        ``distinct``, each distinct request once and every request's row (``row``), or
        only those of ``span`` (first, end: those of one block of a grid traced by class)."""
        rows = self.distinct
        u = rows.n
        s, n = (0, self.n) if span is None else (span[0], min(span[1], self.n))
        if distinct:
            addr, active, src, nbytes = rows.addr[:u], rows.active[:u], rows.src, rows.nbytes
            if src is not None and nbytes is not None:
                src, nbytes = src[:u], nbytes[:u]
            row: I64 | None = self.row[s:n]
        else:
            addr, active, src, nbytes, row = self.addr, self.active, self.src, self.src_bytes, None
            addr, active = addr[s:n], active[s:n]
            if src is not None and nbytes is not None:
                src, nbytes = src[s:n], nbytes[s:n]
        if self.kind.is_matrix:
            active = active & self.kind.address_lanes(arch)[None, :]
        warp = self.warp[s:n]  # views: no copy of every request's numbers
        occurrence = self.iteration[s:n]
        source = None
        op = ops.get(self.kind.op)
        if op.copy and src is not None and nbytes is not None:
            bypass = "BYPASS" in self.instruction.mods
            # .cg: a lane that zero-fills any part writes through the pipe; .ca: the global
            # side counts the lanes that read at least one source byte
            copies = nbytes == self.kind.size if bypass else nbytes > 0
            source = CopySource(src, copies, bypass)
        # wgmma: each request's wavefronts by the measured rule (no lane addresses)
        measured = self.cost[s:n] if not op.lane_addressed and self.cost is not None else None
        return RequestBatch(addr, active, warp, occurrence, source, measured, row)

    def stats(self, arch: ArchProfile) -> RequestStats:
        """Wavefronts of every request: the engine, or the measured cp.async rule."""
        return batch_stats(self.batch(arch, distinct=True), self.kind, arch)

    def flags(self, start: int, end: int) -> tuple[int, int]:
        """Of requests [start, end): how many depended on data, how many were not modelled."""
        dependent = int(np.count_nonzero(self.data_dependent[start:end]))
        return dependent, int(np.count_nonzero(self.not_modelled[start:end]))

    def fold(self, coster: Coster, running: int | None, warps: int = 0) -> None:
        """Cost the requests kept (``coster``) into :attr:`folded`, a class's block's
        into :attr:`again`, those of a class's block running from request ``running`` on
        into :attr:`pending` (with ``warps``, those of several blocks run together, ``warps``
        a block: each block's into :attr:`pending_by`), and drop them all."""
        n = self.n
        if n:
            spans = [(start, end) for start, end, _ in self.spans]
            late = [(running, n)] if running is not None and running < n else []
            owners: list[int] = []
            if late and warps:  # the blocks' requests one block after the other
                assert running is not None
                blocks = self.by_block(running, warps)
                owners, starts = (a.tolist() for a in np.unique(blocks, return_index=True))
                ends = [*starts[1:], len(blocks)]
                late = [(running + a, running + b) for a, b in zip(starts, ends, strict=True)]
            whole, *costs = coster(self, [(0, n), *spans, *late])  # each request costed once
            self.folded.add(whole, *self.flags(0, n))
            self.folded_source |= self.distinct.src is not None
            for (start, end, times), cost in zip(self.spans, costs[: len(spans)], strict=True):
                self.again.add(cost, *self.flags(start, end), times)
            for k, ((start, end), cost) in enumerate(zip(late, costs[len(spans) :], strict=True)):
                tally = self.pending_by.setdefault(owners[k], Tally()) if owners else self.pending
                tally.add(cost, *self.flags(start, end))
        self.clear()


@frozen
class TmaFill:
    """Shared memory a TMA copy wrote: where, how much, with which swizzle mode."""

    pc: int
    start: int  # byte offset in the block's shared window
    nbytes: int
    swizzle: int  # the tensor map's swizzle in bytes: 0 (none), 32, 64 or 128

    @property
    def end(self) -> int:
        return self.start + self.nbytes
