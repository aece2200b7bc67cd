"""Run a kernel's SASS for one thread block (or every block of a grid), functionally.

Scheduling rule (independent thread scheduling, emulated): of the threads that are
ready (not exited, not waiting at a barrier), those with the smallest instruction
index run next, all together in one vectorized step, whatever their warp. Threads
that diverge therefore run one side after the other and meet again where their pcs
become equal, which is where the hardware reconverges structured code (BSYNC, the
end of an if, the exit of a loop); a warp-level instruction (SHFL, VOTE) sees every
converged lane of its warp at once. A thread at BAR.SYNC waits; when no thread is
ready, each barrier that every live thread (or its thread count) has reached is
released. If none can be released the kernel deadlocked: an error. EXIT retires a
thread. A budget (:mod:`.budget`: instructions per block and per launch, wall time, the
records' memory) bounds runaway loops, with an error that names the loop.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...cuda.sass import Function, Instruction
from ..requests import InstructionRecords, Recorder, TmaFill
from . import budget as budgets
from .access_kind import shared_op_of
from .decode import decode_function
from .op_table import Step
from .ops.control import BLOCKED
from .state import Block, Launch, TraceError

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
    cas_failed: dict[int, int] = dataclasses.field(default_factory=dict)


def run(
    function: Function,
    launch: Launch,
    *,
    grid: bool = False,
    progress: Callable[[int, int], None] | None = None,
    budget: budgets.Budget = budgets.DEFAULT,
) -> Trace:
    """Run the block ``launch.block_idx`` (or, with ``grid``, every block in order), within
    ``budget`` (:mod:`.budget`)."""
    program = decode_function(function)
    recorder = Recorder(launch.warp_size)
    gx, gy, gz = launch.grid
    count = gx * gy * gz if grid else 1
    blocks: Iterator[tuple[int, int, int]] = (
        ((x, y, z) for z, y, x in itertools.product(range(gz), range(gy), range(gx)))
        if grid
        else iter([launch.block_idx])
    )
    steps = executed = 0
    deadline = time.monotonic() + budget.seconds
    unmodelled: dict[int, int] = {}
    cas_failed: dict[int, int] = {}
    for k, idx in enumerate(blocks):
        one = dataclasses.replace(launch, block_idx=idx)
        blk = Block(one)
        blk.rec = recorder
        blk.warp_base = (idx[0] + gx * (idx[1] + gy * idx[2])) * blk.n_warps if grid else 0
        limits = _Limits(budget, blk.threads, executed, deadline, f"of {count:,}" if grid else "")
        with np.errstate(all="ignore"):  # float exceptions are values, as on the GPU
            s, e = run_block(
                function, program, blk, progress=_per_block(progress, k), limits=limits
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
    return Trace(function, launch, records, steps, executed, count, listed, fills, cas_failed)


@dataclass(frozen=True)
class _Limits:
    """What one block may still use of the launch's budget."""

    budget: budgets.Budget
    threads: int
    before: int  # thread-instructions the launch executed before this block
    deadline: float  # time.monotonic() at which the launch's time is up
    of_blocks: str  # "of 16,384" for a grid

    @property
    def block(self) -> int:
        return min(
            self.budget.block_instructions(self.threads),
            self.budget.launch_instructions - self.before,
        )

    def check(
        self, blk: Block, executed: int, instructions: list[Instruction], hits: list[int]
    ) -> None:
        """Raise the located error of the first budget ``blk`` has run out of, if any."""
        name = f"{budgets.block_name(blk.launch.block_idx)} {self.of_blocks}".rstrip()
        if executed > self.budget.block_instructions(self.threads):
            why = (
                f"{name} ran {executed:,} thread-instructions without ending (budget: "
                f"{self.budget.per_thread:,} per thread x {self.threads:,} threads)"
            )
            raise budgets.stop(why, instructions, hits, "--max-instructions")
        if executed > self.block:
            why = (
                f"the launch ran {self.before + executed:,} thread-instructions by {name} "
                f"(the budget is {self.budget.launch_instructions:,})"
            )
            raise budgets.stop(
                why,
                instructions,
                hits,
                "--max-launch-instructions",
            )
        if time.monotonic() > self.deadline:
            why = f"the trace ran past its time limit of {self.budget.seconds:g} s in {name}"
            raise budgets.stop(why, instructions, hits, "--time-limit")
        recorded = sum(r.recorded_bytes for r in blk.rec.by_index.values())
        if recorded > self.budget.recorded_bytes:
            raise TraceError(
                f"the trace's shared-memory records passed {self.budget.recorded_bytes >> 20} "
                f"MiB by {name} (the requests of every warp are kept for the report): trace "
                "fewer blocks (a smaller --grid)",
                None,
            )


