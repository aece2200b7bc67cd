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
from ..distinct_rows import RecordsFull
from ..requests import InstructionRecords, Recorder, TmaFill
from . import budget as budgets
from . import grid as grids
from . import taint_flow
from .access_kind import shared_op_of
from .decode import Program, decode_function
from .op_table import MOVES
from .state import BLOCKED, Block, Launch, TraceError

PROGRESS_EVERY = 2048  # steps between progress calls


@dataclass
class Trace:
    """The result of running a kernel: its shared-memory requests and how much ran."""

    function: Function
    launch: Launch
    records: list[InstructionRecords]
    steps: int  # vectorized steps (one instruction for a group of threads)
    thread_instructions: int  # instructions executed, summed over threads
    blocks: int
    # instructions whose shared-memory traffic is not modelled (wgmma, TMA, mbarriers, bulk
    # copies) with their warp executions, in program order
    not_modelled: list[tuple[Instruction, int]]
    fills: tuple[TmaFill, ...] = ()  # shared memory written by TMA copies
    # compare-and-swap lanes that failed (and so retry their loop), by instruction index
    cas_failed: dict[int, int] = field(default_factory=dict)


def run(
    function: Function,
    launch: Launch,
    *,
    grid: bool = False,
    progress: Callable[[int, int], None] | None = None,
    budget: budgets.Budget = budgets.DEFAULT,
    batch_threads: int | None = None,
) -> Trace:
    """Run the block ``launch.block_idx`` (or, with ``grid``, every block, in batches of at
    most ``batch_threads`` threads run together: :mod:`.grid`), within ``budget``."""
    program = decode_function(function)
    recorder = Recorder(launch.warp_size, budget.recorded_bytes)
    plan = grids.plan(launch, grid=grid, batch_threads=batch_threads)
    steps = executed = 0
    deadline = time.monotonic() + budget.seconds
    unmodelled: dict[int, int] = {}
    cas_failed: dict[int, int] = {}
    of_blocks = f"of {plan.blocks:,}" if grid else ""
    for batch in plan.batches():
        blk = Block(launch, batch.ctas, batch.linear)
        blk.rec = recorder
        recorder.new_batch()
        limits = _Limits(budget, launch.threads, executed, deadline, of_blocks)
        with np.errstate(all="ignore"):  # float exceptions are values, as on the GPU
            s, e = run_block(
                function,
                program,
                blk,
                progress=_per_batch(progress, batch.linear[-1]),
                limits=limits,
            )
        steps += s
        executed += e
        for index, n in blk.unmodelled.items():
            unmodelled[index] = unmodelled.get(index, 0) + n
        for index, n in blk.cas_failed.items():
            cas_failed[index] = cas_failed.get(index, 0) + n
    listed = [(function.instructions[i], unmodelled[i]) for i in sorted(unmodelled)]
    fills = tuple(recorder.fills.values())
    records = recorder.instructions()
    return Trace(function, launch, records, steps, executed, plan.blocks, listed, fills, cas_failed)


