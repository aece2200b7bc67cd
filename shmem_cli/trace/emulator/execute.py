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
thread. A step limit bounds runaway loops.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...cuda.sass import Function, Instruction
from ..requests import InstructionRecords, Recorder
from .access_kind import shared_op_of
from .decode import decode_function
from .op_table import Step
from .ops.control import BLOCKED
from .state import Block, Launch, TraceError

DEFAULT_MAX_THREAD_INSTRUCTIONS = 2_000_000_000
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


def run(
    function: Function,
    launch: Launch,
    *,
    grid: bool = False,
    progress: Callable[[int, int], None] | None = None,
    max_thread_instructions: int = DEFAULT_MAX_THREAD_INSTRUCTIONS,
) -> Trace:
    """Run the block ``launch.block_idx`` (or, with ``grid``, every block in order)."""
    program = decode_function(function)
    recorder = Recorder(launch.warp_size)
    gx, gy, gz = launch.grid
    blocks = (
        [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
        if grid
        else [launch.block_idx]
    )
    steps = executed = 0
    unmodelled: dict[int, int] = {}
    for k, idx in enumerate(blocks):
        one = dataclasses.replace(launch, block_idx=idx)
        blk = Block(one)
        blk.rec = recorder
        blk.warp_base = (idx[0] + gx * (idx[1] + gy * idx[2])) * blk.n_warps if grid else 0
        with np.errstate(all="ignore"):  # float exceptions are values, as on the GPU
            s, e = run_block(
                function,
                program,
                blk,
                progress=_per_block(progress, k),
                limit=max_thread_instructions - executed,
            )
        steps += s
        executed += e
        for index, count in blk.unmodelled.items():
            unmodelled[index] = unmodelled.get(index, 0) + count
    listed = [(function.instructions[i], unmodelled[i]) for i in sorted(unmodelled)]
    return Trace(function, launch, recorder.instructions(), steps, executed, len(blocks), listed)


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
    limit: int = DEFAULT_MAX_THREAD_INSTRUCTIONS,
) -> tuple[int, int]:
    """Run one block to completion; returns (steps, thread instructions)."""
    instructions = function.instructions
    n_ins = len(instructions)
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
        if executed > limit:
            raise TraceError(
                f"step limit reached after {executed} thread-instructions "
                "(an endless loop? raise the limit if the kernel is that long)",
                instructions[m],
            )
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
        message, where = blk.mbarriers.describe_deadlock(blk.warp_base)
        raise TraceError(message, where)
    if not released:
        pcs = sorted({int(x) for x in blk.resume[blk.waiting >= 0]})
        where = function.instructions[pcs[0] - 1] if pcs else None
        raise TraceError(
            f"deadlock: {int((blk.waiting >= 0).sum())} threads wait at a barrier that the "
            f"other {live - int((blk.waiting >= 0).sum())} live threads never reach",
            where,
        )
