"""The scheduler: one thread block, or a batch of blocks run together, to completion.

Scheduling rule (independent thread scheduling, emulated): of the threads that are
ready (not exited, not waiting at a barrier), those with the smallest instruction
index run next, all together in one vectorized step, whatever their warp and whatever
their block. Threads that diverge therefore run one side after the other and meet
again where their pcs become equal, which is where the hardware reconverges structured
code (BSYNC, the end of an if, the exit of a loop); a warp-level instruction (SHFL,
VOTE) sees every converged lane of its warp at once. Blocks run together the same way
(:mod:`.grid` makes the batches, :mod:`.execute` runs them). A
thread at BAR.SYNC waits; when no thread is ready, each barrier that every live
thread of a CTA (or its thread count) has reached is released in that CTA. If none
can be released the kernel deadlocked: an error. Threads proven to spin (a state met again
with nothing written since: :class:`.budget.Repeats`) are parked and yield to the others
until memory they read changes (:mod:`.sync.parking`). EXIT retires a thread. A budget
(:mod:`.budget`: instructions per block and per launch, wall time, the records'
memory) bounds runaway loops, with an error that names the loop. Decisions on global
data (a tainted guard or branch) taint what they decide (:mod:`.taint_flow`).

Between two instructions that move no thread elsewhere (:data:`.op_table.MOVES`), the
threads at the smallest index simply go on to the next one: the scheduler looks at
every thread again only after a branch, an exit or a barrier, or where other threads
wait at the next instruction. Where every thread of the batch runs a straight run of such
instructions (unguarded, deciding nothing on taint, counting no op_misc, reading no clock:
:func:`_straight_runs`), its steps run one after the other in one loop and the counts and
budget looks are made once for the run, as step by step (a warp stepping alone; under a
watch, told of every step: :mod:`.whole.watched`); there an
instruction with a whole step runs it (:mod:`.whole`: on the block's register rows), plain
float steps that follow one another as a chain (:mod:`.whole.chains`: one test for them all).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from ...cuda.sass import Function
from ...hardware import misc
from ...plumbing.frozen import frozen
from ..distinct_rows import RecordsFull
from . import budget as budgets
from . import taint_flow
from .access_kind import guarded_kind, shared_op_of
from .alike.watch import Watcher
from .decode import Program
from .op_table import MOVES, widens
from .state import BLOCKED, Block, TraceError
from .sync import barriers
from .sync.barriers import release
from .sync.clock import reads_clock
from .sync.convergence import arrived, settle
from .sync.parking import Parking, Wait
from .trace_error import INTERNAL_ERRORS
from .whole.rows import Rows, usable
from .whole.watched import run_watched

PROGRESS_EVERY = 2048  # steps between progress calls
#: a step of a register-to-register instruction runs over every thread of the batch, its
#: writes masked, where at least 1/_WIDE_SHARE of them run it: contiguous rows cost less
#: than gathering and scattering a part of them (the 4,096 differing blocks of make bench)
_WIDE_SHARE = 3


def run_block(
    function: Function,
    program: Program,
    blk: Block,
    *,
    progress: Callable[[int], None] | None = None,
    limits: budgets.Limits | None = None,
    watch: Watcher | None = None,
    stuck: Callable[[Wait], bool] | None = None,
) -> tuple[int, int]:
    """Run a block (or a batch of blocks) to completion, its decisions checked by ``watch``
    where given; threads proven to spin yield to the others (:mod:`.sync.parking`), and
    ``stuck`` runs other blocks where every thread left waits on global memory; returns
    (steps, thread instructions)."""
    instructions = function.instructions
    n_ins = len(instructions)
    if limits is None:
        deadline = time.monotonic() + budgets.DEFAULT.seconds
        limits = budgets.Limits(budgets.DEFAULT, blk.cta_threads, 0, deadline, "")
    limit = limits.checked_past(blk.ctas)
    hits = [0] * n_ins  # executions of each instruction: where a runaway block loops
    threads = blk.threads
    everyone = slice(None)
    t = tables_of(program, function)
    guards, kinds, guarded, stirs, pairs = t.guards, t.kinds, t.guarded, t.stirs, t.pairs
    misc_cost, first_free, misc_off, arrives = t.misc_cost, t.first_free, t.misc_off, t.arrives
    retires, moving, decides, wide, run_end = t.retires, t.moving, t.decides, t.wide, t.run_end
    parts = t.parts
    per_cta = np.zeros(blk.ctas, dtype=np.int64)  # thread-instructions of each CTA
    blk.clock.work = per_cta  # what its SM clock counts (sync/clock.py)
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
    parking = Parking(blk)
    extra = [parking.pc]  # part of the state the repeats compare
    rows: Rows | None = None  # the block's register rows, for whole steps (made at first use)
    wholes = any(w is not None for w in program.whole)
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
            if parking.count:  # only parked threads can run: what they read may change
                fail = partial(repeats.error, blk, instructions, hits)
                limits.set_aside(executed)  # other blocks may run meanwhile: they count it
                try:
                    parking.idle(blk, function, stuck, fail)
                finally:
                    limits.resume(executed)
                limit = limits.checked_past(blk.ctas)
                repeats.rearm()
            else:
                release(blk, function)
            continue
        if m >= n_ins:
            last = instructions[-1]
            raise TraceError("execution ran past the end of the function", last)
        if not fast and parking.count and parking.look(blk, steps):
            repeats.rearm()  # a parked group's memory changed: it runs again
            continue
        if not fast and hits[m] >= repeats.first and repeats.look(blk, m, hits[m], extra):
            spinning = repeats.spinners(blk)
            if not len(spinning):
                raise repeats.error(blk, instructions, hits)
            parking.park(blk, spinning, steps)  # they yield to the other threads
            repeats.rearm()
            continue
        if not fast and repeats.kept is not None:
            repeats.ran[at] = True  # (a fast step runs the same threads)
        end = min(run_end[m], nxt)
        if (
            end > m + 1
            and at is everyone
            and not blk.regions
            and not blk.calls_active
            and executed + threads * (end - m) <= limit
        ):  # a straight run: its steps one after the other, counted once (_straight_runs)
            if wholes and rows is None:
                rows = Rows(blk)
            try:
                whole = rows if rows is not None and usable(blk) else None
                args = (program, instructions, stirs, blk, m, end, hits, whole)
                _run_straight(*args) if watch is None else run_watched(watch, *args)
            except RecordsFull:
                name = f"{blk.cta_name(blk.ctas - 1)} {limits.of_blocks}".rstrip()
                raise limits.records_full(name) from None
            executed += threads * (end - m)
            per_cta += (end - m) * (_cta_counts(blk, at) if at_cta is None else at_cta)
            first, steps = steps, steps + end - m
            if _passes(first, steps, budgets.CHECK_EVERY):
                limits.check(blk, executed, per_cta, instructions, hits)
            if progress is not None and _passes(first, steps, PROGRESS_EVERY):
                progress(executed)
            m, fast = end, end < nxt  # as the run's last step leaves them
            if not fast:
                sched[at] = m
            continue
        ix: Any = at
        if moving[m]:  # the step may move some of them elsewhere: sched must be true first
            sched[at] = m + 1
        decided = None  # the taint of the decisions behind this step (taint_flow)
        if blk.regions or decides[m] is not None:
            at_ids = blk.ids(at)
            decided = taint_flow.before_step(blk, program, function, kinds, m, at_ids, decides[m])
        if pairs[m] and guards[m] is None:  # (before it stirs)
            barriers.together(blk, m, at)
        if stirs[m]:  # reached, its lanes on or off: its CTAs' next barrier costs op_misc
            blk.stirred[0 if blk.ctas == 1 else blk.cta[at]] = True
        g = guards[m]
        run_it = True
        if g is not None and g.index == 7 and g.not_:
            kind = guarded[m]
            if kind is not None or misc_off[m]:
                sel = blk.ids(at)
                _predicated_off(blk, m, instructions[m], kind, sel, sel[:0])
            run_it = False  # @!PT: never executes
        elif g is not None and g.index != 7:
            pv = (blk.up if g.kind == "UP" else blk.p)[g.index][at]
            if watch is not None:
                watch.guard(m, blk, g.kind, g.index, at)
            ok = ~pv if g.not_ else pv
            if np.count_nonzero(ok) < ok.size:  # (cheaper than .all() on a warp)
                sel = blk.ids(at)
                kind = guarded[m]
                if kind is not None or misc_off[m]:
                    _predicated_off(blk, m, instructions[m], kind, sel, sel[ok])
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
                forms = watch.before(m, blk, ix)
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
            except INTERNAL_ERRORS as exc:
                raise TraceError(f"internal emulator error: {exc}", instructions[m]) from exc
            if watch is not None:
                watch.after(forms, m, blk, ix)
            if arrives[m]:
                barriers.arrive(blk, m, ix)
            if misc_cost[m]:
                blk.count_misc(m, ix, retires[m], _read_before(blk, ix) if first_free[m] else None)
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
        if moving[m] and parts:
            barriers.part(blk, at)
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


@frozen
class ProgramTables:
    """What :func:`run_block` asks of each instruction of a program at a step, in program
    order: it depends on the program alone, so it is made once per program
    (:func:`tables_of`), not for each block or batch run."""

    guards: tuple[Any, ...]  # its guard (None: none)
    kinds: tuple[Any, ...]  # its shared-memory op (access_kind.shared_op_of)
    guarded: tuple[Any, ...]  # what a warp guarded off records (access_kind.guarded_kind)
    misc_cost: tuple[bool, ...]  # costs op_misc for each warp that runs it
    first_free: tuple[bool, ...]  # ... for each warp's second on
    misc_off: tuple[bool, ...]  # ... for each warp guarded off
    stirs: tuple[bool, ...]  # reached, its CTAs' next barrier costs op_misc
    arrives: tuple[bool, ...]  # complete where the warps run it (barriers.arrive)
    pairs: tuple[bool, ...]  # in pairs where a CTA's warps are together (barriers.together)
    parts: bool  # whether a CTA's threads going apart matters (barriers.part)
    retires: tuple[bool, ...]  # EXIT
    moving: tuple[bool, ...]  # may move threads elsewhere (op_table.MOVES)
    decides: tuple[Any, ...]  # the predicates that decide at it (taint_flow.conditions)
    wide: tuple[bool, ...]  # may run over every thread, its writes masked (op_table.widens)
    run_end: tuple[int, ...]  # where the straight run from it ends (_straight_runs)


def tables_of(program: Program, function: Function) -> ProgramTables:
    """``program``'s tables (of ``function``, which it decodes), made on its first run."""
    if program.tables is None:
        ins = function.instructions
        rules = misc.rules_of(ins)
        moving = [i.opcode in MOVES for i in ins]
        decides = [taint_flow.conditions(i) for i in ins]
        misc_cost = [r is not None and not r.when_off for r in rules]
        pairs = tuple(r is not None and r.pairs for r in rules)
        program.tables = ProgramTables(
            guards=tuple(i.guard for i in ins),
            kinds=tuple(shared_op_of(i) for i in ins),
            guarded=tuple(guarded_kind(i) for i in ins),
            misc_cost=tuple(misc_cost),
            first_free=tuple(r is not None and r.first_free for r in rules),
            misc_off=tuple(r is not None and r.when_off for r in rules),
            stirs=tuple(misc.stirs_barrier(i.opcode, i.operands) for i in ins),
            arrives=tuple(r is not None and r.arrive for r in rules),
            pairs=pairs,
            parts=any(pairs),
            retires=tuple(i.opcode == "EXIT" for i in ins),
            moving=tuple(moving),
            decides=tuple(decides),
            wide=tuple(widens(i, d) for i, d in zip(ins, program.destinations, strict=True)),
            run_end=tuple(_straight_runs(ins, moving, decides, misc_cost)),
        )
    tables: ProgramTables = program.tables
    return tables