@dataclass
class _Limits:
    """What one batch of blocks may still use of the launch's budget."""

    budget: budgets.Budget
    threads: int  # of one block
    before: int  # thread-instructions the launch executed before this batch
    deadline: float  # time.monotonic() at which the launch's time is up
    of_blocks: str  # "of 16,384" for a grid

    @property
    def block(self) -> int:
        """Thread-instructions one block may execute."""
        return self.budget.block_instructions(self.threads)

    @property
    def launch(self) -> int:
        """Thread-instructions the batch may execute before the launch's budget is spent."""
        return self.budget.launch_instructions - self.before

    def check(
        self,
        blk: Block,
        executed: int,
        per_cta: Any,
        instructions: list[Instruction],
        hits: list[int],
    ) -> None:
        """Raise the located error of the first budget ``blk`` has run out of, if any."""
        c = int(np.argmax(per_cta))
        name = f"{blk.cta_name(c)} {self.of_blocks}".rstrip()
        if int(per_cta[c]) > self.block:
            why = (
                f"{name} ran {int(per_cta[c]):,} thread-instructions without ending (budget: "
                f"{self.budget.per_thread:,} per thread x {self.threads:,} threads)"
            )
            raise budgets.stop(why, instructions, hits, "--max-instructions")
        if executed > self.launch:
            why = (
                f"the launch ran {self.before + executed:,} thread-instructions by {name} "
                f"(the budget is {self.budget.launch_instructions:,})"
            )
            raise budgets.stop(why, instructions, hits, "--max-launch-instructions")
        if time.monotonic() > self.deadline:
            why = f"the trace ran past its time limit of {self.budget.seconds:g} s in {name}"
            raise budgets.stop(why, instructions, hits, "--time-limit")
        recorded = sum(r.recorded_bytes for r in blk.rec.by_index.values())
        if recorded > self.budget.recorded_bytes:
            raise self.records_full(name)

    def records_full(self, name: str) -> TraceError:
        """The error of records past their bound (found by a look, or by :class:`RecordsFull`
        before an allocation)."""
        return TraceError(
            f"the trace's shared-memory records passed {self.budget.recorded_bytes >> 20} "
            f"MiB by {name} (the requests of every warp are kept for the report): trace "
            "fewer blocks (a smaller --grid)",
            None,
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
    limits: _Limits | None = None,
) -> tuple[int, int]:
    """Run a block (or a batch of blocks) to completion; returns (steps, thread
    instructions)."""
    instructions = function.instructions
    n_ins = len(instructions)
    if limits is None:
        deadline = time.monotonic() + budgets.DEFAULT.seconds
        limits = _Limits(budgets.DEFAULT, blk.cta_threads, 0, deadline, "")
    # checked at once past these (a single block: its budget; a batch: the launch's)
    limit = min(limits.block, limits.launch) if blk.ctas == 1 else limits.launch
    hits = [0] * n_ins  # executions of each instruction: where a runaway block loops
    threads = blk.threads
    everyone = slice(None)
    guards = [ins.guard for ins in instructions]
    kinds = [shared_op_of(ins) for ins in instructions]
    moving = [ins.opcode in MOVES for ins in instructions]
    per_cta = np.zeros(blk.ctas, dtype=np.int64)  # thread-instructions of each CTA
    decides = [taint_flow.conditions(ins) for ins in instructions]
    steps = executed = 0
    sched = blk.sched
    m = 0  # the instruction the threads of `at` run next
    at: Any = everyone  # those threads (a slice: all of them)
    at_cta: Any = None  # how many of them each CTA has
    nxt = 0  # the smallest instruction index of every other ready thread
    fast = False  # the threads of `at` simply went on to m (sched not yet written)
    while True:
        if fast:
            pass
        elif blk.calls_active:
            # a thread inside a subroutine ranks just after its call site
            key = np.where(
                blk.call_site >= 0, blk.call_site * (n_ins + 1) + 1 + sched, sched * (n_ins + 1)
            )
            key = np.where(sched >= BLOCKED, BLOCKED * (n_ins + 1), key)
            k = int(key.min())
            sel = np.flatnonzero(key == k)
            m = int(sched[sel[0]]) if len(sel) else int(BLOCKED)
            at, at_cta, nxt = (everyone if len(sel) == threads else sel), None, m
        else:
            m = int(sched.min())
            if m < BLOCKED:
                here = sched == m
                sel = np.flatnonzero(here)
                nxt = int(np.min(sched, where=~here, initial=BLOCKED))
                at, at_cta = (everyone if len(sel) == threads else sel), None
        if m >= BLOCKED:
            if blk.exited.all():
                break
            _release(blk, function)
            continue
        if m >= n_ins:
            last = instructions[-1]
            raise TraceError("execution ran past the end of the function", last)
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
            kind = kinds[m]
            if kind is not None:
                sel = blk.ids(at)
                blk.rec.predicated_off(
                    m, instructions[m], kind, _silent_warps(sel, sel[:0], blk.warp_size)
                )
            run_it = False  # @!PT: never executes
        elif g is not None and g.index != 7:
            pv = (blk.up if g.kind == "UP" else blk.p)[g.index][at]
            ok = ~pv if g.not_ else pv
            if not ok.all():
                sel = blk.ids(at)
                kind = kinds[m]
                if kind is not None:
                    off = _silent_warps(sel, sel[ok], blk.warp_size)
                    blk.rec.predicated_off(m, instructions[m], kind, off)
                if ok.any():
                    ix = sel[ok]
                else:
                    run_it = False
        if run_it:
            n = threads if isinstance(ix, slice) else len(ix)
            blk.steps = steps
            if decided is not None:
                taint_flow.enter(blk, at_ids, decided)
            try:
                program[m](blk, ix)
            except TraceError:
                raise
            except RecordsFull:
                name = f"{blk.cta_name(blk.ctas - 1)} {limits.of_blocks}".rstrip()
                raise limits.records_full(name) from None
            except (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError) as exc:
                raise TraceError(f"internal emulator error: {exc}", instructions[m]) from exc
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


