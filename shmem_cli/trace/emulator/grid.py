"""Which blocks of a launch run, which run together, and how the report says it.

A grid's blocks are traced one per class of identical behaviour where that is proven
(:mod:`.alike`: its first block runs watched, and every block that takes all its decisions
is counted as it; then the lowest-numbered blocks left, several together, and so on). The
blocks in no class run in batches (:class:`Batch`): the CTAs of a batch are one
:class:`~.state.Block` whose threads the scheduler runs side by side, so that a grid costs
about its longest block's steps per batch, not one block's steps per block. A batch holds
consecutive blocks (numbered in launch order: ``x`` fastest, then ``y``, then ``z``, the
order of their warps in the records), as many as :data:`BATCH_BYTES` of state hold and at most
:data:`BATCH_THREADS` threads, so that the memory a trace takes does not grow with the grid.

A grid whose blocks would run past the launch's budget (:mod:`.budget`: its
thread-instructions, estimated from the first block, or the memory of its records) is
sampled: blocks spread evenly over the grid (or over the blocks in no class), the first and
the last included, as many as fit, and the report says so (:class:`Coverage`, with the
:class:`Proof` of the classes or the first decision that :class:`Differs`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ...cuda.sass import Instruction
from ...cuda.sass_operands import Mem, Reg
from ...plumbing.errors import file_line
from ...plumbing.frozen import frozen
from .budget import Budget
from .state import LOCAL_BYTES, Launch

if TYPE_CHECKING:
    from .sync.shared_work import SharesWork

#: the memory a batch's state may take: registers, predicates and scheduling per thread,
#: shared memory per CTA, local memory per thread where the kernel uses it
BATCH_BYTES = 192 << 20
#: threads run together at most (past this a step gains nothing)
BATCH_THREADS = 1 << 16
#: a thread's state: 256 registers and 64 uniform registers with a taint byte each,
#: 16 predicates with theirs, and its indices and scheduling (some 400 bytes: thread, CTA,
#: lane, warp and x/y/z indices, next instruction, resume point, barrier, call frame, the
#: convergence and clock state): what a Block allocates, within 3 % (2026-12-07, tracemalloc:
#: tests/test_trace_batch_bytes.py). A step's temporaries take some 20 % more at its peak
#: (llm.c's attention backward and tests/data/trace/causalbwd, batches of 256 CTAs: 1,174
#: and 1,209 bytes a thread against 1,044 and 974 estimated); zero pages never written (the
#: uniform registers a kernel does not name) are not resident, so a batch's RSS is lower
THREAD_BYTES = 256 * 5 + 64 * 5 + 16 * 2 + 160 + 256
#: bytes a recorded request takes (row, warp, occurrence, flags), room to grow included
REQUEST_BYTES = 36


@frozen
class Batch:
    """Blocks run together: their indices and their numbers in launch order."""

    ctas: tuple[tuple[int, int, int], ...]
    linear: tuple[int, ...]
    clusters: tuple[int, ...] = ()  # their clusters' numbers in launch order (a grid's)


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


@frozen
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
        return Batch(ctas, tuple(x + gx * (y + gy * z) for x, y, z in ctas), tuple(clusters))

    def only(self, clusters: Sequence[int]) -> Batch:
        """The clusters ``clusters`` as one batch."""
        return self._batch(clusters)

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
    return tuple(sorted({_nearest(k * (blocks - 1), count - 1) for k in range(count)}))


def _nearest(a: int, b: int) -> int:
    """``round(a / b)`` in integers (half to even, as round does): the float quotient
    rounds past the last block of a grid of 2^62 blocks or more."""
    q, r = divmod(a, b)
    return q + (2 * r > b or (2 * r == b and q % 2 == 1))


#: blocks run first, spread evenly over those left, to tell what the rest will cost (the
#: first block alone may be the lightest: a block that loops ``blockIdx.x % 32 + 1`` times)
PROBE = 8
#: a grid whose blocks would take more than this many times the time left (--time-limit), at
#: the pace of the blocks run first, is sampled (to half the time left) rather than stopped at
#: the limit. That pace is pessimistic (a few blocks to a batch: later, fuller batches go
#: faster) and the machine's: a grid that may still end in time runs whole, as it always did
TIME_SHARE = 4.0


def fit_in_half_the_time(left_s: float, pace_s: float) -> int:
    """How many blocks (clusters) of ``pace_s`` seconds each run in half the ``left_s``
    seconds left before --time-limit: the sample a grid that would pass the limit runs
    instead (chosen before the rest runs, :func:`sampled`, or while it runs,
    :func:`.alike.rest.run_in_time`), so that the launch ends sampled, not stopped at the
    limit. 0 where no time is left or no pace was measured."""
    if left_s <= 0 or pace_s <= 0:
        return 0
    return int(left_s / 2 / pace_s)


def probe(count: int) -> tuple[int, ...]:
    """The positions, among ``count`` blocks left to run, of those run first to measure
    what the others will take (:func:`sampled` keeps them in any sample)."""
    return sample(count, min(count, PROBE))


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


@frozen
class Proof:
    """The blocks behave alike, class by class: what was checked, in words for the report."""

    blocks: int  # the blocks (clusters) counted without running each, their classes' included
    decisions: int  # guarded executions and shared requests checked
    unit: str = "blocks"  # or "clusters"
    bounded: int = 0  # decisions on the block index evaluated over the grid (.alike.forms)
    classes: int = 1  # classes of identical behaviour: one block of each ran
    apart: int = 0  # blocks in no class, run
    grid: int = 0  # blocks of the grid
    chosen: int = 0  # instructions whose decisions on global data chose values only (.alike)
    untraced: int = 0  # of those in no class, not run (out of time)
    ended: str = ""  # why the rounds ended before the classes did, in words (or nothing)

    def text(self) -> str:
        """The proof in plain sentences: which blocks stand for which, which ran, and what
        was checked."""
        u, one = self.unit, self.unit[:-1]
        first = "block (0,0,0)" if u == "blocks" else "the first cluster"
        classes = "1 class" if self.classes == 1 else f"{self.classes:,} classes"
        of = (
            f"{self.blocks:,} of the {self.grid:,} {u}"
            if self.apart
            else f"the {self.blocks:,} {u}"
        )
        if self.classes == 1 and not self.apart:
            said = [
                f"every {one} behaves alike: {first} traced and its requests counted for "
                f"each of the {self.blocks:,} {u}."
            ]
        else:
            said = [
                f"{u} alike by class: {of} fall into {classes} of identical behaviour, each "
                f"traced once (its lowest-numbered {one}) and its requests counted for every "
                f"{one} of the class."
            ]
        if self.apart > self.untraced:
            said.append(f"The {self.apart - self.untraced:,} {u} in no class were run.")
        if self.untraced:
            said.append(f"The {self.untraced:,} {u} in no class were not traced (out of time).")
        if self.ended:
            said.append(self.ended)
        but = ", but those that choose values only (below)," if self.chosen else ""
        said.append(
            f"{_decisions(self.decisions)} checked: no guard, branch, loop, shared "
            "address, barrier, mbarrier, TMA destination or wgmma descriptor depends on global "
            f"memory or on a value the emulator could not compute{but} nor otherwise on the "
            "block index."
        )
        if self.chosen:
            said.append(
                f"The decisions on global data at {self.chosen:,} instruction(s) choose values "
                "only: each guards an instruction that only computes registers, or is a branch "
                "whose paths, up to where they meet and through the subroutines they call (a "
                "float division's or sqrtf's slow path), run only such instructions. These "
                "data-dependent paths were proven not to touch shared memory (nor any memory, "
                "barrier or other lane); the registers they write carry the data's taint, and "
                "no later decision depends on it. The launch's thread-instructions "
                "(instructions_executed) count each class's block's own paths for every block "
                "of its class: an estimate where the others take other paths."
            )
        if self.bounded:
            said.append(
                f"{_decisions(self.bounded, ' on the block index')} evaluated for every "
                "block of the grid, from the values the block index gives each register "
                "(sums, products, shifts, logic, min/max, selects, compares, divisions)."
            )
        return " ".join(said)


def _decisions(n: int, what: str = "") -> str:
    """``n`` decisions ``what`` and the verb: "1 decision was", "3 decisions were"."""
    return f"1 decision{what} was" if n == 1 else f"{n:,} decisions{what} were"


@frozen
class Differs:
    """Why the blocks were not proven alike: the first decision that depends on them."""

    instruction: Instruction
    what: str  # "its guard predicate", "a shared address", "the registers it reads"
    unit: str = ""  # some blocks were traced by class: the others ran (their unit)

    def text(self, sampled: bool = False) -> str:
        """In words; ``sampled``: the grid was past the budget, so blocks were sampled
        rather than every one run."""
        ins = self.instruction
        where = f"{file_line(ins.file, ins.line)} " if ins.file and ins.line else ""
        ran = f"the {self.unit} in no class were run" if self.unit else "every block was run"
        if sampled:
            ran = "no block could stand for the others"
        return (
            f"blocks may differ: {where}(pc 0x{ins.pc:04x}, {ins.name}) {self.what} depends "
            f"on the block index or on global memory, so {ran}"
        )


@frozen
class Coverage:
    """How the trace covered the grid: ``block`` (one block), ``whole`` (every block ran),
    ``alike`` (blocks ran and stand for the others: every block, or those of their class,
    :mod:`.alike`) or ``sample`` (blocks spread over a grid past the budget)."""

    mode: str
    blocks: int  # of the grid (1 for one block)
    run: int  # blocks that ran
    proof: Proof | None = None
    differs: Differs | SharesWork | None = None  # why blocks ran that others did not stand for
    why_sampled: str | None = None
    stood_for: int = 0  # blocks counted as their class's block without running (classes)

    @property
    def counted(self) -> int:
        """Blocks the totals count."""
        if self.mode == "alike" and not self.stood_for:
            return self.blocks
        return self.run + self.stood_for

    @property
    def weight(self) -> int:
        """How many blocks each recorded block stands for (alike: the first cluster's
        blocks stand for every cluster's; by class: 1, each class's records counted again
        apart, :class:`.alike.classes.Classes`)."""
        whole = self.mode == "alike" and not self.stood_for
        return self.blocks // max(1, self.run) if whole else 1


#: a whole grid runs where the first block's thread-instructions times its blocks fit this
#: share of the launch's budget (room for blocks that run longer than the first)
WHOLE_SHARE = 8


def sampled(
    blocks: int,
    first: int,
    requests: int,
    budget: Budget,
    unit: str = "blocks",
    include: Sequence[int] = (),
    written: tuple[int, int, int] = (0, 1 << 62, 1 << 62),
    seconds: tuple[float, float] = (0.0, float("inf")),
) -> tuple[tuple[int, ...] | None, str | None]:
    """The blocks (clusters, where the launch has them: ``blocks`` counts those) to run when
    the whole grid would not fit the budget (estimated from a block's thread-instructions
    ``first`` and ``requests``, and ``written``: the bytes of global memory a block made
    real, the room left before the arena's bound, and the bytes the pages of the blocks run
    first reach over, what blocks laid out in order write at most together: a grid past
    the room is sampled to half of it; ``seconds``: the wall time a block took and the time
    left before --time-limit: a grid that would take more than :data:`TIME_SHARE` times it
    is sampled to half of it rather than stopped), and why; (None, None) when it fits.
    ``include``: blocks already run (:func:`probe`), part of any sample."""
    ran = blocks * max(1, first)
    kept = blocks * requests * REQUEST_BYTES
    most_ran = budget.launch_instructions // WHOLE_SHARE
    most_kept = budget.recorded_bytes // 2
    per_block, room, reach = written
    # sampled only past the room, as the whole grid ran (and failed at the bound) before; the
    # sample then writes half of it (blocks write unevenly)
    wrote, sample_wrote = min(blocks * per_block, reach), room // 2
    block_s, left_s = seconds
    took, most_took = blocks * block_s, TIME_SHARE * left_s
    if ran <= most_ran and kept <= most_kept and wrote <= room and took <= most_took:
        return None, None
    fit = min(
        most_ran // max(1, first),
        most_kept // max(1, requests * REQUEST_BYTES),
        sample_wrote // max(1, per_block) if wrote > room else blocks,
        fit_in_half_the_time(left_s, block_s) if block_s > 0 and took > most_took else blocks,
    )
    chosen = tuple(sorted(set(sample(blocks, max(1, fit))) | set(include)))
    past = []
    if ran > most_ran:
        past.append(
            f"run about {ran:,} thread-instructions (past {most_ran:,}, 1/{WHOLE_SHARE} of "
            "--max-launch-instructions)"
        )
    if kept > most_kept:
        past.append(f"keep about {kept >> 20:,} MiB of requests (past {most_kept >> 20} MiB)")
    if took > most_took:
        past.append(
            f"take about {took:,.0f} s (more than {TIME_SHARE:g} times the {left_s:,.0f} s left "
            "before --time-limit)"
        )
    if wrote > room:
        past.append(
            f"write about {_size(wrote)} of global memory (past the {_size(room)} left of what "
            "shmem keeps real; a sample writes at most half of it)"
        )
    why = (
        f"the whole grid would {' and '.join(past)}: {len(chosen):,} of its {blocks:,} {unit} "
        "traced, spread evenly over it (the first and the last included)"
    )
    return chosen, why


def _size(n: int) -> str:
    return f"{n >> 20:,} MiB" if n >= 1 << 20 else f"{n >> 10:,} KiB"
