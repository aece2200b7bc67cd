"""The shared-memory requests a traced block made, per SASS instruction, for the engine.

Every executed shared-memory instruction adds one row per warp that had at least one
active lane (its guard predicate true): the lane addresses (int64, offsets in the CTA's
shared window; inactive lanes hold 0; the profile's ``warp_size`` lanes), the active
mask, the warp index, the warp's occurrence count of that instruction (the iteration
axis of heat maps) and whether any active lane's address depends on global-memory data
(or on a value the emulator could not compute). Rows live in NumPy arrays that grow by doubling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ..analysis.cost import CopySource, RequestBatch, batch_stats
from ..cuda.sass import Instruction
from ..hardware import ops
from ..hardware.arch import DEFAULT_ARCH, PROFILES, SM90, ArchProfile
from ..hardware.engine import AccessKind, RequestStats

if TYPE_CHECKING:
    import numpy.typing as npt

I64: TypeAlias = "npt.NDArray[np.int64]"
I32: TypeAlias = "npt.NDArray[np.int32]"
B8: TypeAlias = "npt.NDArray[np.bool_]"
U8: TypeAlias = "npt.NDArray[np.uint8]"


@dataclass
class InstructionRecords:
    """All requests of one SASS instruction."""

    index: int  # position in the function
    instruction: Instruction
    kind: AccessKind
    lanes: int = SM90.warp_size  # of the architecture traced
    n: int = 0  # requests: warp executions with at least one active lane
    # warp executions with every lane predicated off (no request, but Nsight Compute's
    # per-instruction "Instructions Executed" counts them)
    predicated_off: int = 0
    addr: I64 = field(init=False)
    active: B8 = field(init=False)
    warp: I32 = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    iteration: I32 = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    data_dependent: B8 = field(default_factory=lambda: np.zeros(0, dtype=bool))
    not_modelled: B8 = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # cp.async only: each lane's global source address and how many source bytes it reads
    src: I64 | None = None
    src_bytes: I64 | None = None
    # wgmma only: each request's wavefronts (the measured rule), and what it reads, in words
    cost: I64 | None = None
    reads: str | None = None

    def __post_init__(self) -> None:
        self.addr = np.zeros((0, self.lanes), dtype=np.int64)
        self.active = np.zeros((0, self.lanes), dtype=bool)

    def _grow(self, extra: int) -> None:
        need = self.n + extra
        cap = len(self.warp)
        if need <= cap:
            return
        new = max(need, 2 * cap, 16)
        self.addr = _resize(self.addr, new)
        self.active = _resize(self.active, new)
        self.warp = _resize(self.warp, new)
        self.iteration = _resize(self.iteration, new)
        self.data_dependent = _resize(self.data_dependent, new)
        self.not_modelled = _resize(self.not_modelled, new)
        if self.src is not None and self.src_bytes is not None:
            self.src = _resize(self.src, new)
            self.src_bytes = _resize(self.src_bytes, new)
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
    ) -> None:
        k = len(warp)
        if src is not None and self.src is None:
            self.src = np.zeros((len(self.warp), self.lanes), dtype=np.int64)
            self.src_bytes = np.zeros((len(self.warp), self.lanes), dtype=np.int64)
        self._grow(k)
        s = slice(self.n, self.n + k)
        self.addr[s] = addr
        self.active[s] = active
        self.warp[s] = warp
        self.iteration[s] = iteration
        self.data_dependent[s] = (taint & 1) != 0
        self.not_modelled[s] = (taint & 2) != 0
        if src is not None and src_bytes is not None:
            assert self.src is not None and self.src_bytes is not None
            self.src[s] = src
            self.src_bytes[s] = src_bytes
        self.n += k

    @property
    def recorded_bytes(self) -> int:
        """The memory these records hold (their arrays, spare room included)."""
        arrays = (self.addr, self.active, self.warp, self.iteration, self.src, self.src_bytes)
        return sum(a.nbytes for a in arrays if a is not None) + 2 * len(self.warp)

    def rows(self, arch: ArchProfile | None = None) -> tuple[I64, B8]:
        """(R, lanes) addresses and active masks of the requests for the engine, in
        execution order (ldmatrix/stmatrix: only the lanes that give row addresses, as
        ``arch``'s profile says, the default profile's without one)."""
        active = self.active[: self.n]
        if self.kind.is_matrix:
            profile = arch if arch is not None else PROFILES[DEFAULT_ARCH]
            active = active & self.kind.address_lanes(profile)[None, :]
        return self.addr[: self.n], active

    def batch(self, arch: ArchProfile) -> RequestBatch:
        """The requests as one batch for the cost door, with cp.async's global side."""
        addr, active = self.rows(arch)
        warp = np.asarray(self.warp[: self.n], dtype=np.int64)
        occurrence = np.asarray(self.iteration[: self.n], dtype=np.int64)
        source = None
        op = ops.get(self.kind.op)
        if op.copy and self.src is not None and self.src_bytes is not None:
            bypass = "BYPASS" in self.instruction.mods
            nbytes = self.src_bytes[: self.n]
            # .cg: a lane that zero-fills any part writes through the pipe; .ca: the global
            # side counts the lanes that read at least one source byte
            copies = nbytes == self.kind.size if bypass else nbytes > 0
            source = CopySource(self.src[: self.n], copies, bypass)
        # wgmma: each request's wavefronts by the measured rule (no lane addresses)
        measured = self.cost[: self.n] if not op.lane_addressed and self.cost is not None else None
        return RequestBatch(addr, active, warp, occurrence, source, measured)

    def stats(self, arch: ArchProfile) -> RequestStats:
        """Wavefronts of every request: the engine, or the measured cp.async rule."""
        return batch_stats(self.batch(arch), self.kind, arch)


