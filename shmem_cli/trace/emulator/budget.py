"""How much one trace may run: executed instructions per block and per launch, wall time,
and the memory its shared-memory records take.

A kernel that never ends (a loop on data the trace does not have, a spin on a flag no
other block sets) must not run the trace without end, and one such kernel in ``shmem lint``
must not keep the others' results from coming. The defaults fit launches users really run
(a 4096 x 4096 transpose, 16,384 blocks of 256 threads and 319 million thread-instructions,
takes seconds) and stop an endless loop of a block within :data:`ALONE_SECONDS`:

* a block may execute :data:`PER_THREAD` instructions per thread on average (524,288: CuTe's
  sgemm_2 tutorial at its own 5120 x 5120 x 4096 runs 351,000 a thread of a block, about 25 s;
  an endless loop of one warp is stopped in about as long); ``--max-instructions``;
* a launch may execute :data:`LAUNCH_INSTRUCTIONS` thread-instructions in all
  (2^34); ``--max-launch-instructions``;
* a launch may run :data:`SECONDS` of wall time (180), and a block (a cluster) run alone
  :data:`ALONE_SECONDS` (40); ``--time-limit`` sets both. The instruction budgets count
  thread-instructions, but the emulator's time goes by steps (one instruction for the
  threads at it: 25-80 us whether 1 or 1,024 threads run it), so they alone bound a loop
  only where its threads run together: one thread of a 1,024-thread block looping alone
  takes 1,024 times the steps of the whole block looping (a block's budget of 536,870,912
  thread-instructions in 536 million steps: hours). The wall time bounds every launch,
  whatever its steps cost: an endless loop of any shape in a launch of one block, in the
  block a grid runs first (alone, to prove the others alike), or in the resident blocks a
  grid that shares its work runs first in its place (``sync/shared_work.py``), ends within
  :data:`ALONE_SECONDS`, with the same located error; a grid whose batches of many blocks
  run on (a histogram of 1,024 contended blocks: 60-130 s) may take :data:`SECONDS`, and one
  that would pass it is sampled to half of it (:mod:`.grid`);
* the requests recorded for the report may take :data:`MAX_RECORDED_BYTES` (384 MiB), the copy
  an array makes as it grows included (checked before each growth: ``distinct_rows.Allowance``);
  records that reach it are costed, summed per instruction and dropped, and the trace goes on
  (``recorder.Recorder.fold``).

Past a budget the trace stops with an error placed at the loop it was in: the
instructions the block executed most, by source line and SASS offset, and the option
(or the Python API's argument) that raises it.

A spin that can never end is stopped long before its budget (:class:`Repeats`): a lock no
block releases, a flag in global memory no block sets. The emulator is deterministic, so a
block that comes back to a state it was in (every register, predicate, scheduling and
barrier state, its shared and local memory, and no write to global memory, no atomic
that changed a word and no read of a clock in between) repeats itself for ever.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...cuda.sass import Instruction
from ...cuda.toolchain import COMPILE_SECONDS
from ...plumbing.errors import SourcePos, file_line
from ...plumbing.frozen import frozen
from .sync.convergence_state import BLOCKED
from .sync.turns import Abandoned
from .trace_error import TraceError

if TYPE_CHECKING:
    from .state import Block

PER_THREAD = 1 << 19
LAUNCH_INSTRUCTIONS = 1 << 34
SECONDS = 180.0
#: the most wall time one block (one cluster) run alone may take (the default's: a
#: --time-limit given sets it too): an endless loop ends within it, and a judge's minute
#: leaves 20 s for start-up, nvdisasm and the report (robustness round 14)
ALONE_SECONDS = 40.0
MAX_RECORDED_BYTES = 384 << 20
CHECK_EVERY = 256  # steps between looks at the clock and at the records
#: executions of an instruction before the block's state is first kept (then at twice as
#: many, and so on), and how many executions after each are compared with it (a spin whose
#: iteration passes the instruction at most that many times is found). A batch of more
#: than :data:`REPEAT_THREADS` threads (a 16-CTA cluster's 16,384) keeps it sooner, in
#: proportion, down to :data:`REPEAT_LOOKS`: each of its steps costs as much more.
REPEAT_FROM = 1 << 10
REPEAT_LOOKS = 64
REPEAT_THREADS = 1 << 10
#: the largest state kept (a batch of many blocks past it is left to the budget)
REPEAT_BYTES = 64 << 20
#: what a caller may set each budget to (the command line's options and the Python API's)
PER_THREAD_RANGE = (1, 1 << 40)
LAUNCH_RANGE = (1, 1 << 50)
SECONDS_RANGE = (0.001, 86_400.0)


@frozen
class Budget:
    """The budgets of one trace (None: the default)."""

    per_thread: int = PER_THREAD  # instructions per thread of a block, on average
    launch_instructions: int = LAUNCH_INSTRUCTIONS  # thread-instructions of the launch
    seconds: float = SECONDS  # wall time of the launch
    alone_seconds: float = ALONE_SECONDS  # wall time of a batch of one block (one cluster)
    recorded_bytes: int = MAX_RECORDED_BYTES
    compile_seconds: float = COMPILE_SECONDS  # each nvcc compile of a .cu (a macro bomb's)

    def block_instructions(self, threads: int) -> int:
        """Thread-instructions one block of ``threads`` threads may execute."""
        return self.per_thread * threads

    @classmethod
    def of(
        cls,
        max_instructions: int | None = None,
        max_launch_instructions: int | None = None,
        time_limit: float | None = None,
        compile_time_limit: float | None = None,
    ) -> Budget:
        """The defaults, with the options a user gave."""
        return cls(
            per_thread=PER_THREAD if max_instructions is None else max_instructions,
            launch_instructions=(
                LAUNCH_INSTRUCTIONS if max_launch_instructions is None else max_launch_instructions
            ),
            seconds=SECONDS if time_limit is None else time_limit,
            alone_seconds=ALONE_SECONDS if time_limit is None else time_limit,
            compile_seconds=COMPILE_SECONDS if compile_time_limit is None else compile_time_limit,
        )


DEFAULT = Budget()


def hot_loop(instructions: Sequence[Instruction], hits: Sequence[int]) -> tuple[Instruction, str]:
    """The loop a block was in: the instruction to place the error at and ``hello.cu:8-10
    (pc 0x00c0-0x0170)`` (SASS offsets), from the instructions executed at least half as
    often as the most executed one."""
    top = max(hits)
    hot = [k for k, n in enumerate(hits) if n and 2 * n >= top]
    first, last = instructions[hot[0]], instructions[hot[-1]]
    placed = next((instructions[k] for k in hot if instructions[k].line), first)
    lines = sorted({instructions[k].line or 0 for k in hot if instructions[k].file == placed.file})
    lines = [n for n in lines if n]
    where = ""
    if placed.file and lines:
        span = f"{lines[0]}" if lines[0] == lines[-1] else f"{lines[0]}-{lines[-1]}"
        where = f"{file_line(placed.file, span)} "
    pcs = f"0x{first.pc:04x}" if first.pc == last.pc else f"0x{first.pc:04x}-0x{last.pc:04x}"
    return placed, f"{where}(pc {pcs})"


def stop(
    why: str,
    instructions: Sequence[Instruction],
    hits: Sequence[int],
    raise_with: str,
) -> TraceError:
    """The error for a budget that ran out (``why``), placed at the loop the block was in."""
    at, loop = hot_loop(instructions, hits)
    error = TraceError(
        f"{why}, looping in {loop}: an endless loop? If the kernel really runs that long, "
        f"raise {raise_with}"
    )
    if at.file and at.line:
        error.path, error.pos = at.file, SourcePos(at.line, 1)
    return error


def block_name(idx: tuple[int, int, int]) -> str:
    return f"block ({idx[0]},{idx[1]},{idx[2]})"


@dataclass
class Ledger:
    """The thread-instructions a launch has executed, for its budget: every batch that
    ended (whether its blocks count or run only for what they write) and the part-way
    counts of batches set aside while others run (sync/waiting_blocks.py)."""

    done: int = 0
    held: int = 0
    stopped: bool = False  # the trace stopped: a batch still running unwinds (sync/turns.py)


class Late(Exception):
    """A watched round of a grid's classes ran past its share of the time left: the
    classes found so far stand (:mod:`.alike.classes`)."""


@dataclass
class Limits:
    """What one batch of blocks may still use of the launch's budget."""

    budget: Budget
    threads: int  # of one block
    before: int  # thread-instructions the launch executed before this batch
    deadline: float  # time.monotonic() at which the launch's time is up
    of_blocks: str  # "of 16,384" for a grid
    ledger: Ledger | None = None  # the launch's running count, added to ``before``
    # a batch of one block (one cluster), or the blocks a grid that shares its work runs
    # together first (they stand where its first block alone stood): when its own time is
    # up, less the time it spent set aside while other blocks ran (:meth:`set_aside`,
    # :meth:`resume`); never for another batch of many
    alone_until: float = math.inf
    alone: str = "one block"  # what ``alone_until`` bounds, in words
    aside_at: float = 0.0
    until: float = math.inf  # a watched round's own end: :class:`Late` past it (alike/)

    @property
    def spent(self) -> int:
        """Thread-instructions the launch executed outside this batch, now."""
        return self.before + (self.ledger.done + self.ledger.held if self.ledger else 0)

    def set_aside(self, executed: int) -> None:
        """This batch is set aside while other blocks run, having executed ``executed``
        thread-instructions: they count its part against the launch's budget, and the time
        it waits is not its own (:meth:`resume`)."""
        if self.ledger is not None:
            self.ledger.held += executed
        self.aside_at = time.monotonic()

    def resume(self, executed: int) -> None:
        """This batch, set aside with ``executed`` thread-instructions (:meth:`set_aside`),
        runs again: its part is its own count again, and its own time is up that much later
        than it was."""
        if self.ledger is not None:
            self.ledger.held -= executed
        self.alone_until += time.monotonic() - self.aside_at

    @property
    def block(self) -> int:
        """Thread-instructions one block may execute."""
        return self.budget.block_instructions(self.threads)

    @property
    def launch(self) -> int:
        """Thread-instructions the batch may execute before the launch's budget is spent."""
        return self.budget.launch_instructions - self.spent

    def checked_past(self, ctas: int) -> int:
        """Thread-instructions past which a batch of ``ctas`` CTAs is checked at once: a
        single block's own budget or the launch's, a batch's the launch's (it changes while
        the batch is set aside and others run: asked again after)."""
        return min(self.block, self.launch) if ctas == 1 else self.launch

    def check(
        self,
        blk: Block,
        executed: int,
        per_cta: Any,
        instructions: list[Instruction],
        hits: list[int],
    ) -> None:
        """Raise the located error of the first budget ``blk`` has run out of, if any
        (:class:`.sync.turns.Abandoned` where the trace stopped meanwhile)."""
        if self.ledger is not None and self.ledger.stopped:
            raise Abandoned
        c = int(np.argmax(per_cta))
        name = f"{blk.cta_name(c)} {self.of_blocks}".rstrip()
        if int(per_cta[c]) > self.block:
            why = (
                f"{name} ran {int(per_cta[c]):,} thread-instructions without ending (budget: "
                f"{self.budget.per_thread:,} per thread x {self.threads:,} threads)"
            )
            raise stop(why, instructions, hits, "--max-instructions")
        if executed > self.launch:
            why = (
                f"the launch ran {self.spent + executed:,} thread-instructions by {name} "
                f"(the budget is {self.budget.launch_instructions:,})"
            )
            raise stop(why, instructions, hits, "--max-launch-instructions")
        now = time.monotonic()
        if now > self.deadline:
            why = f"the trace ran past its time limit of {self.budget.seconds:g} s in {name}"
            raise stop(why, instructions, hits, "--time-limit")
        if now > self.until:
            raise Late
        if now > self.alone_until:
            limit = self.budget.alone_seconds
            why = f"the trace ran past its time limit of {limit:g} s for {self.alone}, in {name}"
            raise stop(why, instructions, hits, "--time-limit")
        if blk.rec.allowance.taken > self.budget.recorded_bytes:
            raise self.records_full(name)

    def records_full(self, name: str) -> TraceError:
        """The error of records past their bound (found by a look, or by
        :class:`~shmem_cli.trace.distinct_rows.RecordsFull` before an allocation)."""
        return TraceError(
            f"the trace's shared-memory records passed {self.budget.recorded_bytes >> 20} "
            f"MiB by {name} (the requests of one instruction over a batch of blocks are "
            "kept whole before they are folded): trace fewer blocks (a smaller --grid)",
            None,
        )


