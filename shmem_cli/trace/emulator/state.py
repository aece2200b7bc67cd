"""The machine state of one thread block, vectorized over all its threads.

Registers are ``(count, threads)`` arrays: general registers R0..R254 (RZ = 255 reads 0), uniform
registers UR0..UR62 (URZ = 63; each thread keeps its own copy, equal across a warp), predicates
P0..P6 and UP0..UP6 (PT/UPT = 7 read true). Every register has a taint byte per thread: bit 0 = the
value depends on data read from global memory, bit 1 = the emulator could not compute the value
exactly, bit 2 = the value may differ between blocks (it depends on the block index), bits 3-7 =
which buffers the global data came from (:data:`BUFFER_GROUPS` groups: one bit per buffer for the
first four the kernel reads from, the fifth for every later one; :meth:`GlobalMemory.read_taint`);
a register's bytes may carry less (:mod:`.ops.byte_taint`). Shared and local memory carry a taint
byte per data byte. Control flow spreads taint (:mod:`.taint_flow`): ``ctl`` and ``regions`` hold
what a thread's path was decided by. Memory:

* shared: the CTA's window. On sm_90 user shared memory starts after a 1 KiB reserved area
  (the compiler adds 0x400 to ``SR_CgaCtaId << 24``; this block's CgaCtaId is 0), so a window
  address is ``0x400 + offset``; banks are ``(address / 4) % 32`` either way. A batch of
  CTAs keeps one window per CTA (:meth:`Block.shared_base`).
* local: per thread, allocated on first use; the stack pointer starts at ``LOCAL_BYTES``
  (``c[0x0][0x28]``). global: :class:`GlobalMemory`, buffers at synthetic addresses.
* generic pointers (LD/ST) into shared memory: ``SR_SWINHI`` is ``SHARED_WINDOW_HI``, so
  such an address is ``SHARED_WINDOW_HI << 32`` plus the window address; into local
  memory: ``LOCAL_WINDOW`` (``c[0x0][0x20]``) plus the thread's local address.
* constant bank 0: block and grid sizes, the stack top, then the kernel parameters.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ...hardware import dsmem
from ...hardware.arch import SM90
from ..recorder import Recorder
from .global_memory import BUFFER_GROUPS, GLOBAL_BASE, TAINT_GLOBAL, Buffer, GlobalMemory
from .sync.calls import LOCAL_BYTES, CallPaths
from .sync.clock import Clock
from .sync.convergence_state import BLOCKED, Convergence
from .sync.mbarrier import MBarriers
from .trace_error import TraceError

__all__ = [
    "BLOCKED",
    "BUFFER_GROUPS",
    "GLOBAL_BASE",
    "LOCAL_BYTES",
    "TAINT_GLOBAL",
    "Block",
    "Buffer",
    "GlobalMemory",
    "Launch",
    "TraceError",
]

if TYPE_CHECKING:
    import numpy.typing as npt

    from ...cuda.sass import Instruction

U32: TypeAlias = "npt.NDArray[np.uint32]"
U8: TypeAlias = "npt.NDArray[np.uint8]"
I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"
Idx: TypeAlias = "slice | npt.NDArray[np.intp]"

RZ = 255
URZ = 63
PT = 7
TAINT_UNKNOWN = 2
# the value may differ between blocks: it depends on the block index (or the CTA's rank)
TAINT_BLOCK = 4
# generic addresses of shared memory are (SR_SWINHI << 32) | window address
SHARED_WINDOW_HI = 0x0001_0000
# generic addresses of local memory: LOCAL_WINDOW plus the thread's local address (the
# window's base is c[0x0][0x20]: a -G build makes a pointer to its stack frame with it)
LOCAL_WINDOW = 0x0003_0000_0000_0000
LOCAL_WINDOW_SLOT = 0x20  # where constant bank 0 holds it
# generic address of constant bank 0's byte 0 (c[0x0][0x198] holds that of the parameters):
# how a kernel takes the address of a __grid_constant__ parameter such as a tensor map
PARAM_WINDOW = 0x0002_0000_0000_0000


@dataclass
class Launch:
    """What one block needs besides the code: sizes, indices, memories and parameters."""

    block: tuple[int, int, int]
    grid: tuple[int, int, int] = (1, 1, 1)
    block_idx: tuple[int, int, int] = (0, 0, 0)
    params: bytes = b""
    param_base: int = SM90.param_base
    static_smem: int = 0
    dynamic_smem: int = 0
    shared_base: int = 0x400
    memory: GlobalMemory = field(default_factory=GlobalMemory)
    const_banks: dict[int, bytes] = field(default_factory=dict)  # banks other than 0
    # per bank, (start, end, name) of each __constant__ variable nobody set (reads as 0)
    const_unset: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)
    # the names of those that were read (filled as the blocks run)
    unset_reads: set[str] = field(default_factory=set)
    # functions outside the cubin (printf's vprintf): the address the banks hold -> name
    externals: dict[int, str] = field(default_factory=dict)
    warp_size: int = SM90.warp_size  # lanes of a warp: the architecture profile's
    cluster: tuple[int, int, int] = (1, 1, 1)  # CTAs of a thread-block cluster per axis
    # blocks the GPU holds at once (the profile's SMs times what one SM holds of the kernel:
    # arch.resident_blocks), 0 when not known: blocks that share work run so many together
    resident: int = 0

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def bank0(self) -> bytes:
        """Constant bank 0: blockDim at 0x0, gridDim at 0xc, the shared window's generic
        address at 0x18, the local window's at 0x20, the stack top at 0x28, the parameters
        at ``param_base``."""
        img = bytearray(max(0x400, self.param_base + len(self.params) + 16))
        for i, v in enumerate((*self.block, *self.grid)):
            img[4 * i : 4 * i + 4] = int(v).to_bytes(4, "little")
        img[0x28:0x2C] = LOCAL_BYTES.to_bytes(4, "little")
        img[LOCAL_WINDOW_SLOT : LOCAL_WINDOW_SLOT + 8] = LOCAL_WINDOW.to_bytes(8, "little")
        # sm_80 code reads the generic address of the shared window from c[0x0][0x18]
        img[0x18:0x20] = (SHARED_WINDOW_HI << 32).to_bytes(8, "little")
        if self.param_base >= SM90.param_base:  # sm_90's bank: the parameters' generic address
            at = SM90.param_address_offset
            img[at : at + 8] = (PARAM_WINDOW + self.param_base).to_bytes(8, "little")
        img[self.param_base : self.param_base + len(self.params)] = self.params
        if self.param_base < SM90.param_base:  # sm_80's parameters start at 0x160
            return bytes(img)
        flag, dims, inverse, count, ctas = SM90.cluster_bank
        cx, cy, cz = self.cluster
        img[flag : flag + 4] = struct.pack("<I", 1 if cx * cy * cz > 1 else 0)
        img[dims : dims + 12] = struct.pack("<III", cx, cy, cz)
        img[inverse : inverse + 12] = struct.pack("<fff", 1 / cx, 1 / cy, 1 / cz)
        gx, gy, gz = self.grid
        img[count : count + 12] = struct.pack("<III", gx // cx, gy // cy, gz // cz)
        img[ctas : ctas + 4] = struct.pack("<I", cx * cy * cz)
        return bytes(img)

    @property
    def cluster_ctas(self) -> int:
        """CTAs of one cluster."""
        return self.cluster[0] * self.cluster[1] * self.cluster[2]


class Block:
    """Registers, predicates, memories and scheduling state of one thread block, or of
    several blocks run together (a batch of CTAs).

    In a batch the CTAs' threads lie side by side, each CTA's padded to whole warps
    (``stride`` threads; the padding threads start exited and never run; a block run alone
    is not padded): thread ``i`` is thread ``i % stride`` of the batch's CTA ``i //
    stride``, warp ``i // warp_size`` of the batch is warp ``(i % stride) // warp_size`` of
    that CTA, and each CTA has its own shared memory (``smem_size`` bytes at ``cta *
    smem_stride`` of :attr:`smem`), its own barriers and mbarriers. :meth:`shared_base`
    turns a window address into the batch's shared array; the recorder numbers warps in the
    grid (:attr:`warp_ids`).
    """

    def __init__(
        self,
        launch: Launch,
        ctas: Sequence[tuple[int, int, int]] | None = None,
        linear: Sequence[int] | None = None,
        registers: int = 256,
    ) -> None:
        cta_list = [launch.block_idx] if ctas is None else list(ctas)
        nb = len(cta_list)
        ws = launch.warp_size
        per_cta = launch.threads
        stride = -(-per_cta // ws) * ws if nb > 1 else per_cta  # one CTA: no padding
        t = nb * stride
        self.launch = launch
        self.ctas = nb  # CTAs in this batch
        self.cta_threads = per_cta  # threads of one CTA
        self.stride = stride  # threads of one CTA, padded to whole warps
        self.threads = t  # every thread of the batch, padding included
        self.cta_idx: I64 = np.array(cta_list, dtype=np.int64).reshape(nb, 3).T.copy()
        # thread-block clusters: each CTA's rank in its cluster (SR_CgaCtaId), the batch's
        # clusters (whole ones: grid.Plan) and, per cluster and rank, the batch's CTA
        cx, cy, cz = launch.cluster
        x, y, z = self.cta_idx
        self.cta_rank: I64 = (x % cx) + (y % cy) * cx + (z % cz) * cx * cy
        gx, gy, _ = launch.grid
        key = (x // cx) + (gx // cx) * ((y // cy) + (gy // cy) * (z // cz))
        _, self.cta_cluster = np.unique(key, return_inverse=True)
        self.cta_cluster = self.cta_cluster.reshape(-1).astype(np.int64)
        self.cluster_table: I64 = np.full(
            (int(self.cta_cluster.max()) + 1, cx * cy * cz), -1, dtype=np.int64
        )
        self.cluster_table[self.cta_cluster, self.cta_rank] = np.arange(nb)
        self.cluster_ctas = cx * cy * cz
        # R0.. up to the highest the code names (:func:`.grid.register_rows`), at most R255
        self.r: U32 = np.zeros((registers, t), dtype=np.uint32)
        self.tr: U8 = np.zeros((registers, t), dtype=np.uint8)
        self.ur: U32 = np.zeros((64, t), dtype=np.uint32)
        self.tur: U8 = np.zeros((64, t), dtype=np.uint8)
        self.p: B8 = np.zeros((8, t), dtype=bool)
        self.tp: U8 = np.zeros((8, t), dtype=np.uint8)
        self.up: B8 = np.zeros((8, t), dtype=bool)
        self.p[PT] = self.up[PT] = True
        self.tup: U8 = np.zeros((8, t), dtype=np.uint8)
        self.byte_clean: dict[tuple[str, int], U8] = {}  # by register: :mod:`.ops.byte_taint`
        size = launch.shared_base + launch.static_smem + launch.dynamic_smem
        self.smem_size = size  # the shared window of one CTA
        # CTA c's window starts at c * smem_stride, 1 KiB-aligned (one CTA's: 16 B, word views)
        self.smem_stride = -(-size // 1024) * 1024 if nb > 1 else -(-size // 16) * 16
        self.smem: U8 = np.zeros(nb * self.smem_stride, dtype=np.uint8)
        self._smem_base: I64 | None = None  # where each thread's window starts (shared_base)
        self.tsmem: U8 = np.zeros(nb * self.smem_stride, dtype=np.uint8)
        self._local: U8 | None = None
        self.local_low = LOCAL_BYTES  # the lowest local address any thread touched
        self._tlocal: U8 | None = None
        banks = {0: launch.bank0(), **launch.const_banks}
        self.cbank: dict[int, U8] = {k: np.frombuffer(v, dtype=np.uint8) for k, v in banks.items()}
        # per bank with unset variables: 1 + the index of the variable at each byte, else 0
        self.cunset: dict[int, npt.NDArray[np.int32]] = {}
        for k, spans in launch.const_unset.items():
            mark = np.zeros(len(self.cbank.get(k, b"")), dtype=np.int32)
            for n, (start, end, _name) in enumerate(spans):
                mark[start:end] = n + 1
            self.cunset[k] = mark
        self.tid = np.arange(t, dtype=np.int64)
        self.cta: npt.NDArray[np.intp] = (self.tid // stride).astype(np.intp)
        own = self.tid % stride  # the thread's index in its CTA
        bx, by, _ = launch.block
        self.tid_xyz = (own % bx, (own // bx) % by, own // (bx * by))
        self.warp_size = ws
        self.lane = (self.tid % ws).astype(np.uint32)
        self.warp = self.tid // ws
        self.all_idx = np.arange(t, dtype=np.intp)
        padding = own >= per_cta
        self.exited: B8 = padding.copy()
        # scheduling: next instruction index per thread (BLOCKED when exited or waiting)
        self.sched: I64 = np.where(padding, BLOCKED, 0).astype(np.int64)
        self.resume: I64 = np.zeros(t, dtype=np.int64)
        self.waiting = np.full(t, -1, dtype=np.int32)  # barrier id a thread waits at
        self.barriers: dict[int, dict[str, Any]] = {}
        self.mbarriers = MBarriers()  # sm_90 mbarriers by offset in smem (CTA base included)
        self.converge = Convergence(t, ws)  # convergence barriers, yields, sleeps
        self.mbarriers.on_wake = self.converge.join  # woken together: one part
        self.unmodelled: dict[int, int] = {}  # warp executions not modelled (ops_async), by index
        # by index: remote accesses' DSMEM sectors; op_atom wavefronts no row carries (dsmem)
        self.dsmem_sectors, self.dsmem_atoms = dict[int, int](), dict[int, int]()
        self.generic_atoms: dict[int, int] = {}  # of generic ones on global memory or declined
        self.misc, self.misc_done = dict[int, int](), dict[int, int]()  # op_misc, hardware.misc
        # per CTA since its last barrier completion: a misc.STIRS step; its threads apart
        self.stirred, self.apart = np.ones(nb, dtype=bool), np.ones(nb, dtype=bool)
        # those tallies ("misc", "misc_done", "generic_atoms") and warps predicated off ("off")
        # per CTA, (name, CTA, index) -> count, where classes' blocks run together (together.py)
        self.by_cta: dict[tuple[str, int, int], int] | None = None
        # calls to functions outside the cubin that were stepped over, by index: the name
        self.callees: dict[int, str] = {}
        self.printed: str | None = None  # the format of the last printf (its first thread's)
        # lanes whose compare-and-swap failed (they retry their loop), by instruction index
        self.cas_failed: dict[int, int] = {}
        # atomics that changed a word of memory (a spin's iterations change none: budget.Repeats)
        self.atomic_changes = 0
        self.parks = 0  # groups of threads parked on a spin (sync/parking.py)
        # executions of each atomic instruction so far, per CTA: whose warp is served first
        self.atomic_turns: dict[int, I64] = {}
        self.bar_value: U32 = np.zeros(t, dtype=np.uint32)  # BAR.RED result, for B2R.RESULT
        self.bar_pred: B8 = np.zeros(t, dtype=bool)
        # subroutine calls: each thread's call frame (0: in no call), an index into
        # ``paths`` (sync/calls.py: the frame it was called from, the call's instruction); the
        # scheduler treats a called thread as still at its call sites (:meth:`next_threads`)
        self.call_frame: I64 = np.zeros(t, dtype=np.int64)
        self.paths = CallPaths()
        self.calls_active = 0
        # a step run over every thread whose writes land only where this is true (the
        # scheduler's wide steps: scheduler.py); None: writes land on the step's threads
        self.mask: B8 | None = None
        # control-flow taint (taint_flow): per thread, the taint of the decisions its path
        # depends on; the open regions by reconvergence index (-1: never), with the
        # registers their paths write; the taint of the step running now (None: none)
        self.ctl: U8 = np.zeros(t, dtype=np.uint8)
        self.regions: dict[int, U8] = {}
        self.region_dests: dict[int, set[tuple[str, int, int]]] = {}
        self.ambient: U8 | None = None
        self.n_warps = -(-stride // ws)  # warps of one CTA
        self.misc_read = np.zeros(nb * self.n_warps, dtype=bool)  # per warp: misc first_free
        # the grid's number of each warp of the batch (CTA ``linear[c]``'s warps for CTA c)
        first = np.asarray(list(linear) if linear is not None else [0] * nb, dtype=np.int64)
        self.warp_ids: I64 = (first[:, None] * self.n_warps + np.arange(self.n_warps)).ravel()
        self.rec: Recorder = Recorder(self.warp_size)
        self.clock = Clock(-(-t // ws), nb, ws)  # the CTAs' SM clocks (sync/clock.py)

    def listed(self, index: int, ids: Any, at: Any = None, width: int = 4, op: str = "",
               operands: int = 1, taint: Any = 0, merged: Any = None) -> None:  # fmt: skip
        """Warps of ``ids`` ran instruction ``index``, not modelled (an external call, another
        CTA's memory): counted, and with ``at`` (offsets in :attr:`smem`) and ``op`` (ld, st,
        atom; ``operands`` a lane) its DSMEM sectors and op_atom wavefronts (hardware.dsmem:
        none for warps of ``merged``, whose own lanes' carry them), ``taint`` as a request's."""
        if not len(ids):
            return
        warps = ids // self.warp_size
        self.unmodelled[index] = self.unmodelled.get(index, 0) + len(np.unique(warps))
        if at is not None and op:
            self.rec.address_taint(index, ids, taint, self.warp_ids)
            at = np.asarray(at, dtype=np.int64)
            n = dsmem.sectors(warps, at, width, op, at // self.smem_stride)
            self.dsmem_sectors[index] = self.dsmem_sectors.get(index, 0) + n
            if op == "atom":
                on = ~np.isin(warps, merged) if merged is not None else slice(None)
                lanes = ids[on] % self.warp_size
                n = dsmem.generic_atom_wavefronts(warps[on], lanes, width, operands)
                self.dsmem_atoms[index] = self.dsmem_atoms.get(index, 0) + n

    def count_misc(self, index: int, ix: Any, retire: bool = False, warps: Any = None) -> None:
        """The warps of threads ``ix`` (or the distinct ``warps``) ran instruction ``index``, one
        that costs op_misc (``retire``: an EXIT, counted for the warps it ended, all their
        threads now exited)."""
        if warps is None:
            warps = np.unique(self.warp[self.ids(ix)])
        if retire:  # those with no thread left
            alive = np.bincount(self.warp[~self.exited], minlength=int(self.warp[-1]) + 1)
            warps = warps[alive[warps] == 0]
        self.misc[index] = self.misc.get(index, 0) + len(warps)
        if self.by_cta is not None:
            self.tally_by_cta("misc", index, warps // self.n_warps)

    def tally_by_cta(self, name: str, index: int, ctas: Any) -> None:
        """Count one for each entry of ``ctas`` (a CTA of the batch) in :attr:`by_cta`."""
        assert self.by_cta is not None
        for c, n in zip(*np.unique(ctas, return_counts=True), strict=True):
            key = (name, int(c), index)
            self.by_cta[key] = self.by_cta.get(key, 0) + int(n)

    def run_wide(self, step: Callable[[Block, Idx], None], mask: B8) -> None:
        """Run ``step`` over every thread, its one write landing only where ``mask`` is
        (the writers of :mod:`.operands` honour :attr:`mask`)."""
        self.mask = mask
        try:
            step(self, slice(None))
        finally:
            self.mask = None

    def call(self, ids: Any, site: int, ins: Instruction | None = None) -> None:
        """Threads ``ids`` call from the instruction ``site`` (``ins``)."""
        frames = self.call_frame[ids]
        for f in np.unique(frames):
            self.call_frame[ids[frames == f]] = self.paths.enter(int(f), site, ins)
        self.calls_active = int(np.count_nonzero(self.call_frame))

    def ret(self, ids: Any) -> None:
        """Threads ``ids`` return from their innermost call (from none: nothing)."""
        frames = self.call_frame[ids]
        for f in np.unique(frames):
            self.call_frame[ids[frames == f]] = self.paths.caller(int(f))
        self.calls_active = int(np.count_nonzero(self.call_frame))

    def next_threads(self) -> Any:
        """The ready threads that run next while calls are active: those first in the order
        of their call sites, outermost first, then of their next instruction, a thread in a
        call ranking just after its call site (at every depth); empty when none is ready."""
        at = np.flatnonzero(self.sched < BLOCKED)
        frames = self.call_frame[at]
        if len(at) == 0 or (frames == frames[0]).all():  # one frame: the smallest index
            pcs = self.sched[at]
            return at[pcs == pcs.min()] if len(at) else at
        best: tuple[tuple[int, ...], Any] | None = None
        for f in np.unique(frames):
            mine = at[frames == f]
            pcs = self.sched[mine]
            # a call site ranks just after the instruction it is (odd), a thread's own next
            # instruction as itself (even)
            key = (*(2 * s + 1 for s in self.paths.sites(int(f))), 2 * int(pcs.min()))
            if best is None or key < best[0]:
                best = (key, mine[pcs == pcs.min()])
        assert best is not None
        return best[1]

    def local(self) -> tuple[U8, U8]:
        """Per-thread local memory, flattened: thread t owns bytes [t*L, (t+1)*L)."""
        if self._local is None or self._tlocal is None:
            self._local = np.zeros(self.threads * LOCAL_BYTES, dtype=np.uint8)
            self._tlocal = np.zeros(self.threads * LOCAL_BYTES, dtype=np.uint8)
        return self._local, self._tlocal

    def machine_arrays(self) -> list[Any]:
        """The arrays the block's further execution depends on, where the scheduler reads
        :attr:`sched` afresh (the cheapest to compare first). Taint and the records are left
        out: they change no value."""
        arrays = [self.sched, self.exited, self.waiting, self.resume, self.call_frame]
        arrays += [self.p, self.up, self.bar_pred, self.bar_value]
        arrays += [self.r, self.ur, self.smem, *self.converge.arrays(), self.converge.part]
        if self._local is None:
            return arrays
        # each thread's local memory from the lowest byte touched (below it: zeros, unchanged)
        return [*arrays, self._local.reshape(self.threads, LOCAL_BYTES)[:, self.local_low :]]

    def machine_state_small(self) -> tuple[Any, ...]:
        """The rest of that state: barriers, mbarriers, calls, and counts of what changed
        memory elsewhere (global memory by its writes, :attr:`GlobalMemory.epoch`; atomics
        that changed a word, whose serving order matters only then) or read a clock (whose
        value is left out: a state met again with no read between repeats for ever)."""
        fields = ("arrived", "true", "false")
        bars = tuple(
            (k, *(bar[f].tobytes() for f in fields), bar["count"], bar["red"])
            for k, bar in sorted(self.barriers.items())
        )
        mbars = tuple(
            (o, m.count, m.pending, m.tx, m.phase, tuple(sorted(m.waiters.items())))
            for o, m in sorted(self.mbarriers.table.items())
        )
        memory = (self.atomic_changes, self.launch.memory.epoch, self.clock.reads)
        return (self.calls_active, *memory, bars, mbars)

    def machine_state(self) -> tuple[list[Any], tuple[Any, ...]]:
        """A copy of :meth:`machine_arrays` and :meth:`machine_state_small`."""
        return [a.copy() for a in self.machine_arrays()], self.machine_state_small()

    def file(self, kind: str) -> tuple[Any, Any]:
        """The register file of a kind (``R``, ``UR``, ``P``, ``UP``): its values and their
        taints, a row per register and a column per thread."""
        if kind == "R":
            return self.r, self.tr
        if kind == "UR":
            return self.ur, self.tur
        return (self.p, self.tp) if kind == "P" else (self.up, self.tup)

    def ids(self, ix: Idx) -> npt.NDArray[np.intp]:
        """Thread ids of an index (a slice means every thread)."""
        if isinstance(ix, slice):
            return self.all_idx
        return ix

    def count(self, ix: Idx) -> int:
        return self.threads if isinstance(ix, slice) else len(ix)

    def shared_base(self, ix: Idx | int) -> Any:
        """Where the shared window of each thread's CTA starts in :attr:`smem` (a thread
        index, an index of threads or a slice; 0 when the batch is one CTA)."""
        if self.ctas == 1:
            return 0
        if self._smem_base is None:  # each thread's, made once
            self._smem_base = self.cta * self.smem_stride
        return self._smem_base[ix]

    def window(self, at: int) -> tuple[int, int]:
        """(CTA of the batch, window address) of an offset in :attr:`smem`."""
        return divmod(at, self.smem_stride) if self.ctas > 1 else (0, at)

    def cta_name(self, c: int) -> str:
        """``block (x,y,z)`` of the batch's CTA ``c``."""
        x, y, z = (int(v) for v in self.cta_idx[:, c])
        return f"block ({x},{y},{z})"