def _resize(a: Any, rows: int) -> Any:
    out = np.zeros((rows, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


@dataclass(frozen=True)
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

    def __init__(self, warp_size: int = SM90.warp_size) -> None:
        self.warp_size = warp_size
        self.by_index: dict[int, InstructionRecords] = {}
        self._counts: dict[int, I64] = {}
        self.fills: dict[tuple[int, int, int, int], TmaFill] = {}

    def fill(self, ins: Instruction, start: int, nbytes: int, swizzle: int) -> None:
        """A TMA copy wrote ``nbytes`` of shared memory from ``start`` (the block's window),
        laid out with a ``swizzle``-byte mode (0: none); kept once per place."""
        key = (ins.pc, start, nbytes, swizzle)
        if key not in self.fills:
            self.fills[key] = TmaFill(ins.pc, start, nbytes, swizzle)

    def record(
        self,
        index: int,
        ins: Instruction,
        kind: AccessKind,
        tids: npt.NDArray[np.intp],
        addr: I64,
        taint: U8 | int,
        n_warps: int,
        warp_base: int = 0,
        src: I64 | None = None,
        src_bytes: I64 | None = None,
    ) -> None:
        """One execution by the threads ``tids`` (sorted) with lane addresses ``addr``
        (cp.async also gives each thread's global source address and source byte count)."""
        if len(tids) == 0:
            return
        rec = self.by_index.get(index)
        if rec is None:
            rec = self.by_index[index] = InstructionRecords(index, ins, kind, self.warp_size)
        warps, lanes = np.divmod(tids, self.warp_size)
        uw, row = np.unique(warps, return_inverse=True)
        rows = np.zeros((len(uw), self.warp_size), dtype=np.int64)
        act = np.zeros((len(uw), self.warp_size), dtype=bool)
        rows[row, lanes] = addr
        act[row, lanes] = True
        t = np.zeros(len(uw), dtype=np.uint8)
        np.bitwise_or.at(t, row, np.broadcast_to(np.asarray(taint, dtype=np.uint8), tids.shape))
        counts = self._counts.get(index)
        if counts is None or len(counts) < warp_base + n_warps:
            grown = np.zeros(warp_base + n_warps, dtype=np.int64)
            if counts is not None:
                grown[: len(counts)] = counts
            counts = self._counts[index] = grown
        gw = uw + warp_base
        src_rows = byte_rows = None
        if src is not None and src_bytes is not None:
            src_rows = np.zeros((len(uw), self.warp_size), dtype=np.int64)
            byte_rows = np.zeros((len(uw), self.warp_size), dtype=np.int64)
            src_rows[row, lanes] = src
            byte_rows[row, lanes] = src_bytes
        rec.add(rows, act, gw, counts[gw], t, src_rows, byte_rows)
        counts[gw] += 1

    def record_cost(
        self,
        index: int,
        ins: Instruction,
        kind: AccessKind,
        tids: npt.NDArray[np.intp],
        cost: list[int],
        n_warps: int,
        warp_base: int = 0,
    ) -> None:
        """One execution of a wgmma by the warpgroup ``tids``: one request per warp, costing
        ``cost[k]`` wavefronts for its k-th warp (no lane addresses: the engine is not used)."""
        rec = self.by_index.get(index)
        if rec is None:
            rec = self.by_index[index] = InstructionRecords(index, ins, kind)
        if rec.cost is None:
            rec.cost = np.zeros(len(rec.warp), dtype=np.int64)
        start = rec.n
        uw = np.unique(tids // self.warp_size)
        self.record(
            index, ins, kind, tids, np.zeros(len(tids), dtype=np.int64), 0, n_warps, warp_base
        )
        assert rec.cost is not None
        rec.cost[start : start + len(uw)] = cost[: len(uw)]

    def note(self, index: int, text: str) -> None:
        """What an instruction reads, said once (the first execution's)."""
        rec = self.by_index.get(index)
        if rec is not None and rec.reads is None:
            rec.reads = text

    def predicated_off(self, index: int, ins: Instruction, kind: AccessKind, warps: int) -> None:
        """``warps`` warps reached the instruction with every lane's guard false."""
        rec = self.by_index.get(index)
        if rec is None:
            rec = self.by_index[index] = InstructionRecords(index, ins, kind, self.warp_size)
        rec.predicated_off += warps

    def instructions(self) -> list[InstructionRecords]:
        """Records of every shared-memory instruction executed, in program order."""
        return [self.by_index[k] for k in sorted(self.by_index)]