def _straight_runs(
    instructions: list[Any], moving: list[bool], decides: list[Any], misc_cost: list[bool]
) -> list[int]:
    """Per instruction, where the straight run from it ends: the first instruction from it
    on that moves threads, has a guard (other than ``@PT``), decides on taint, counts
    op_misc or reads the clock (which counts the thread-instructions run before it). The
    threads of a converged step run a straight run's instructions one after the other as
    the scheduler's fast steps would, its bookkeeping done once for the run (issue 29/30:
    a warp stepping alone)."""
    n = len(instructions)
    ends = [n] * (n + 1)
    for k in range(n - 1, -1, -1):
        ins = instructions[k]
        g = ins.guard
        plain = g is None or (g.index == 7 and not g.not_)
        stops = moving[k] or decides[k] is not None or misc_cost[k] or reads_clock(ins)
        if stops or not plain:
            ends[k] = k
        else:
            ends[k] = ends[k + 1]
    return ends


def _run_straight(
    program: Program,
    instructions: list[Any],
    stirs: tuple[bool, ...],
    blk: Block,
    m: int,
    end: int,
    hits: list[int],
    rows: Rows | None,
) -> None:
    """Instructions ``m`` to ``end`` (a straight run) by every thread of ``blk``, each one's
    execution counted in ``hits`` (one that stirs a barrier marks every CTA first, as the
    scheduler's step does), by its whole step where it has one and ``rows`` are given
    (:mod:`.whole`; a chain of them where the run holds it whole); an internal error names
    its instruction (a chain's: its first)."""
    everyone = slice(None)
    whole, chains = program.whole, program.chains
    k = m
    try:
        while k < end:
            if stirs[k]:
                blk.stirred[:] = True
            w = whole[k] if rows is not None else None
            c = chains[k] if w is not None else None
            if c is not None and k + c[0] <= end:  # (a chain's steps stir nothing)
                c[1](blk, rows)
                for j in range(k, k + c[0]):
                    hits[j] += 1
                k += c[0]
                continue
            if w is None:
                program[k](blk, everyone)
            else:
                w(blk, rows)
            hits[k] += 1
            k += 1
    except INTERNAL_ERRORS as exc:
        raise TraceError(f"internal emulator error: {exc}", instructions[k]) from exc