class SpinError(TraceError):
    """A block (a batch of blocks) that came back to a state it was in with nothing written
    since: it can never end. ``head`` says where it loops, ``advice`` what to do (where
    nothing else is known, :data:`GIVE`: how to give the data it waits on)."""

    #: what to do where nothing else is known
    GIVE = "give the memory it waits on (--arg NAME=@FILE)"

    def __init__(self, head: str, advice: str | None = None) -> None:
        said = advice or self.GIVE  # GIVE passed on (Repeats.error, parking.Wait) gives it too
        super().__init__(f"{head}: {said}", gives_data=said == self.GIVE)
        self.head = head


def first_row(a: Any, b: Any) -> int | None:
    """The first row (index of the first axis) where two arrays of two or more axes and
    the same shape differ; None for other arrays (compared whole)."""
    if a.ndim < 2 or a.shape != b.shape:
        return None
    return int(np.argmax((a != b).reshape(len(a), -1).any(axis=1)))


def differ_at(a: Any, b: Any, row: int) -> bool:
    """Whether two arrays differ in row ``row``; False where it has no such row. It proves
    a difference only: False says nothing of the other rows."""
    if a.ndim < 2 or a.shape != b.shape or row >= len(a):
        return False
    return not np.array_equal(a[row], b[row])