def _cta_counts(blk: Block, at: Any) -> Any:
    """How many of the threads ``at`` (an index or every thread) each CTA has."""
    if isinstance(at, slice):
        return np.full(blk.ctas, blk.cta_threads, dtype=np.int64)
    return np.bincount(blk.cta[at], minlength=blk.ctas)


def _silent_warps(at_pc: Any, executing: Any, warp_size: int) -> int:
    """Warps with threads at the instruction but none whose guard holds."""
    return len(np.setdiff1d(np.unique(at_pc // warp_size), np.unique(executing // warp_size)))


def _barrier_place(blk: Block, at: int) -> str:
    """``shared offset 0x408`` (``... of block (1,0,0)`` in a batch) of an mbarrier."""
    c, off = blk.window(at)
    return f"shared offset 0x{off:x}" + (f" of {blk.cta_name(c)}" if blk.ctas > 1 else "")


def _release(blk: Block, function: Function) -> None:
    """Release, in each CTA, every barrier all its live threads (or its count) have reached,
    or fail."""
    live = np.bincount(blk.cta[~blk.exited], minlength=blk.ctas)
    released = False
    for bar in blk.barriers.values():
        waiting = blk.waiting == bar["id"]
        if not waiting.any():
            continue
        waits = np.bincount(blk.cta[waiting], minlength=blk.ctas)
        expected = bar["count"] if bar["count"] else live
        ready = (waits > 0) & (bar["arrived"] >= expected)
        if not ready.any():
            continue
        ids = np.flatnonzero(waiting & ready[blk.cta])
        blk.sched[ids] = blk.resume[ids]
        blk.waiting[ids] = -1
        true, false = bar["true"], bar["false"]
        reduced = ready & (true + false > 0)  # CTAs whose threads arrived with BAR.RED
        if reduced.any():
            kind = bar["red"]
            value = true if kind == "POPC" else (false == 0 if kind == "AND" else true > 0)
            value = np.asarray(value, dtype=np.int64)
            mine = ids[reduced[blk.cta[ids]]]
            blk.bar_value[mine] = value[blk.cta[mine]]
            blk.bar_pred[mine] = value[blk.cta[mine]] != 0
        bar["arrived"][ready] = 0
        true[ready] = 0
        false[ready] = 0
        released = True
    if not released and blk.mbarriers.blocked():
        message, where = blk.mbarriers.describe_deadlock(
            lambda t: int(blk.warp_ids[t // blk.warp_size]),
            lambda at: _barrier_place(blk, at),
        )
        raise TraceError(message, where)
    if not released:
        pcs = sorted({int(x) for x in blk.resume[blk.waiting >= 0]})
        where = function.instructions[pcs[0] - 1] if pcs else None
        stuck = int(np.argmax(np.bincount(blk.cta[blk.waiting >= 0], minlength=blk.ctas)))
        mine = blk.cta == stuck
        waiting = int(((blk.waiting >= 0) & mine).sum())
        who = f" in {blk.cta_name(stuck)}" if blk.ctas > 1 else ""
        raise TraceError(
            f"deadlock{who}: {waiting} threads wait at a barrier that the other "
            f"{int(live[stuck]) - waiting} live threads never reach",
            where,
        )
