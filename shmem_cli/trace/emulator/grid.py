"""Which blocks of a launch run, and which run together.

A grid's first block runs alone, watched (:class:`Watch`, below): when the blocks are proven to
behave alike it stands for all of them. Otherwise the other blocks run in batches
(:class:`Batch`): the CTAs of a batch are one :class:`~.state.Block` whose threads the
scheduler runs side by side, so that a grid costs about its longest block's steps per
batch, not one block's steps per block. A batch holds consecutive blocks (numbered in
launch order: ``x`` fastest, then ``y``, then ``z``, the order of their warps in the
records), as many as :data:`BATCH_BYTES` of state hold and at most :data:`BATCH_THREADS`
threads, so that the memory a trace takes does not grow with the grid.

A grid whose blocks would run past the launch's budget (:mod:`.budget`: its
thread-instructions, estimated from the first block, or the memory of its records) is
sampled: blocks spread evenly over the grid, the first and the last included, as many as
fit, and the report says so.

The proof that the blocks behave alike (:class:`Watch`): the first block runs alone and
watched. Every value carries taint (:mod:`.state`):
it depends on the block index (``TAINT_BLOCK``, from ``SR_CTAID``), on global memory
(``TAINT_GLOBAL``: other blocks read other addresses, and may write what this one reads),
or the emulator could not compute it exactly (``TAINT_UNKNOWN``: clocks, SM ids). The
watch looks at every decision the block's threads take:

* each guard predicate: which lanes run an instruction, and for a branch or an exit which
  path its threads take and how many times a loop runs (nvcc guards every conditional
  branch and every loop's back edge);
* each shared-memory request's lane addresses (the taint the recorder receives);
* the registers that place or size work outside the lane addresses: an mbarrier's or a TMA
  copy's shared destination, a wgmma's descriptors, a barrier's id, count and reduced
  predicate, a shuffle's source lane, an indirect branch's target.

If none of them carries taint, every decision read only what all blocks share (threadIdx,
the parameters, constant memory, blockDim and gridDim, and shared memory written from
those): every block takes the same decisions and makes the same requests as the first,
and its requests are counted once per block (:class:`Proof`). A guard whose predicate
carries only the block index's taint is proven by its sums of the block index instead
(:mod:`.alike.affine`): it holds the first block's outcome up to some block index per axis,
the whole grid for a bounds check the blocks fill; the blocks at or below the box of those
indices are counted as the first, the others (the edges) run (:mod:`.alike.edges`).
Otherwise the first tainted decision is said (:class:`Differs`) and every block runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...cuda.sass import Instruction
from ...cuda.sass_operands import Gdesc, Mem, Reg
from .alike.affine import Affine
from .budget import Budget
from .state import LOCAL_BYTES, TAINT_BLOCK, Block, Idx, Launch

#: the memory a batch's state may take: registers, predicates and scheduling per thread,
#: shared memory per CTA, local memory per thread where the kernel uses it
BATCH_BYTES = 192 << 20
#: threads run together at most (past this a step gains nothing)
BATCH_THREADS = 1 << 16
#: a thread's state: 256 registers and 64 uniform registers with a taint byte each,
#: 16 predicates with theirs, scheduling, and the temporaries of a step
THREAD_BYTES = 256 * 5 + 64 * 5 + 16 * 2 + 160 + 256
#: bytes a recorded request takes (row, warp, occurrence, flags), room to grow included
REQUEST_BYTES = 36


@dataclass(frozen=True)
class Batch:
    """Blocks run together: their indices and their numbers in launch order."""

    ctas: tuple[tuple[int, int, int], ...]
    linear: tuple[int, ...]


#: opcodes that name a register range wider than :data:`_SPARE` from its first register
_WIDE = ("HGMMA", "IGMMA", "QGMMA")
_SPARE = 16  # registers past the highest a general instruction names (R4 of LDS.128: R7)


def register_rows(instructions: Sequence[Instruction]) -> int:
    """How many general registers a thread of this code needs: the highest named, with room
    for the widest range an operand starts (all 256 where a wgmma names its accumulators)."""
    top = -1
    for ins in instructions:
        if ins.opcode in _WIDE:
            return 256
        for o in ins.operands:
            for r in (o.reg, o.ureg) if isinstance(o, Mem) else (o,):
                if isinstance(r, Reg) and r.kind == "R" and not r.is_zero:
                    top = max(top, r.index)
    return min(256, top + 1 + _SPARE)


def batch_bytes(launch: Launch, ctas: int, *, local: bool, registers: int = 256) -> int:
    """The memory the state of ``ctas`` blocks run together takes, about."""
    ws = launch.warp_size
    threads = ctas * (-(-launch.threads // ws) * ws)
    per_thread = THREAD_BYTES - 5 * (256 - registers) + (2 * LOCAL_BYTES if local else 0)
    smem = launch.shared_base + launch.static_smem + launch.dynamic_smem
    per_cta = 2 * (-(-smem // 1024) * 1024)  # the bytes and their taint
    return threads * per_thread + ctas * per_cta


@dataclass(frozen=True)
class Plan:
    """The blocks of a launch that run, in batches of whole clusters (a cluster: the CTAs
    of a thread-block cluster, one block without clusters)."""

    launch: Launch
    grid: bool  # every block of the grid (else only launch.block_idx)
    per_batch: int  # clusters in each batch (the last may hold fewer)

    @property
    def blocks(self) -> int:
        """Blocks of the grid (1 without ``grid``)."""
        gx, gy, gz = self.launch.grid
        return gx * gy * gz if self.grid else 1

    @property
    def clusters(self) -> int:
        """Clusters of the grid (its blocks without clusters)."""
        return self.blocks // self.launch.cluster_ctas if self.grid else 1

    def ctas(self, cluster: int) -> list[tuple[int, int, int]]:
        """The blocks of cluster ``cluster`` (launch order of clusters), in rank order."""
        gx, gy, _ = self.launch.grid
        cx, cy, cz = self.launch.cluster
        nx, ny = gx // cx, gy // cy
        kx, ky, kz = cluster % nx, (cluster // nx) % ny, cluster // (nx * ny)
        return [
            (kx * cx + x, ky * cy + y, kz * cz + z)
            for z in range(cz)
            for y in range(cy)
            for x in range(cx)
        ]

    def _batch(self, clusters: Sequence[int]) -> Batch:
        gx, gy, _ = self.launch.grid
        ctas = tuple(c for k in clusters for c in self.ctas(k))
        return Batch(ctas, tuple(x + gx * (y + gy * z) for x, y, z in ctas))

    def first(self) -> Batch:
        """What runs first, alone: the grid's first cluster, or ``launch.block_idx``."""
        if not self.grid:
            return Batch((self.launch.block_idx,), (0,))
        return self._batch([0])

    def rest(self, clusters: Sequence[int] | None = None) -> Iterator[Batch]:
        """The other clusters, in batches: every one, or those of ``clusters``."""
        if not self.grid:
            return
        todo = range(1, self.clusters) if clusters is None else [k for k in clusters if k]
        for start in range(0, len(todo), self.per_batch):
            yield self._batch(todo[start : start + self.per_batch])


