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
from .distinct_rows import Allowance, RecordsFull, taint_or, warp_rows
from .emulator.trace_error import TraceError
from .folds import Tally
from .requests import I64, U8, Coster, InstructionRecords, TmaFill

if TYPE_CHECKING:
    import numpy.typing as npt

#: distinct shared-memory instructions a launch records: each is a row of the report, costed
#: on its own (about 0.5 ms each: 100,000 in a straight line took 57 s to the report and
#: 1.07 GB; real kernels have a few thousand)
MAX_SITES = 32_768


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
        self.coster = fold
        self.folds = 0  # times the records were folded
        # a class's block running (:meth:`open_class`): per instruction index, its first
        # request and the warps predicated off before it (None: no class open)
        self.opened: dict[int, tuple[int, int]] | None = None
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
        rec = self._at(index, ins, kind)
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
        if np.count_nonzero(t):
            self.tainted[index] = self.tainted.get(index, 0) | taint_or(t)

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
        deciding whether to sample its blocks (:func:`.emulator.alike.classes.run_rest`)."""
        return self.coster is not None

    def fold(self) -> bool:
        """Cost the requests kept so far (``fold``), add them to each instruction's sums
        (:meth:`InstructionRecords.fold`) and drop them, so that recording goes on within
        the bound; False where that cannot be done (no coster)."""
        if self.coster is None:
            return False
        opened = self.opened
        for index, rec in self.by_index.items():
            rec.fold(self.coster, None if opened is None else opened.get(index, (0, 0))[0])
        if opened is not None:  # the running block's requests start again at 0
            self.opened = {index: (0, off) for index, (_, off) in opened.items()}
        self.allowance.free()  # every array dropped
        self.folds += 1
        return True

    def open_class(self) -> None:
        """A class's block runs next: its requests and warps predicated off are counted again
        for its class (:meth:`close_class`), whatever folds meanwhile."""
        self.opened = {i: (rec.n, rec.predicated_off) for i, rec in self.by_index.items()}

    def close_class(self, times: int) -> None:
        """The class's block ended: what it recorded counts ``times`` more (the blocks of its
        class besides it; 0: none, or a grid whose one class the report weighs whole)."""
        opened, self.opened = self.opened or {}, None
        for index, rec in self.by_index.items():
            first, off = opened.get(index, (0, 0))
            pending, rec.pending = rec.pending, Tally()
            if times:
                rec.again.add_tally(pending, times)
                rec.again_off += times * (rec.predicated_off - off)
                if rec.n > first:
                    rec.spans.append((first, rec.n, times))

    def instructions(self) -> list[InstructionRecords]:
        """Records of every shared-memory instruction executed, in program order."""
        return [self.by_index[k] for k in sorted(self.by_index)]


class Dropping(Recorder):
    """The recorder of a batch run only for what it writes to global memory (its blocks
    counted by class already: :mod:`.emulator.sync.waiting_blocks`): it keeps nothing. Its
    records were kept whole before, never folded (no coster), so a long batch's grew up to
    the records' bound (384 MiB) and stopped the trace there."""

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
        """Nothing kept."""

    def fill(self, ins: Instruction, start: int, nbytes: int, swizzle: int) -> None:
        """Nothing kept."""

    def note(self, index: int, text: str) -> None:
        """Nothing kept."""

    def predicated_off(self, index: int, ins: Instruction, kind: AccessKind, warps: int) -> None:
        """Nothing kept."""

    def decide(self, index: int, ins: Instruction, kind: AccessKind, taint: int) -> None:
        """Nothing kept."""