def _passes(first: int, steps: int, every: int) -> bool:
    """Whether one of the steps ``first`` to ``steps`` (not included) is a multiple of
    ``every``: where a step by step run would have looked."""
    return (steps - 1) // every != (first - 1) // every


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


def _predicated_off(blk: Block, m: int, ins: Any, kind: Any, at_pc: Any, executing: Any) -> None:
    """Count the warps with threads ``at_pc`` at instruction ``m`` but none of ``executing``
    (whose guard holds): per CTA too where the batch's classes' blocks count apart. Those of
    a shared-memory or TMA instruction (``kind``) are its record's; those of another (a
    global store) its op_misc executions."""
    ws = blk.warp_size
    off = np.setdiff1d(np.unique(at_pc // ws), np.unique(executing // ws))
    if kind is None:
        blk.count_misc(m, None, warps=off)
        return
    blk.rec.predicated_off(m, ins, kind, len(off))
    if blk.by_cta is not None and len(off):
        blk.tally_by_cta("off", m, off // blk.n_warps)


def _read_before(blk: Block, ix: Any) -> Any:
    """The warps of threads ``ix`` that ran an instruction of a ``first_free`` op_misc rule
    before (:class:`shmem_cli.hardware.misc.MiscRule`): only those pay for this one."""
    warps = np.unique(blk.warp[blk.ids(ix)])
    before = warps[blk.misc_read[warps]]
    blk.misc_read[warps] = True
    return before
