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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ..analysis.cost import CopySource, RequestBatch, batch_stats
from ..cuda.sass import Instruction
from ..hardware import ops
from ..hardware.arch import DEFAULT_ARCH, PROFILES, SM90, ArchProfile
from ..hardware.engine import AccessKind, RequestStats
from ..plumbing.frozen import frozen
from .distinct_rows import Allowance, DistinctRows, RecordsFull

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..model import Cost

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
    n: int = 0  # requests: warp executions with at least one active lane
    # warp executions with every lane predicated off (no request, but Nsight Compute's
    # per-instruction "Instructions Executed" counts them)
    predicated_off: int = 0
    distinct: DistinctRows = field(init=False)
    row: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    warp: I32 = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    iteration: I32 = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    data_dependent: B8 = field(default_factory=lambda: np.zeros(0, dtype=bool))
    not_modelled: B8 = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # wgmma only: each request's wavefronts (the measured rule), and what it reads, in words
    cost: I64 | None = None
    reads: str | None = None
    # taint bits (emulator state.py): of every request, and of the decisions on global data
    # that chose which lanes run it or how often, whether or not any ran it
    sources: int = 0
    decided: int = 0
    #: the bytes the trace's records may still take (shared by every instruction's)
    allowance: Allowance = field(default_factory=Allowance, repr=False)
    # the requests folded away when the records reached their bound (:meth:`Recorder.fold`):
    # their cost (totals and worst request; None: none folded), how many depended on data
    # and how many were not modelled, and whether they carried cp.async's global side
    folded: Cost | None = field(default=None, repr=False)
    folded_dependent: int = 0
    folded_inexact: int = 0
    folded_source: bool = False

    def clear(self) -> None:
        """Drop every request kept (after :meth:`Recorder.fold` costed them)."""
        self.n = 0
        self.distinct = DistinctRows(self.lanes, self.allowance)
        self.row = np.zeros(0, dtype=np.int64)
        self.warp = np.zeros(0, dtype=np.int32)
        self.iteration = np.zeros(0, dtype=np.int32)
        self.data_dependent = np.zeros(0, dtype=bool)
        self.not_modelled = np.zeros(0, dtype=bool)
        if self.cost is not None:
            self.cost = np.zeros(0, dtype=np.int64)

    def __post_init__(self) -> None:
        self.distinct = DistinctRows(self.lanes, self.allowance)

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
        self.row = _resize(self.row, new)
        self.warp = _resize(self.warp, new)
        self.iteration = _resize(self.iteration, new)
        self.data_dependent = _resize(self.data_dependent, new)
        self.not_modelled = _resize(self.not_modelled, new)
        if self.cost is not None:
            self.cost = _resize(self.cost, new)

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
    ) -> None:
        k = len(warp)
        self._grow(k)
        s = slice(self.n, self.n + k)
        self.row[s] = self.distinct.add(addr, active, src, src_bytes, period)
        self.warp[s] = warp
        self.iteration[s] = iteration
        self.data_dependent[s] = (taint & 1) != 0
        self.not_modelled[s] = (taint & 2) != 0
        if k:
            self.sources |= int(np.bitwise_or.reduce(taint))
        self.n += k

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


