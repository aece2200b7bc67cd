"""Run a kernel's SASS for one thread block, or for the blocks of a grid: the blocks in
batches (:mod:`.grid` makes them; each batch run to completion by
:func:`.scheduler.run_block`, whose scheduling rule decides which threads step next), the
grid's first block alone and watched where its blocks may stand for each other
(:mod:`.alike`), and what every batch added up to: the :class:`Trace`.

A grid whose blocks follow one path costs about one block's steps; blocks that differ run
their differing parts one after the other. A budget (:mod:`.budget`: instructions per block
and per launch, wall time, the records' memory) bounds runaway loops; a batch whose threads
all wait on global memory is set aside while the grid's blocks not yet run go, in launch
order (:mod:`.sync.waiting_blocks`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ...cuda.sass import Function, Instruction
from ...cuda.sass_operands import Const
from ..recorder import Dropping, Recorder
from ..requests import Coster, InstructionRecords, TmaFill
from . import budget as budgets
from . import grid as grids
from .access_kind import shared_op_of
from .alike.classes import Classes, counts_of, trace_grid
from .alike.rest import run_rest
from .alike.together import Ran, Watches
from .alike.watch import Chooser, Watch, Watcher
from .decode import Program, decode_function
from .scheduler import run_block
from .state import LOCAL_WINDOW_SLOT, Block, Launch
from .sync.shared_work import SharesWork, at_once, shares_work
from .sync.spin_loops import may_wait
from .sync.waiting_blocks import GridWaits, wait_note

#: the most clusters (blocks) of a grid traced by class, whose masks and block vectors span
#: the grid; a larger one (up to CUDA's 2^31-1 x 65,535 x 65,535) goes by :func:`_huge_grid`
MAX_CLASS_CLUSTERS = 1 << 22


@dataclass
class Trace:
    """The result of running a kernel: its shared-memory requests and how much ran."""

    function: Function
    launch: Launch
    records: list[InstructionRecords]
    steps: int  # vectorized steps (one instruction for a group of threads)
    thread_instructions: int  # instructions executed, summed over threads
    blocks: int  # blocks that ran
    # instructions whose shared-memory traffic is not modelled (wgmma, TMA, mbarriers, bulk
    # copies) with their warp executions, in program order
    not_modelled: list[tuple[Instruction, int]]
    fills: tuple[TmaFill, ...] = ()  # shared memory written by TMA copies
    # compare-and-swap lanes that failed (and so retry their loop), by instruction index
    cas_failed: dict[int, int] = field(default_factory=dict)
    coverage: grids.Coverage | None = None
    # distributed shared memory: the 32-byte sectors each remote instruction moved, by pc
    dsmem_sectors: dict[int, int] = field(default_factory=dict)
    # calls to functions outside the cubin that were stepped over (printf): pc -> the name
    callees: dict[int, str] = field(default_factory=dict)
    # warp executions of the instructions that cost op_misc wavefronts (hardware.misc), by pc,
    # and the CTA barriers each BAR instruction completed
    misc: dict[int, int] = field(default_factory=dict)
    misc_done: dict[int, int] = field(default_factory=dict)
    # the op_atom wavefronts of each remote atomic (hardware.dsmem), by pc
    dsmem_atoms: dict[int, int] = field(default_factory=dict)
    clock_spins: int = 0  # clock reads of a delay loop that jumped the clock (sync/clock.py)
    wait_note: str | None = None  # spins that yielded, blocks run out of order (sync/parking.py)
    # the taint of each remote instruction's addresses (global data, the block index), by pc
    dsmem_taint: dict[int, int] = field(default_factory=dict)
    # the op_atom wavefronts of each generic atomic that shared memory did not serve (on
    # global memory, declined there: hardware.dsmem), which no row carries, by pc
    generic_atoms: dict[int, int] = field(default_factory=dict)


#: opcodes of local memory: a kernel that has them, or that reads the local window's base
#: (a generic pointer to its stack), keeps 16 KiB a thread of it
_LOCAL_OPS = frozenset({"LDL", "STL"})


def _uses_local(ins: Instruction) -> bool:
    window = (LOCAL_WINDOW_SLOT, LOCAL_WINDOW_SLOT + 4)
    return ins.opcode in _LOCAL_OPS or any(
        isinstance(o, Const) and o.bank == 0 and o.offset in window for o in ins.operands
    )


def run(
    function: Function,
    launch: Launch,
    *,
    grid: bool = False,
    progress: Callable[[int, int], None] | None = None,
    budget: budgets.Budget = budgets.DEFAULT,
    batch_threads: int | None = None,
    every_block: bool = False,
    fold: Coster | None = None,
) -> Trace:
    """Run the block ``launch.block_idx``, or with ``grid`` the grid: its first block
    alone and watched, standing for every block when they are proven alike (not with
    ``every_block``: a caller that reads the memory the blocks write), else the others in
    batches of at most ``batch_threads`` threads (:mod:`.grid`), sampled where the grid
    would run past ``budget``; ``fold`` costs the records when they reach their bound."""
    program = decode_function(function)
    recorder = Recorder(launch.warp_size, budget.recorded_bytes, fold)
    local = any(_uses_local(ins) for ins in function.instructions)
    rows = grids.register_rows(function.instructions)
    plan = grids.plan(launch, grid=grid, local=local, registers=rows, batch_threads=batch_threads)
    shares = shares_work(function.instructions, program.destinations) if grid else None
    if shares is not None and plan.clusters > 1:  # as many together as the GPU holds
        together = at_once(launch.resident, launch.cluster_ctas, plan.per_batch)
        plan = replace(plan, per_batch=together)
    run_ = _Run(function, program, launch, recorder, budget, progress, plan.blocks, grid)
    run_.registers = rows
    if grid and 1 < plan.clusters <= MAX_CLASS_CLUSTERS:  # blocks may wait on each other
        one = grids.batch_bytes(launch, launch.cluster_ctas, local=False, registers=rows)
        most = max(1, budgets.REPEAT_BYTES // max(1, one))  # a batch whose spins can be proven
        if may_wait(function, program.destinations):  # every batch (sync/waiting_blocks.py)
            plan = replace(plan, per_batch=min(plan.per_batch, most))
        hold, restore = recorder.held, recorder.hold_back
        run_.waits = GridWaits(plan, run_.silent, hold, restore, most, run_.ledger)
    if shares is not None and plan.clusters > 1:
        why = SharesWork(shares, plan.blocks, plan.per_batch * launch.cluster_ctas, launch.resident)
        return _resident(run_, plan, why, every_block)
    if grid and plan.clusters > MAX_CLASS_CLUSTERS and not every_block:
        return _huge_grid(run_, plan, budget)
    if grid and plan.clusters > 1 and not every_block:
        traced: Trace = trace_grid(run_, plan, budget)  # blocks (clusters) traced by class
        return traced
    for batch in [plan.first(), *plan.rest()]:
        run_.batch(batch, None)
    mode = "block" if plan.blocks == 1 else "whole"
    return run_.trace(grids.Coverage(mode, plan.blocks, run_.blocks))


def _resident(run_: _Run, plan: grids.Plan, why: SharesWork, every_block: bool) -> Trace:
    """A grid whose blocks take work from one another (:mod:`.sync.shared_work`): its
    clusters (blocks) in launch order, as many together as the GPU holds at once, the first
    batch from the start; the others as any grid's blocks after its first (:func:`run_rest`:
    an even sample of them where they would pass the budget or the time left; they ran to
    half of the launch's time before, a grid of 2^62 one-ticket blocks 74 s) (not with
    ``every_block``: a caller that reads what they wrote)."""
    n = plan.clusters
    first = range(min(n, plan.per_batch))
    run_.batch(plan.only(first), None, lead=True)
    rest = range(len(first), n)
    sampled = None
    if every_block:
        for batch in plan.rest(rest):
            run_.batch(batch, None)
    else:
        unit = "clusters" if plan.launch.cluster_ctas > 1 else "blocks"
        what = f"{unit} after the first {len(first):,}"
        _, sampled = run_rest(run_, plan, rest, run_.budget, what)
    mode = "whole" if sampled is None else "sample"
    coverage = grids.Coverage(mode, plan.blocks, run_.blocks, differs=why, why_sampled=sampled)
    return run_.trace(coverage)


def _huge_grid(run_: _Run, plan: grids.Plan, budget: budgets.Budget) -> Trace:
    """A grid past :data:`MAX_CLASS_CLUSTERS`: its first cluster (block) runs watched, and
    counts for every one where no decision depends on the block index or on data; else an
    even sample of the others runs as well (nothing here grows with the grid)."""
    recorder, n = run_.recorder, plan.clusters
    unit = "clusters" if plan.launch.cluster_ctas > 1 else "blocks"
    chooses = Chooser(run_.program, run_.function, run_.kinds)
    shared = [k is not None for k in run_.kinds]
    watch = Watch(run_.function.instructions, None, shared, chooses=chooses)
    recorder.tainted = {}
    run_.batch(plan.first(), watch)
    watch.requests(recorder.tainted, recorder.requests)
    if watch.differs is None:
        proof = grids.Proof(n, watch.decisions, unit, grid=n, chosen=len(watch.chosen))
        return run_.trace(grids.Coverage("alike", plan.blocks, run_.blocks, proof=proof))
    what = f"{unit} after the first"
    chosen, why = run_rest(run_, plan, range(1, n), budget, what)  # no list
    mode = "whole" if chosen is None else "sample"
    coverage = grids.Coverage(
        mode, plan.blocks, run_.blocks, differs=watch.differs, why_sampled=why
    )
    return run_.trace(coverage)


class _Run:
    """The blocks run so far and what they added up to."""

    def __init__(
        self,
        function: Function,
        program: Program,
        launch: Launch,
        recorder: Recorder,
        budget: budgets.Budget,
        progress: Callable[[int, int], None] | None,
        blocks: int,
        grid: bool,
    ) -> None:
        self.function, self.program, self.launch = function, program, launch
        self.recorder, self.budget, self.progress = recorder, budget, progress
        self.steps = self.executed = self.blocks = self.clock_spins = 0
        self.registers = 256  # rows of the register file
        self.kinds = [shared_op_of(ins) for ins in function.instructions]
        self.unmodelled: dict[int, int] = {}
        self.sectors: dict[int, int] = {}  # distributed shared memory, by index
        self.atoms: dict[int, int] = {}  # remote atomics' op_atom wavefronts, by index
        self.generic_atoms: dict[int, int] = {}  # generic ones' that shared memory did not serve
        self.misc: dict[int, int] = {}  # op_misc instructions' warp executions, by index
        self.misc_done: dict[int, int] = {}  # CTA barriers completed, by index
        self.callees: dict[int, str] = {}  # functions outside the cubin called, by index
        self.cas_failed: dict[int, int] = {}
        self.deadline = time.monotonic() + budget.seconds
        self.of_blocks = f"of {blocks:,}" if grid else ""
        self.waits: GridWaits | None = None  # blocks that wait on others (a grid's)
        self.parks = 0  # groups of threads that spun and yielded to others (sync/parking.py)
        self.ledger = budgets.Ledger()  # what the launch's budget has seen run
        self.last: Ran | None = None  # what the batch run last counted per CTA

    def silent(self, batch: grids.Batch, silent: bool) -> None:
        """Run ``batch`` while a batch waits (:class:`GridWaits`)."""
        self.batch(batch, None, silent)

    def batch(
        self,
        batch: grids.Batch,
        watch: Watcher | None,
        silent: bool = False,
        lead: bool = False,
        until: float = math.inf,
    ) -> None:
        """Run the blocks of ``batch`` together (those a wait ran already left out);
        ``silent``: for what they write only (their class counted them: they count nothing);
        ``lead``: the resident blocks a grid that shares its work runs first, bounded in time
        as one block alone is (a ticket loop that never ends ran to the launch's 180 s);
        ``until``: when a watched round's time is up (:class:`.budget.Late`)."""
        waits = self.waits
        if waits is not None:
            fresh = waits.fresh(batch)
            if fresh is None:
                return
            batch = fresh
            waits.start(batch)
        blk = Block(self.launch, batch.ctas, batch.linear, self.registers)
        if isinstance(watch, Watches):  # classes' blocks together: counted per CTA too
            blk.by_cta = {}
        blk.rec = Dropping(self.launch.warp_size) if silent else self.recorder
        blk.rec.new_batch(blk.n_warps)
        limits = budgets.Limits(
            self.budget, self.launch.threads, 0, self.deadline, self.of_blocks, self.ledger
        )
        limits.until = until
        if len(batch.ctas) <= self.launch.cluster_ctas or lead:  # one block (cluster) alone
            limits.alone_until = time.monotonic() + self.budget.alone_seconds
            if len(batch.ctas) > self.launch.cluster_ctas:
                limits.alone = f"the {len(batch.ctas):,} resident blocks run first"
        progress = _per_batch(self.progress, batch.linear[-1])
        stuck = None if waits is None else waits.stuck
        try:
            with np.errstate(all="ignore"):  # float exceptions are values, as on the GPU
                s, e = run_block(
                    self.function, self.program, blk, progress=progress, limits=limits,
                    watch=watch, stuck=stuck,
                )  # fmt: skip
        except BaseException:
            if waits is not None:  # the threads of batches set aside end (on the caller's)
                waits.abandon()
            raise
        self.parks += blk.parks
        self.ledger.done += e  # silent or not: it ran
        self.last = Ran.of(blk)
        if waits is not None:
            waits.end(batch)
        if silent:
            return
        self.steps += s
        self.executed += e
        self.blocks += len(batch.ctas)
        self.clock_spins += blk.clock.spins
        for mine, theirs in (
            (self.unmodelled, blk.unmodelled),
            (self.sectors, blk.dsmem_sectors),
            (self.atoms, blk.dsmem_atoms),
            (self.generic_atoms, blk.generic_atoms),
            (self.cas_failed, blk.cas_failed),
            (self.misc, blk.misc),
            (self.misc_done, blk.misc_done),
        ):
            for index, n in theirs.items():
                mine[index] = mine.get(index, 0) + n
        self.callees.update(blk.callees)

    def trace(self, coverage: grids.Coverage, classes: Classes | None = None) -> Trace:
        ins = self.function.instructions
        counts = counts_of(self)
        if classes is not None:  # each class's block stands for its class (its records
            counts = classes.plus(counts)  # count again: Recorder.close_class)
        unmodelled, sectors, cas = counts.unmodelled, counts.sectors, counts.cas_failed
        executed, misc_runs, done = counts.executed, counts.misc, counts.misc_done
        listed = [(ins[i], unmodelled[i]) for i in sorted(unmodelled)]
        return Trace(
            self.function,
            self.launch,
            self.recorder.instructions(),
            self.steps,
            executed,
            self.blocks,
            listed,
            tuple(self.recorder.fills.values()),
            cas,
            coverage,
            {ins[i].pc: n for i, n in sectors.items()},
            {ins[i].pc: name for i, name in self.callees.items()},
            {ins[i].pc: n for i, n in sorted(misc_runs.items())},
            {ins[i].pc: n for i, n in sorted(done.items())},
            {ins[i].pc: n for i, n in counts.atoms.items()},
            self.clock_spins,
            wait_note(self.parks, self.waits),
            {ins[i].pc: t for i, t in self.recorder.remote.items()},
            {ins[i].pc: n for i, n in counts.generic_atoms.items()},
        )


def _per_batch(
    progress: Callable[[int, int], None] | None, block: int
) -> Callable[[int], None] | None:
    if progress is None:
        return None
    report = progress

    def call(executed: int) -> None:
        report(executed, block)

    return call