class Repeats:
    """Finds a block that came back to a state it was in: it would repeat itself for ever.

    :meth:`look` is called before each step where the scheduler read the threads' places
    afresh. When an instruction has run :attr:`first` times (:data:`REPEAT_FROM`, fewer in a
    batch of many threads; then twice as many, ...), the block's state is kept; the next
    :data:`REPEAT_LOOKS` times that instruction runs, the state is compared with it (first
    the row where the last look that failed found a difference, then every array whole,
    so the answer is always the whole comparison's). When the state is kept changes only
    how soon a spin is found, never whether: a state met again is proven to repeat, and a
    loop whose state changes is never stopped. A clock read counts as a change (the state
    holds the count of reads, :mod:`.sync.clock`): a loop that reads the clock may end when
    it moves on, one that reads none cannot. Batches whose state passes
    :data:`REPEAT_BYTES` are not watched."""

    def __init__(self, instructions: Sequence[Instruction], threads: int = 1) -> None:
        self.enabled = True
        scaled = REPEAT_FROM * REPEAT_THREADS // max(threads, 1)
        self.first = max(REPEAT_LOOKS, min(REPEAT_FROM, scaled))
        self.next_at = self.first
        self.owner = -1
        self.kept_at = 0
        self.kept: tuple[list[Any], tuple[Any, ...]] | None = None
        # per thread: whether it ran since the state was kept (the scheduler marks the
        # threads of each step while a state is kept: :meth:`spinners`)
        self.ran: Any = np.zeros(threads, dtype=bool)
        # where spins were proven: the state is kept there whenever none is (a spin found
        # again, or another thread's spin on the same loop, costs a turn of it)
        self.again: set[int] = set()
        # where the last look that failed found a difference: the array (in the order of
        # the state's arrays; -1: none yet) and its row (a register of every thread): a
        # spin's wake-up changes the same registers each time, so a look compares it
        # first, and most looks that fail end there (a row is a small part of the state)
        self.missed: tuple[int, int | None] = (-1, None)

    def look(
        self,
        blk: Block,
        m: int,
        hits: int,
        extra: Sequence[Any] = (),
    ) -> bool:
        """Whether ``blk``, about to run instruction ``m`` (run ``hits`` times before), is in
        the state kept (then it never ends); ``extra``: more arrays of the state (threads
        parked). While a state is kept, the global accesses made are logged
        (``GlobalMemory.spin_reads``) and the scheduler marks the threads that run in
        :attr:`ran`."""
        if not self.enabled:
            return False
        memory = blk.launch.memory
        if hits >= self.next_at or (self.kept is None and m in self.again):
            if sum(a.nbytes for a in blk.machine_arrays()) > REPEAT_BYTES:
                self.enabled = False
                return False
            arrays, small = blk.machine_state()
            self.kept = [*arrays, *(a.copy() for a in extra)], small
            self.owner, self.kept_at = m, hits
            self.ran = np.zeros(blk.threads, dtype=bool)
            self.next_at = 2 * hits
            memory.spin_reads = []
            return False
        if m != self.owner or self.kept is None:
            return False
        if hits - self.kept_at > REPEAT_LOOKS:
            self.kept = memory.spin_reads = None
            return False
        arrays, small = self.kept
        mine = [*blk.machine_arrays(), *extra]
        if len(mine) != len(arrays):  # local memory first used since: a state not met
            return False
        last, row = self.missed
        known = 0 <= last < len(arrays)
        if known and row is not None and differ_at(arrays[last], mine[last], row):
            return False  # (quick: where the last look that failed found a difference)
        if blk.machine_state_small() != small:
            return False
        # every array whole, once each, the one that differed last first: the order changes
        # only how soon a look that fails ends, never its answer
        order = [last, *(k for k in range(len(arrays)) if k != last)] if known else []
        for k in order or range(len(arrays)):
            if not np.array_equal(arrays[k], mine[k]):
                self.missed = k, first_row(arrays[k], mine[k])
                return False
        self.again.add(m)
        return True

    def spinners(self, blk: Block) -> Any:
        """The ready threads that ran since the state was kept (those that spin; the others
        have not moved; one waiting at a barrier again is left to its barrier). Not every
        ready thread at an instruction of the loop ran: a part of a warp
        (:mod:`.sync.convergence`) at the loop's back edge waits there while the warp's
        first part, spinning, comes back to it ahead of it each turn (tests/data/trace/
        spinwait, ``sw_halves``); parked with the spinners, it would never run."""
        return np.flatnonzero((blk.sched < BLOCKED) & self.ran)

    def rearm(self) -> None:
        """Threads were parked or woke: keep the state afresh where a spin was proven,
        so that a spin found again costs a turn of its loop, not the next doubling."""
        self.kept = None

    def error(
        self,
        blk: Block,
        instructions: Sequence[Instruction],
        hits: Sequence[int],
        reads: str = "",
        why: str = "",
        advice: str = SpinError.GIVE,
        held_back: bool = False,
    ) -> SpinError:
        """The located error of a block that repeats itself; ``reads``: what its spinning
        threads re-read, ``why``: why no other block can end the wait; ``held_back``: other
        blocks might, but no more batches may be set aside to run them (``why`` says so)."""
        waiting = int(np.count_nonzero(~blk.exited))
        said = (
            reads
            or "a lock no one releases, a flag no one sets; a grid is traced a batch at a time"
        )
        name = blk.cta_name(0) if blk.ctas == 1 else "a batch of blocks"
        if held_back:
            why = f"{name} waits on memory that blocks not run yet may write ({said}){why}"
        else:
            why = (
                f"{name} can never end: its {waiting:,} running thread(s) came back to a state "
                f"with nothing written since ({said}){why}"
            )
        at, loop = hot_loop(instructions, hits)
        error = SpinError(f"{why}, looping in {loop}", advice)
        if at.file and at.line:
            error.path, error.pos = at.file, SourcePos(at.line, 1)
        return error