def _resize(a: Any, rows: int) -> Any:
    out = np.zeros((rows, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


def _or_rows(t: U8) -> U8:
    """The OR of each row's bytes (eight at a time where the rows allow)."""
    if t.shape[1] % 8 or not t.flags.c_contiguous:
        out: U8 = np.bitwise_or.reduce(t, axis=1)
        return out
    w = np.bitwise_or.reduce(t.view(np.uint64), axis=1)
    w = w | (w >> np.uint64(32))
    w = w | (w >> np.uint64(16))
    folded: U8 = ((w | (w >> np.uint64(8))) & np.uint64(0xFF)).astype(np.uint8)
    return folded


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


class Recorder:
    """Collects the requests of a block (or of every block of a grid)."""

    def __init__(
        self,
        warp_size: int = SM90.warp_size,
        limit: int | None = None,
        fold: Callable[[InstructionRecords], None] | None = None,
    ) -> None:
        """``limit``: the most bytes the records may take (:class:`RecordsFull` past it, raised
        before the allocation that would pass it, unless ``fold`` costs the requests kept so
        far: then they are folded into each instruction's sums and dropped, :meth:`fold`)."""
        self.warp_size = warp_size
        self.allowance = Allowance(limit)
        self.coster = fold
        self.folds = 0  # times the records were folded
        # False while a request's place in the records must stay (a grid traced by class:
        # a class's block's span of them is counted again for its class)
        self.foldable = True
        self.by_index: dict[int, InstructionRecords] = {}
        self._counts: dict[int, I64] = {}
        self.fills: dict[tuple[int, int, int, int], TmaFill] = {}
        # per thread of the running block: the taint of the decisions that made it run the
        # instruction being recorded (the emulator sets it around a step; None: none)
        self.control: U8 | None = None
        # the instructions that recorded requests whose address carries taint (the block
        # index, global data, a value not computed), with that taint: :mod:`.emulator.grid`
        self.tainted: dict[int, int] = {}
        self.requests = 0  # requests recorded
        self.period = 0  # rows after which the batch's requests may repeat (new_batch)

    def fill(self, ins: Instruction, start: int, nbytes: int, swizzle: int) -> None:
        """A TMA copy wrote ``nbytes`` of shared memory from ``start`` (the block's window),
        laid out with a ``swizzle``-byte mode (0: none); kept once per place."""
        key = (ins.pc, start, nbytes, swizzle)
        if key not in self.fills:
            self.fills[key] = TmaFill(ins.pc, start, nbytes, swizzle)

    def _new(self, index: int, ins: Instruction, kind: AccessKind) -> InstructionRecords:
        return InstructionRecords(index, ins, kind, self.warp_size, allowance=self.allowance)

    def new_batch(self, warps_per_cta: int = 0) -> None:
        """The next blocks run: each warp's occurrences are counted afresh (a warp belongs to
        one batch); ``warps_per_cta``: how many rows a request of every CTA's warps repeats
        after (:meth:`.distinct_rows.DistinctRows.add`)."""
        self._counts = {}
        self.period = warps_per_cta

    def record(
        self,
        index: int,
        ins: Instruction,
        kind: AccessKind,
        tids: npt.NDArray[np.intp],
        addr: I64,
        taint: U8 | int,
        warp_ids: I64,
        src: I64 | None = None,
        src_bytes: I64 | None = None,
    ) -> None:
        """One execution by the threads ``tids`` (sorted) with lane addresses ``addr``
        (cp.async also gives each thread's global source address and source byte count);
        ``warp_ids`` numbers the batch's warps in the grid."""
        if len(tids) == 0:
            return
        if self.control is not None:
            taint = np.asarray(taint, dtype=np.uint8) | self.control[tids]
        rec = self.by_index.get(index)
        if rec is None:
            rec = self.by_index[index] = self._new(index, ins, kind)
        ws = self.warp_size
        n = len(tids)
        taint_arr = np.asarray(taint, dtype=np.uint8)
        src_rows = byte_rows = None
        lead = tids[::ws]
        if n % ws == 0 and not (lead % ws).any() and (tids[ws - 1 :: ws] - lead == ws - 1).all():
            # whole warps, every lane: the rows are the addresses as they are
            uw = lead // ws
            rows = np.asarray(addr, dtype=np.int64).reshape(-1, ws)
            act = np.ones(rows.shape, dtype=bool)
            if taint_arr.ndim:
                t = _or_rows(np.broadcast_to(taint_arr, (n,)).reshape(-1, ws))
            else:
                t = np.full(len(uw), taint_arr, dtype=np.uint8)
            if src is not None and src_bytes is not None:
                src_rows = np.asarray(src, dtype=np.int64).reshape(-1, ws)
                byte_rows = np.asarray(src_bytes, dtype=np.int64).reshape(-1, ws)
        else:
            warps, lanes = np.divmod(tids, ws)  # tids are sorted: so are their warps
            new = np.empty(n, dtype=bool)
            new[0] = True
            np.not_equal(warps[1:], warps[:-1], out=new[1:])
            starts = np.flatnonzero(new)
            uw = warps[starts]
            row = np.cumsum(new) - 1
            rows = np.zeros((len(uw), ws), dtype=np.int64)
            act = np.zeros((len(uw), ws), dtype=bool)
            rows[row, lanes] = addr
            act[row, lanes] = True
            if taint_arr.ndim:
                t = np.bitwise_or.reduceat(np.broadcast_to(taint_arr, (n,)), starts)
            else:
                t = np.full(len(uw), taint_arr, dtype=np.uint8)
            if src is not None and src_bytes is not None:
                src_rows = np.zeros((len(uw), ws), dtype=np.int64)
                byte_rows = np.zeros((len(uw), ws), dtype=np.int64)
                src_rows[row, lanes] = src
                byte_rows[row, lanes] = src_bytes
        counts = self._counts.get(index)
        if counts is None:
            counts = self._counts[index] = np.zeros(len(warp_ids), dtype=np.int64)
        try:
            rec.add(rows, act, warp_ids[uw], counts[uw], t, src_rows, byte_rows, self.period)
        except RecordsFull:
            if not self.fold():
                raise
            rec.add(rows, act, warp_ids[uw], counts[uw], t, src_rows, byte_rows, self.period)
        counts[uw] += 1
        self.requests += len(uw)
        if t.any():
            self.tainted[index] = self.tainted.get(index, 0) | int(np.bitwise_or.reduce(t))

    def record_cost(
        self,
        index: int,
        ins: Instruction,
        kind: AccessKind,
        tids: npt.NDArray[np.intp],
        cost: list[int],
        warp_ids: I64,
    ) -> None:
        """One execution of a wgmma by the warpgroup ``tids``: one request per warp, costing
        ``cost[k]`` wavefronts for its k-th warp (no lane addresses: the engine is not used)."""
        rec = self.by_index.get(index)
        if rec is None:
            rec = self.by_index[index] = self._new(index, ins, kind)
        if rec.cost is None:
            self.allowance.take(8 * len(rec.warp))
            rec.cost = np.zeros(len(rec.warp), dtype=np.int64)
        start = rec.n
        uw = np.unique(tids // self.warp_size)
        self.record(index, ins, kind, tids, np.zeros(len(tids), dtype=np.int64), 0, warp_ids)
        assert rec.cost is not None
        rec.cost[start : start + len(uw)] = cost[: len(uw)]

    def note(self, index: int, text: str) -> None:
        """What an instruction reads, said once (the first execution's)."""
        rec = self.by_index.get(index)
        if rec is not None and rec.reads is None:
            rec.reads = text

    def _at(self, index: int, ins: Instruction, kind: AccessKind) -> InstructionRecords:
        rec = self.by_index.get(index)
        if rec is None:
            rec = self.by_index[index] = self._new(index, ins, kind)
        return rec

    def predicated_off(self, index: int, ins: Instruction, kind: AccessKind, warps: int) -> None:
        """``warps`` warps reached the instruction with every lane's guard false."""
        self._at(index, ins, kind).predicated_off += warps

    def decide(self, index: int, ins: Instruction, kind: AccessKind, taint: int) -> None:
        """Data of ``taint`` decided whether (or how often) lanes run the instruction: a
        tainted guard, or a tainted branch whose threads may reach it (maybe none did)."""
        self._at(index, ins, kind).decided |= taint

    def fold(self) -> bool:
        """Cost the requests kept so far (``fold``), add them to each instruction's folded
        sums and drop them, so that recording goes on within the bound; False where that
        may not be done (no coster, or the records' places must stay)."""
        if self.coster is None or not self.foldable:
            return False
        for rec in self.by_index.values():
            if rec.n:
                self.coster(rec)  # adds the cost of its requests to rec.folded
                rec.folded_dependent += int(np.count_nonzero(rec.data_dependent[: rec.n]))
                rec.folded_inexact += int(np.count_nonzero(rec.not_modelled[: rec.n]))
                rec.folded_source |= rec.distinct.src is not None
            rec.clear()
        self.allowance.free()  # every array dropped
        self.folds += 1
        return True

    def instructions(self) -> list[InstructionRecords]:
        """Records of every shared-memory instruction executed, in program order."""
        return [self.by_index[k] for k in sorted(self.by_index)]
