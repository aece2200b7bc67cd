"""Run a kernel's SASS for one thread block, or for the blocks of a grid run together.

Scheduling rule (independent thread scheduling, emulated): of the threads that are
ready (not exited, not waiting at a barrier), those with the smallest instruction
index run next, all together in one vectorized step, whatever their warp and whatever
their block. Threads that diverge therefore run one side after the other and meet
again where their pcs become equal, which is where the hardware reconverges structured
code (BSYNC, the end of an if, the exit of a loop); a warp-level instruction (SHFL,
VOTE) sees every converged lane of its warp at once. Blocks run together the same way
(:mod:`.grid` makes the batches): a grid whose blocks follow one path costs about one
block's steps, blocks that differ run their differing parts one after the other. A
thread at BAR.SYNC waits; when no thread is ready, each barrier that every live
thread of a CTA (or its thread count) has reached is released in that CTA. If none
can be released the kernel deadlocked: an error. EXIT retires a thread. A budget
(:mod:`.budget`: instructions per block and per launch, wall time, the records'
memory) bounds runaway loops, with an error that names the loop. Decisions on global
data (a tainted guard or branch) taint what they decide (:mod:`.taint_flow`).

Between two instructions that move no thread elsewhere (:data:`.op_table.MOVES`), the
threads at the smallest index simply go on to the next one: the scheduler looks at
every thread again only after a branch, an exit or a barrier, or where other threads
wait at the next instruction.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...cuda.sass import Function, Instruction
from ...cuda.sass_operands import Const
from ...hardware import misc
from ..distinct_rows import RecordsFull
from ..recorder import Recorder
from ..requests import Coster, InstructionRecords, TmaFill
from . import budget as budgets
from . import grid as grids
from . import taint_flow
from .access_kind import guarded_kind, shared_op_of
from .alike.classes import Classes, counts_of, run_rest, trace_grid
from .alike.watch import Watch
from .decode import Program, decode_function
from .op_table import MOVES, widens
from .state import BLOCKED, LOCAL_WINDOW_SLOT, Block, Launch, TraceError
from .sync.barriers import release
from .sync.convergence import arrived, settle

PROGRESS_EVERY = 2048  # steps between progress calls
#: the most clusters (blocks) of a grid traced by class, whose masks and block vectors span
#: the grid; a larger one (up to CUDA's 2^31-1 x 65,535 x 65,535) goes by :func:`_huge_grid`
MAX_CLASS_CLUSTERS = 1 << 22
#: a step of a register-to-register instruction runs over every thread of the batch, its
#: writes masked, where at least 1/_WIDE_SHARE of them run it: contiguous rows cost less
#: than gathering and scattering a part of them (the 4,096 differing blocks of make bench)
_WIDE_SHARE = 3


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
    run_ = _Run(function, program, launch, recorder, budget, progress, plan.blocks, grid)
    run_.registers = rows
    if grid and plan.clusters > MAX_CLASS_CLUSTERS and not every_block:
        return _huge_grid(run_, plan, budget)
    if grid and plan.clusters > 1 and not every_block:
        traced: Trace = trace_grid(run_, plan, budget)  # blocks (clusters) traced by class
        return traced
    for batch in [plan.first(), *plan.rest()]:
        run_.batch(batch, None)
    mode = "block" if plan.blocks == 1 else "whole"
    return run_.trace(grids.Coverage(mode, plan.blocks, run_.blocks))


def _huge_grid(run_: _Run, plan: grids.Plan, budget: budgets.Budget) -> Trace:
    """A grid past :data:`MAX_CLASS_CLUSTERS`: its first cluster (block) runs watched, and
    counts for every one where no decision depends on the block index or on data; else an
    even sample of the others runs as well (nothing here grows with the grid)."""
    recorder, n = run_.recorder, plan.clusters
    unit = "clusters" if plan.launch.cluster_ctas > 1 else "blocks"
    watch = Watch(run_.function.instructions, None, [k is not None for k in run_.kinds])
    recorder.tainted = {}
    run_.batch(plan.first(), watch)
    watch.requests(recorder.tainted, recorder.requests)
    if watch.differs is None:
        proof = grids.Proof(n, watch.decisions, unit, grid=n)
        return run_.trace(grids.Coverage("alike", plan.blocks, run_.blocks, proof=proof))
    what = f"{unit} after the first"
    chosen, why = run_rest(run_, plan, range(1, n), run_.executed, budget, what)  # no list
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
        self.misc: dict[int, int] = {}  # op_misc instructions' warp executions, by index
        self.misc_done: dict[int, int] = {}  # CTA barriers completed, by index
        self.callees: dict[int, str] = {}  # functions outside the cubin called, by index
        self.cas_failed: dict[int, int] = {}
        self.deadline = time.monotonic() + budget.seconds
        self.of_blocks = f"of {blocks:,}" if grid else ""
        self.ran: set[int] = set()  # the blocks (their numbers in launch order) run so far

    def batch(self, batch: grids.Batch, watch: Watch | None) -> None:
        """Run the blocks of ``batch`` together."""
        blk = Block(self.launch, batch.ctas, batch.linear, self.registers)
        blk.rec = self.recorder
        self.recorder.new_batch(blk.n_warps)
        limits = budgets.Limits(
            self.budget, self.launch.threads, self.executed, self.deadline, self.of_blocks
        )
        progress = _per_batch(self.progress, batch.linear[-1])
        with np.errstate(all="ignore"):  # float exceptions are values, as on the GPU
            try:
                s, e = run_block(
                    self.function, self.program, blk, progress=progress, limits=limits, watch=watch
                )
            except budgets.SpinError as exc:
                raise budgets.ahead_of_order(exc, self.ran, batch.linear) from None
        self.ran.update(batch.linear)
        self.steps += s
        self.executed += e
        self.blocks += len(batch.ctas)
        self.clock_spins += blk.clock.spins
        for mine, theirs in (
            (self.unmodelled, blk.unmodelled),
            (self.sectors, blk.dsmem_sectors),
            (self.atoms, blk.dsmem_atoms),
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


def run_block(
    function: Function,
    program: Program,
    blk: Block,
    *,
    progress: Callable[[int], None] | None = None,
    limits: budgets.Limits | None = None,
    watch: Watch | None = None,
) -> tuple[int, int]:
    """Run a block (or a batch of blocks) to completion, its decisions checked by ``watch``
    where given; returns (steps, thread instructions)."""
    instructions = function.instructions
    n_ins = len(instructions)
    if limits is None:
        deadline = time.monotonic() + budgets.DEFAULT.seconds
        limits = budgets.Limits(budgets.DEFAULT, blk.cta_threads, 0, deadline, "")
    # checked at once past these (a single block: its budget; a batch: the launch's)
    limit = min(limits.block, limits.launch) if blk.ctas == 1 else limits.launch
    hits = [0] * n_ins  # executions of each instruction: where a runaway block loops
    threads = blk.threads
    everyone = slice(None)
    guards = [ins.guard for ins in instructions]
    kinds = [shared_op_of(ins) for ins in instructions]
    guarded = [guarded_kind(ins) for ins in instructions]  # what a warp guarded off records
    misc_cost = [misc.rule_for(ins.opcode, ins.mods) is not None for ins in instructions]
    retires = [ins.opcode == "EXIT" for ins in instructions]
    moving = [ins.opcode in MOVES for ins in instructions]
    per_cta = np.zeros(blk.ctas, dtype=np.int64)  # thread-instructions of each CTA
    blk.clock.work = per_cta  # what its SM clock counts (sync/clock.py)
    decides = [taint_flow.conditions(ins) for ins in instructions]
    wide = [widens(ins, d) for ins, d in zip(instructions, program.destinations, strict=True)]
    mask_of: Any = everyone  # the threads of the last wide step, and as a mask
    mask: Any = None
    steps = executed = 0
    sched = blk.sched
    m = 0  # the instruction the threads of `at` run next
    at: Any = everyone  # those threads (a slice: all of them)
    at_cta: Any = None  # how many of them each CTA has
    nxt = 0  # the smallest instruction index of every other ready thread
    fast = False  # the threads of `at` simply went on to m (sched not yet written)
    repeats = budgets.Repeats(instructions, threads)
    while True:
        if fast:
            pass
        elif blk.calls_active:
            sel = blk.next_threads()  # a thread inside a subroutine ranks after its call site
            m = int(sched[sel[0]]) if len(sel) else int(BLOCKED)
            at, at_cta, nxt = (everyone if len(sel) == threads else sel), None, m
        else:
            m = int(sched.min())
            if m < BLOCKED and m == int(sched.max()):  # every thread at one instruction
                at, at_cta, nxt = everyone, None, int(BLOCKED)
            elif m < BLOCKED:
                here = sched == m
                sel = np.flatnonzero(here)
                nxt = int(np.min(sched, where=~here, initial=BLOCKED))
                at, at_cta = (everyone if len(sel) == threads else sel), None
        if not fast and blk.converge.parts > 1 and m < BLOCKED:
            at, nxt = _one_part(blk, at, m, nxt)  # a warp's parts run apart (convergence)
        if m >= BLOCKED:
            if blk.exited.all():
                break
            release(blk, function)
            continue
        if m >= n_ins:
            last = instructions[-1]
            raise TraceError("execution ran past the end of the function", last)
        if not fast and hits[m] >= repeats.first and repeats.look(blk, m, hits[m]):
            raise repeats.error(blk, instructions, hits)
        ix: Any = at
        if moving[m]:  # the step may move some of them elsewhere: sched must be true first
            sched[at] = m + 1
        decided = None  # the taint of the decisions behind this step (taint_flow)
        if blk.regions or decides[m] is not None:
            at_ids = blk.ids(at)
            decided = taint_flow.before_step(blk, program, function, kinds, m, at_ids, decides[m])
        g = guards[m]
        run_it = True
        if g is not None and g.index == 7 and g.not_:
            kind = guarded[m]
            if kind is not None:
                sel = blk.ids(at)
                blk.rec.predicated_off(
                    m, instructions[m], kind, _silent_warps(sel, sel[:0], blk.warp_size)
                )
            run_it = False  # @!PT: never executes
        elif g is not None and g.index != 7:
            pv = (blk.up if g.kind == "UP" else blk.p)[g.index][at]
            if watch is not None:
                watch.guard(m, blk, g.kind, g.index, at)
            ok = ~pv if g.not_ else pv
            if np.count_nonzero(ok) < ok.size:  # (cheaper than .all() on a warp)
                sel = blk.ids(at)
                kind = guarded[m]
                if kind is not None:
                    off = _silent_warps(sel, sel[ok], blk.warp_size)
                    blk.rec.predicated_off(m, instructions[m], kind, off)
                if decided is not None and m in program.skipped:  # a store data kept off
                    program.skipped[m](blk, sel[~ok], decided[~ok])
                if np.count_nonzero(ok):
                    ix = sel[ok]
                else:
                    run_it = False
        if run_it:
            forms = None
            if watch is not None:
                watch.operands(m, blk, ix)
                if watch.forms is not None:
                    forms = watch.forms.before(m, blk, ix)
            n = threads if isinstance(ix, slice) else len(ix)
            if decided is not None:
                taint_flow.enter(blk, at_ids, decided)
            try:
                if ix is everyone or not wide[m]:  # every thread: writes land where they run
                    program[m](blk, ix)
                elif _WIDE_SHARE * n >= threads and watch is None and decided is None:
                    if mask_of is not ix:  # the mask of these threads (made once for them)
                        mask, mask_of = np.zeros(threads, dtype=bool), ix
                        mask[ix] = True
                    blk.run_wide(program[m], mask)
                else:
                    program[m](blk, ix)
            except TraceError:
                raise
            except RecordsFull:
                name = f"{blk.cta_name(blk.ctas - 1)} {limits.of_blocks}".rstrip()
                raise limits.records_full(name) from None
            except (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError) as exc:
                raise TraceError(f"internal emulator error: {exc}", instructions[m]) from exc
            if watch is not None and watch.forms is not None:
                watch.forms.after(forms, m, blk, ix)
            if misc_cost[m]:
                blk.count_misc(m, ix, retires[m])
            executed += n
            hits[m] += 1
            if blk.ctas == 1:
                per_cta[0] += n
            elif ix is at:
                if at_cta is None:
                    at_cta = _cta_counts(blk, at)
                per_cta += at_cta
            else:
                per_cta += np.bincount(blk.cta[ix], minlength=blk.ctas)
            if executed > limit or steps % budgets.CHECK_EVERY == 0:
                limits.check(blk, executed, per_cta, instructions, hits)
            if progress is not None and steps % PROGRESS_EVERY == 0:
                progress(executed)
        if decided is not None:
            taint_flow.after_step(blk, program, m, at_ids, decided)
        if moving[m] and blk.converge.pulled:
            executed += arrived(blk, per_cta)  # a yield took threads to their BSYNC
        if moving[m] and blk.converge.waiters:
            settle(blk, at)  # a lane left, exited or yielded: the waits it held may clear
        steps += 1
        # next: the same threads at m + 1, unless the step moved threads or others wait there
        if moving[m]:
            fast = False
        elif m + 1 < nxt and not blk.calls_active:
            fast = True
            m += 1
        else:
            sched[at] = m + 1
            fast = False
    return steps, executed


def _one_part(blk: Block, at: Any, m: int, nxt: int) -> tuple[Any, int]:
    """Of the threads ``at`` (at instruction ``m``), each warp's first part; the others
    wait at ``m`` (then the next smallest index)."""
    sel = blk.ids(at)
    kept = blk.converge.one_part(sel)
    return (at, nxt) if len(kept) == len(sel) else (kept, m)


def _cta_counts(blk: Block, at: Any) -> Any:
    """How many of the threads ``at`` (an index or every thread) each CTA has."""
    if isinstance(at, slice):
        return np.full(blk.ctas, blk.cta_threads, dtype=np.int64)
    return np.bincount(blk.cta[at], minlength=blk.ctas)


def _silent_warps(at_pc: Any, executing: Any, warp_size: int) -> int:
    """Warps with threads at the instruction but none whose guard holds."""
    return len(np.setdiff1d(np.unique(at_pc // warp_size), np.unique(executing // warp_size)))