def sample(blocks: int, count: int) -> tuple[int, ...]:
    """``count`` blocks of a grid of ``blocks``, spread evenly, the first and last included."""
    if count >= blocks:
        return tuple(range(blocks))
    if count <= 1:
        return (0,)
    return tuple(sorted({round(k * (blocks - 1) / (count - 1)) for k in range(count)}))


def plan(
    launch: Launch,
    *,
    grid: bool,
    local: bool = False,
    registers: int = 256,
    batch_threads: int | None = None,
    batch_bytes_most: int | None = None,
) -> Plan:
    """The batches of a launch: every block of its grid (``grid``) or its one block;
    ``local``: the kernel uses local memory, ``registers`` the rows of its register file
    (a thread's state)."""
    most = BATCH_THREADS if batch_threads is None else batch_threads
    most_bytes = BATCH_BYTES if batch_bytes_most is None else batch_bytes_most
    size = launch.cluster_ctas
    by_threads = max(1, most // max(1, launch.threads * size))
    one = batch_bytes(launch, size, local=local, registers=registers)
    by_bytes = max(1, most_bytes // max(1, one))
    return Plan(launch, grid, min(by_threads, by_bytes))


# --- the proof that blocks behave alike ---------------------------------------------------

#: the opcodes whose register operands decide something besides a shared address:
#: which of them (None: every register operand)
_WATCHED: dict[str, tuple[int, ...] | None] = {
    "SYNCS": None,
    "ARRIVES": None,
    "UTMALDG": (0,),  # the shared destination and the mbarrier, not the coordinates
    "UTMAPF": (),
    "UTMASTG": (0,),
    "UTMAREDG": (0,),
    "UBLKCP": None,
    "UBLKRED": None,
    "UBLKPF": (),
    "HGMMA": None,
    "IGMMA": None,
    "QGMMA": None,
    "BAR": None,
    "SHFL": (3, 4),  # the lane and the clamp, not the value moved
    "BRX": None,
    "JMX": None,
    "CALL": None,
    "RET": None,
}
#: operands whose registers hold a uniform pair base: only the first two are watched
_PAIR_BASE = ("UTMALDG", "UTMASTG", "UTMAREDG")


@dataclass(frozen=True)
class Proof:
    """The blocks behave alike: what was checked, in words for the report."""

    blocks: int  # the blocks (clusters) the first stands for
    decisions: int  # guarded executions and shared requests checked
    unit: str = "blocks"  # or "clusters"
    bounded: int = 0  # guarded executions on the block index proven alike (.alike.affine)
    box: tuple[int, ...] | None = None  # alike up to these block indices only: the rest ran
    edges: int = 0  # the blocks past the box, run

    def text(self) -> str:
        first = "block (0,0,0)" if self.unit == "blocks" else "the first cluster"
        bounds = (
            f"; {self.bounded:,} guards on the block index proven to take block (0,0,0)'s "
            "outcome in every block: each compares sums of the block index with fixed "
            "coefficients that no block of the grid wraps past 32 bits, and the difference "
            "keeps its sign at every corner of the grid"
            if self.bounded
            else ""
        )
        which = f"each of the {self.blocks:,} {self.unit}"
        if self.box is not None:
            x, y, z = self.box
            which = (
                f"each of the {self.blocks:,} blocks up to block ({x},{y},{z}) (the "
                f"{self.edges:,} blocks past it, where a guard's outcome changes, were run)"
            )
        every = f"every {self.unit[:-1]}" if self.box is None else "the blocks"
        return (
            f"{every} behave{'s' if self.box is None else ''} alike: {first} traced and its "
            f"requests counted for {which} ({self.decisions:,} decisions "
            "checked: no "
            "guard, branch, loop, shared address, barrier, mbarrier, TMA destination or wgmma "
            "descriptor depends on global memory or on a value the emulator could not "
            f"compute, nor otherwise on the block index{bounds})"
        )


@dataclass(frozen=True)
class Differs:
    """Why the blocks were not proven alike: the first decision that depends on them."""

    instruction: Instruction
    what: str  # "its guard predicate", "a shared address", "the registers it reads"

    def text(self) -> str:
        ins = self.instruction
        where = f"{ins.file.rsplit('/', 1)[-1]}:{ins.line} " if ins.file and ins.line else ""
        return (
            f"blocks may differ: {where}(pc 0x{ins.pc:04x}, {ins.name}) {self.what} depends "
            "on the block index or on global memory, so every block was run"
        )


def _registers(ins: Instruction) -> list[tuple[str, int]]:
    """(kind, index) of the registers :data:`_WATCHED` says decide something."""
    if ins.opcode not in _WATCHED:
        return []
    which = _WATCHED[ins.opcode]
    ops = ins.operands
    regs: list[tuple[str, int]] = []
    for k in range(len(ops)) if which is None else which:
        o = ops[k] if k < len(ops) else None
        if isinstance(o, Reg):
            if o.kind in ("R", "UR", "P", "UP") and not o.is_zero and not o.is_true:
                regs.append((o.kind, o.index))
        elif isinstance(o, Mem):
            for r in (o.reg, o.ureg, o.desc):
                if r is not None and not r.is_zero:
                    pair = (ins.opcode in _PAIR_BASE and k == 0) or "64" in r.sel
                    regs += [(r.kind, r.index + i) for i in range(2 if pair else 1)]
        elif isinstance(o, Gdesc):
            regs += [(o.reg.kind, o.reg.index + i) for i in range(4)]
    return regs


class Watch:
    """The watch over the first block: each instruction's watched registers, and the first
    tainted decision found."""

    def __init__(self, instructions: list[Instruction], affine: Affine | None = None) -> None:
        self.instructions = instructions
        self.registers = [_registers(ins) for ins in instructions]
        self.differs: Differs | None = None
        self.decisions = 0
        # the forms of the block index's sums, where guards on it may be proven alike
        self.affine = affine
        # the blocks proven to take the first block's every guard: those whose index is at
        # or below this on every axis; the first guard that narrowed it from the whole grid
        self.box = affine.top.copy() if affine is not None else None
        self.narrowed: Differs | None = None

    def guard(self, m: int, blk: Block, kind: str, index: int, at: Idx) -> None:
        """Instruction ``m`` runs for the threads ``at`` under guard predicate
        ``kind``/``index``: is it free of taint, or proven grid-constant where it carries
        only the block index's (:mod:`.alike.affine`)?"""
        self.decisions += 1
        if self.differs is not None:
            return
        taint = (blk.tup if kind == "UP" else blk.tp)[index][at]
        if not np.any(taint):
            return
        only_block = not np.any(taint & np.uint8(~TAINT_BLOCK & 0xFF))
        if self.affine is not None and self.box is not None and only_block:
            ids = blk.ids(at)[np.asarray(taint) != 0]
            box = np.minimum(self.box, self.affine.box(kind, index, ids, blk))
            self.affine.proven += 1
            if (box < self.box).any() and self.narrowed is None:
                self.narrowed = Differs(self.instructions[m], "its guard predicate")
            self.box = box
            if box.any():  # blocks besides the first take its outcomes: go on
                return
        self.differs = self.narrowed or Differs(self.instructions[m], "its guard predicate")

    def operands(self, m: int, blk: Any, at: Any) -> None:
        """Instruction ``m`` runs for the threads ``at``: are its watched registers clean?"""
        regs = self.registers[m]
        if not regs or self.differs is not None:
            return
        self.decisions += 1
        tables = {"R": blk.tr, "UR": blk.tur, "P": blk.tp, "UP": blk.tup}
        for kind, index in regs:
            table = tables[kind]
            if index < len(table) and np.any(table[index][at]):
                self.differs = Differs(self.instructions[m], "a register it reads")
                return

    def requests(self, index: int | None, recorded: int) -> None:
        """The block recorded ``recorded`` shared-memory requests, the first with a tainted
        address at instruction ``index`` (None: none)."""
        self.decisions += recorded
        if self.differs is None and index is not None:
            self.differs = Differs(self.instructions[index], "a shared address")


@dataclass(frozen=True)
class Coverage:
    """How the trace covered the grid: ``block`` (one block), ``whole`` (every block ran),
    ``alike`` (the first block ran and stands for every block: :mod:`.alike`) or
    ``sample`` (blocks spread over a grid past the budget)."""

    mode: str
    blocks: int  # of the grid (1 for one block)
    run: int  # blocks that ran
    proof: Proof | None = None
    differs: Differs | None = None
    why_sampled: str | None = None

    @property
    def counted(self) -> int:
        """Blocks the totals count."""
        return self.blocks if self.mode == "alike" else self.run

    @property
    def weight(self) -> int:
        """How many blocks each recorded block stands for (alike: the first cluster's
        blocks stand for every cluster's; alike but for the edges: 1, the first block's
        records counted again apart, :class:`.alike.edges.FirstCounts`)."""
        whole = self.mode == "alike" and (self.proof is None or not self.proof.edges)
        return self.blocks // max(1, self.run) if whole else 1


#: a whole grid runs where the first block's thread-instructions times its blocks fit this
#: share of the launch's budget (room for blocks that run longer than the first)
WHOLE_SHARE = 8


def sampled(
    blocks: int, first: int, requests: int, budget: Budget, unit: str = "blocks"
) -> tuple[tuple[int, ...] | None, str | None]:
    """The blocks (clusters, where the launch has them: ``blocks`` counts those) to run when
    the whole grid would not fit the budget (estimated from the first one's
    thread-instructions and requests), and why; (None, None) when it fits."""
    ran = blocks * max(1, first)
    kept = blocks * requests * REQUEST_BYTES
    most_ran = budget.launch_instructions // WHOLE_SHARE
    most_kept = budget.recorded_bytes // 2
    if ran <= most_ran and kept <= most_kept:
        return None, None
    fit = min(most_ran // max(1, first), most_kept // max(1, requests * REQUEST_BYTES))
    chosen = sample(blocks, max(1, fit))
    past = []
    if ran > most_ran:
        past.append(
            f"run about {ran:,} thread-instructions (past {most_ran:,}, 1/{WHOLE_SHARE} of "
            "--max-launch-instructions)"
        )
    if kept > most_kept:
        past.append(f"keep about {kept >> 20:,} MiB of requests (past {most_kept >> 20} MiB)")
    why = (
        f"the whole grid would {' and '.join(past)}: {len(chosen):,} of its {blocks:,} {unit} "
        "traced, spread evenly over it (the first and the last included)"
    )
    return chosen, why