def _per_block(
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
    program: list[Step],
    blk: Block,
    *,
    progress: Callable[[int], None] | None = None,
    limits: _Limits | None = None,
) -> tuple[int, int]:
    """Run one block to completion; returns (steps, thread instructions)."""
    instructions = function.instructions
    n_ins = len(instructions)
    if limits is None:
        deadline = time.monotonic() + budgets.DEFAULT.seconds
        limits = _Limits(budgets.DEFAULT, blk.threads, 0, deadline, "")
    limit = limits.block
    hits = [0] * n_ins  # executions of each instruction: where a runaway block loops
    threads = blk.threads
    everyone = slice(None)
    guards = [ins.guard for ins in instructions]
    kinds = [shared_op_of(ins) for ins in instructions]
    steps = executed = 0
    sched = blk.sched
    while True:
        if blk.calls_active:
            # a thread inside a subroutine ranks just after its call site
            key = np.where(
                blk.call_site >= 0, blk.call_site * (n_ins + 1) + 1 + sched, sched * (n_ins + 1)
            )
            key = np.where(sched >= BLOCKED, BLOCKED * (n_ins + 1), key)
            k = int(key.min())
            sel = np.flatnonzero(key == k)
            m = int(sched[sel[0]]) if len(sel) else int(BLOCKED)
        else:
            m = int(sched.min())
            sel = None
        if m >= BLOCKED:
            if blk.exited.all():
                break
            _release(blk, function)
            continue
        if m >= n_ins:
            last = instructions[-1]
            raise TraceError("execution ran past the end of the function", last)
        if sel is None:
            sel = np.flatnonzero(sched == m)
        ix: Any = everyone if len(sel) == threads else sel
        sched[ix] = m + 1
        g = guards[m]
        if g is not None and g.index == 7 and g.not_:
            kind = kinds[m]
            if kind is not None:
                blk.rec.predicated_off(
                    m, instructions[m], kind, _silent_warps(sel, sel[:0], blk.warp_size)
                )
            steps += 1  # @!PT: never executes
            continue
        if g is not None and g.index != 7:
            pv = (blk.up if g.kind == "UP" else blk.p)[g.index, ix]
            ok = ~pv if g.not_ else pv
            if not ok.all():
                kind = kinds[m]
                if kind is not None:
                    off = _silent_warps(sel, sel[ok], blk.warp_size)
                    blk.rec.predicated_off(m, instructions[m], kind, off)
            if not ok.any():
                steps += 1
                continue
            if not ok.all():
                ix = sel[ok]
        n = threads if isinstance(ix, slice) else len(ix)
        blk.steps = steps
        try:
            program[m](blk, ix)
        except TraceError:
            raise
        except (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError) as exc:
            raise TraceError(f"internal emulator error: {exc}", instructions[m]) from exc
        steps += 1
        executed += n
        hits[m] += 1
        if executed > limit or steps % budgets.CHECK_EVERY == 0:
            limits.check(blk, executed, instructions, hits)
        if progress is not None and steps % PROGRESS_EVERY == 0:
            progress(executed)
    return steps, executed


def _silent_warps(at_pc: Any, executing: Any, warp_size: int) -> int:
    """Warps with threads at the instruction but none whose guard holds."""
    return len(np.setdiff1d(np.unique(at_pc // warp_size), np.unique(executing // warp_size)))


def _release(blk: Block, function: Function) -> None:
    """Release every barrier all live threads (or its count) have reached, or fail."""
    live = int((~blk.exited).sum())
    released = False
    for bar_id, bar in blk.barriers.items():
        waiting = blk.waiting == bar_id
        if not waiting.any():
            continue
        expected = bar["count"] if bar["count"] else live
        if bar["arrived"] < expected:
            continue
        ids = np.flatnonzero(waiting)
        blk.sched[ids] = blk.resume[ids]
        blk.waiting[ids] = -1
        if bar["red"]:
            preds = np.concatenate([entry[0] for entry in bar["red"]])
            kind = bar["red"][0][1]
            value = (
                int(preds.sum())
                if kind == "POPC"
                else int(preds.all() if kind == "AND" else preds.any())
            )
            blk.bar_value[ids] = value
            blk.bar_pred[ids] = bool(value)
        bar["arrived"] = 0
        bar["red"] = []
        released = True
    if not released and blk.mbarriers.blocked():
        message, where = blk.mbarriers.describe_deadlock(blk.warp_base, blk.warp_size)
        raise TraceError(message, where)
    if not released:
        pcs = sorted({int(x) for x in blk.resume[blk.waiting >= 0]})
        where = function.instructions[pcs[0] - 1] if pcs else None
        raise TraceError(
            f"deadlock: {int((blk.waiting >= 0).sum())} threads wait at a barrier that the "
            f"other {live - int((blk.waiting >= 0).sum())} live threads never reach",
            where,
        )
