"""The recorder a traced block's shared-memory instructions report to: :class:`Recorder`.

It keeps one :class:`~.requests.InstructionRecords` per instruction that ran, counts each
warp's occurrences batch by batch, and notes what TMA copies wrote (:class:`.requests.TmaFill`),
what an instruction read, the warps that reached it with every lane off and the taint of
the decisions that ran it. Records that reach their bound are costed, summed and dropped
(:meth:`Recorder.fold`); a grid traced by class counts what a class's block recorded again
for the other blocks of its class (:meth:`Recorder.open_class`, :meth:`Recorder.close_class`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..cuda.sass import Instruction
from ..hardware.arch import SM90
from ..hardware.engine import AccessKind
from .distinct_rows import Allowance, RecordsFull, every_lane, taint_or, warp_rows
from .emulator.trace_error import TraceError
from .folds import Tally
from .requests import I64, U8, Coster, InstructionRecords, TmaFill
from .rows_seen import SeenBudget

if TYPE_CHECKING:
    import numpy.typing as npt

#: distinct shared-memory instructions a launch records: each is a row of the report, costed
#: on its own (about 0.5 ms each: 100,000 in a straight line took 57 s to the report and
#: 1.07 GB; real kernels have a few thousand)
MAX_SITES = 32_768
#: the records as they were (:meth:`Recorder.mark`): requests, folds, and per instruction its
#: requests, warps predicated off, taint bits and spans
Mark = tuple[int, int, dict[int, tuple[int, int, int, int, int]]]


class Recorder:
    """Collects the requests of a block (or of every block of a grid)."""

    def __init__(
        self,
        warp_size: int = SM90.warp_size,
        limit: int | None = None,
        fold: Coster | None = None,
    ) -> None:
        """``limit``: the most bytes the records may take (:class:`RecordsFull` past it, raised
        before the allocation that would pass it, unless ``fold`` costs the requests kept so
        far: then they are folded into each instruction's sums and dropped, :meth:`fold`)."""
        self.warp_size = warp_size
        self.allowance = Allowance(limit)
        self.seen = SeenBudget()  # the memos of rows seen (rows_seen), apart from the bound
        self.coster = fold
        self.folds = 0  # times the records were folded
        # a class's block running (:meth:`open_class`): per instruction index, its first
        # request and the warps predicated off before it (None: no class open)
        self.opened: dict[int, tuple[int, int]] | None = None
        self.apart = 0  # several classes' blocks run together: the warps of a block
        self.by_index: dict[int, InstructionRecords] = {}
        self._counts: dict[int, I64] = {}
        self.fills: dict[tuple[int, int, int, int], TmaFill] = {}
        # per thread of the running block: the taint of the decisions that made it run the
        # instruction being recorded (the emulator sets it around a step; None: none)
        self.control: U8 | None = None
        # the instructions that recorded requests whose address carries taint (the block
        # index, global data, a value not computed), with that taint: :mod:`.emulator.grid`
        self.tainted: dict[int, int] = {}
        self.tainted_by: dict[int, dict[int, int]] = {}  # the same per block (open_class)
        # the instructions whose lanes on another CTA's memory had an address with taint,
        # with it, for the report (kept for the whole run: :meth:`address_taint`)
        self.remote: dict[int, int] = {}
        self.requests = 0  # requests recorded
        self.period = 0  # rows after which the batch's requests may repeat (new_batch)

    def fill(self, ins: Instruction, start: int, nbytes: int, swizzle: int) -> None:
        """A TMA copy wrote ``nbytes`` of shared memory from ``start`` (the block's window),
        laid out with a ``swizzle``-byte mode (0: none); kept once per place."""
        key = (ins.pc, start, nbytes, swizzle)
        if key not in self.fills:
            self.fills[key] = TmaFill(ins.pc, start, nbytes, swizzle)

    def _new(self, index: int, ins: Instruction, kind: AccessKind) -> InstructionRecords:
        return InstructionRecords(
            index, ins, kind, self.warp_size, allowance=self.allowance, seen_budget=self.seen
        )

    def new_batch(self, warps_per_cta: int = 0) -> None:
        """The next blocks run: each warp's occurrences are counted afresh (a warp belongs to
        one batch); ``warps_per_cta``: how many rows a request of every CTA's warps repeats
        after (:meth:`.distinct_rows.DistinctRows.add`)."""
        self._counts = {}
        self.period = warps_per_cta

    def held(self) -> tuple[dict[int, I64], int]:
        """What :meth:`new_batch` resets: kept for a batch set aside while others run."""
        return self._counts, self.period

    def hold_back(self, held: tuple[dict[int, I64], int]) -> None:
        """The batch set aside runs again: its counts as they were (:meth:`held`)."""
        self._counts, self.period = held

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
        costs: list[int] | None = None,
    ) -> None:
        """One execution by the threads ``tids`` (sorted) with lane addresses ``addr``
        (cp.async also gives each thread's global source address and source byte count;
        a wgmma each warp's wavefronts, ``costs``); ``warp_ids`` numbers the batch's warps
        in the grid."""
        if len(tids) == 0:
            return
        if self.control is not None:
            taint = np.asarray(taint, dtype=np.uint8) | self.control[tids]
        rec = self.by_index.get(index)
        if rec is None:
            rec = self._at(index, ins, kind)
        ws = self.warp_size
        if src is None and costs is None and len(tids) == ws:
            w = int(tids[0]) // ws
            if int(tids[-1]) == w * ws + ws - 1:  # sorted, distinct: every lane of warp w
                self._whole_warp(rec, index, w, addr, taint, warp_ids)
                return
        uw, rows, act, t, src_rows, byte_rows = warp_rows(
            tids, self.warp_size, addr, np.asarray(taint, dtype=np.uint8), src, src_bytes
        )
        counts = self._counts.get(index)
        if counts is None:
            counts = self._counts[index] = np.zeros(len(warp_ids), dtype=np.int64)
        more = (rows, act, warp_ids[uw], counts[uw], t, src_rows, byte_rows, self.period)
        cost = None if costs is None else np.asarray(costs[: len(rows)], dtype=np.int64)
        try:
            rec.add(*more, cost)
        except RecordsFull:
            if not self.fold():
                raise
            rec.add(*more, cost)  # into the whole bound, freed
        counts[uw] += 1
        self.requests += len(rows)
        if t if isinstance(t, int) else np.count_nonzero(t):  # (one warp's: an int)
            self._note_taint(index, warp_ids[uw], t)

    def record_warp(
        self, index: int, ins: Instruction, kind: AccessKind, addr: I64, taint: U8 | int,
        warp_ids: I64,
    ) -> None:  # fmt: skip
        """:meth:`record` of every lane of a batch of one warp (no control taint: a whole
        step's, :mod:`.emulator.whole`), without its checks."""
        rec = self.by_index.get(index)
        if rec is None:
            rec = self._at(index, ins, kind)
        self._whole_warp(rec, index, 0, addr, taint, warp_ids)

    def _whole_warp(
        self, rec: InstructionRecords, index: int, w: int, addr: I64, taint: U8 | int,
        warp_ids: I64,
    ) -> None:  # fmt: skip
        """:meth:`record` of every lane of the batch's warp ``w`` (most steps): its row is
        the lane addresses, kept without :func:`.distinct_rows.warp_rows`' general path."""
        counts = self._counts.get(index)
        if counts is None:
            counts = self._counts[index] = np.zeros(len(warp_ids), dtype=np.int64)
        row, every = np.asarray(addr, dtype=np.int64), every_lane(self.warp_size)
        t, warp = taint_or(taint), warp_ids[w]
        try:
            rec.add_one(row, every, warp, counts[w], t, whole=True)
        except RecordsFull:
            if not self.fold():
                raise
            rec.add_one(row, every, warp, counts[w], t, whole=True)  # into the bound, freed
        counts[w] += 1
        self.requests += 1
        if t:
            self._note_taint(index, warp, t)

    def address_taint(
        self, index: int, tids: npt.NDArray[np.intp], taint: U8 | int, warp_ids: I64
    ) -> None:
        """Lanes ``tids`` of instruction ``index`` reached another CTA's shared memory (no
        request is recorded: :meth:`.emulator.state.Block.listed`) with address taint
        ``taint``: kept in :attr:`tainted` as a request's, so that the watch over a class's
        block sees an address that depends on data or on the block index."""
        t = np.broadcast_to(np.asarray(taint, dtype=np.uint8), np.shape(tids))
        if self.control is not None:
            t = t | self.control[tids]
        if not np.count_nonzero(t):
            return
        self.remote[index] = self.remote.get(index, 0) | taint_or(t)
        self._note_taint(index, warp_ids[np.asarray(tids) // self.warp_size], t)

    def _note_taint(self, index: int, warps: I64, taint: U8 | int) -> None:
        """Instruction ``index`` had an address with ``taint`` in ``warps`` (the grid's
        numbers, one a request or lane): :attr:`tainted`, and per block where several
        classes' blocks run together (:attr:`tainted_by`)."""
        self.tainted[index] = self.tainted.get(index, 0) | taint_or(taint)
        if self.apart:
            self._tainted_by(index, warps, taint)

    def _tainted_by(self, index: int, warps: I64, taint: U8 | int) -> None:
        """Keep :attr:`tainted` per block too (:attr:`tainted_by`): requests of ``warps``
        (the grid's numbers, one a request) with address taint ``taint``."""
        t = np.broadcast_to(np.asarray(taint, dtype=np.uint8), (len(warps),))
        blocks = np.asarray(warps)[t != 0] // self.apart
        for b in np.unique(blocks).tolist():
            mine = self.tainted_by.setdefault(b, {})
            mine[index] = mine.get(index, 0) | taint_or(t[t != 0][blocks == b])

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
        zeros = np.zeros(len(tids), dtype=np.int64)
        self.record(index, ins, kind, tids, zeros, 0, warp_ids, costs=cost)

    def note(self, index: int, text: str) -> None:
        """What an instruction reads, said once (the first execution's)."""
        rec = self.by_index.get(index)
        if rec is not None and rec.reads is None:
            rec.reads = text

    def _at(self, index: int, ins: Instruction, kind: AccessKind) -> InstructionRecords:
        rec = self.by_index.get(index)
        if rec is None:
            if len(self.by_index) >= MAX_SITES:
                raise TraceError(
                    f"the kernel ran more than {MAX_SITES:,} distinct shared-memory "
                    "instructions; a trace reports at most that many, each costed on its own: "
                    "trace a build with fewer of them (less unrolling)",
                    ins,
                )
            rec = self.by_index[index] = self._new(index, ins, kind)
        return rec

    def predicated_off(self, index: int, ins: Instruction, kind: AccessKind, warps: int) -> None:
        """``warps`` warps reached the instruction with every lane's guard false."""
        self._at(index, ins, kind).predicated_off += warps

    def decide(self, index: int, ins: Instruction, kind: AccessKind, taint: int) -> None:
        """Data of ``taint`` decided whether (or how often) lanes run the instruction: a
        tainted guard, or a tainted branch whose threads may reach it (maybe none did)."""
        self._at(index, ins, kind).decided |= taint

    @property
    def can_fold(self) -> bool:
        """Whether records that reach their bound are folded (:meth:`fold`), so that the
        requests a trace makes bound nothing: the one rule, for the recorder and for a grid
        deciding whether to sample its blocks (:func:`.emulator.alike.rest.run_rest`)."""
        return self.coster is not None

    def fold(self) -> bool:
        """Cost the requests kept so far (``fold``), add them to each instruction's sums
        (:meth:`InstructionRecords.fold`) and drop them, so that recording goes on within
        the bound; False where that cannot be done (no coster)."""
        if self.coster is None:
            return False
        opened = self.opened
        for index, rec in self.by_index.items():
            running = None if opened is None else opened.get(index, (0, 0))[0]
            rec.fold(self.coster, running, self.apart)
        if opened is not None:  # the running block's requests start again at 0
            self.opened = {index: (0, off) for index, (_, off) in opened.items()}
        self.allowance.free()  # every array dropped
        self.seen.free()  # and every memo of rows seen
        self.folds += 1
        return True

    def open_class(self, apart: int = 0) -> None:
        """A class's block runs next (``apart``: several, each of ``apart`` warps): its
        requests and warps predicated off are counted again for its class (:meth:`close_class`,
        :meth:`close_classes`), whatever folds meanwhile."""
        self.opened = {i: (rec.n, rec.predicated_off) for i, rec in self.by_index.items()}
        self.apart, self.tainted_by = apart, {}

    def close_class(self, times: int) -> None:
        """The class's block ended: what it recorded counts ``times`` more (the blocks of its
        class besides it; 0: none, or a grid whose one class the report weighs whole)."""
        opened, self.opened, self.apart = self.opened or {}, None, 0
        for index, rec in self.by_index.items():
            first, off = opened.get(index, (0, 0))
            pending, rec.pending = rec.pending, Tally()
            if times:
                rec.again.add_tally(pending, times)
                rec.again_off += times * (rec.predicated_off - off)
                if rec.n > first:
                    rec.spans.append((first, rec.n, times))

    def close_classes(
        self, times: dict[int, int], warps: int, off: dict[tuple[int, int], int]
    ) -> None:
        """Several classes' blocks ran together and ended (:meth:`open_class`): what each
        block ``b`` recorded counts ``times[b]`` more (their requests put block by block
        first, :meth:`InstructionRecords.by_block`; ``warps``: a block's; those folded
        meanwhile, each block's apart), as do its warps predicated off, ``off[(b, index)]``."""
        opened, self.opened, self.apart = self.opened or {}, None, 0
        for index, rec in self.by_index.items():
            first, _ = opened.get(index, (0, 0))
            for b, tally in rec.pending_by.items():
                rec.again.add_tally(tally, times.get(b, 0))
            rec.pending, rec.pending_by = Tally(), {}
            rec.again_off += sum(t * off.get((b, index), 0) for b, t in times.items())
            if rec.n <= first:
                continue
            blocks = rec.by_block(first, warps)
            for b, t in times.items():
                lo, hi = (int(np.searchsorted(blocks, b, side=x)) for x in ("left", "right"))
                if t and hi > lo:
                    rec.spans.append((first + lo, first + hi, t))

    def mark(self) -> Mark:
        """What :meth:`undo` brings the records back to."""
        kept = {
            i: (rec.n, rec.predicated_off, rec.sources, rec.decided, len(rec.spans))
            for i, rec in self.by_index.items()
        }
        return self.requests, self.folds, kept

    def undo(self, mark: Mark) -> bool:
        """Drop what was recorded since ``mark`` (a watched round cut short: its blocks
        count nothing); False where records were folded meanwhile (it cannot be undone).
        The distinct requests it added stay unreferenced: answered, never counted."""
        requests, folds, kept = mark
        if folds != self.folds:
            return False
        self.requests, self.opened, self.apart = requests, None, 0
        for index in [i for i in self.by_index if i not in kept]:
            del self.by_index[index]
        for index, (n, off, sources, decided, spans) in kept.items():
            rec = self.by_index[index]
            rec.n, rec.predicated_off, rec.sources, rec.decided = n, off, sources, decided
            del rec.spans[spans:]
            rec.pending, rec.pending_by = Tally(), {}
        return True

    def instructions(self) -> list[InstructionRecords]:
        """Records of every shared-memory instruction executed, in program order."""
        return [self.by_index[k] for k in sorted(self.by_index)]


def _keep_nothing(*_: object, **__: object) -> None:
    """Nothing kept."""


class Dropping(Recorder):
    """The recorder of a batch run only for what it writes to global memory (its blocks
    counted by class already: :mod:`.emulator.sync.waiting_blocks`): it keeps nothing, each
    method that would keep something doing nothing (and :meth:`~Recorder.record_cost` goes
    through :meth:`~Recorder.record`). Its records were kept whole before, never folded (no
    coster), so a long batch's grew up to the records' bound (384 MiB) and stopped the trace
    there."""

    record = fill = note = predicated_off = decide = address_taint = _keep_nothing
