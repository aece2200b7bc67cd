"""The watch over a class's block while it runs: every decision it takes, and which blocks of
the grid take each one as it does.

A grid's block runs watched (:mod:`.classes`). Every value carries taint (:mod:`..state`): it
depends on the block index (``TAINT_BLOCK``, from ``SR_CTAID``), on global memory
(``TAINT_GLOBAL``: other blocks read other addresses, and may write what this one reads),
or the emulator could not compute it exactly (``TAINT_UNKNOWN``: clocks, SM ids). The
watch looks at every decision the block's threads take:

* each guard predicate: which lanes run an instruction, and for a branch or an exit which
  path its threads take and how many times a loop runs (nvcc guards every conditional
  branch and every loop's back edge);
* each shared-memory request's lane addresses;
* the registers that place or size work outside the lane addresses: an mbarrier's or a TMA
  copy's shared destination, a wgmma's descriptors, a barrier's id, count and reduced
  predicate, a shuffle's source lane, an indirect branch's target.

A decision free of taint read only what all blocks share (threadIdx, the parameters,
constant memory, blockDim and gridDim, and shared memory written from those): every block
takes it alike. One that carries the block index's taint alone keeps the blocks that take
it as this block does (:class:`.forms.Forms`: :attr:`Watch.alike`).

A decision on global data (or an inexact value) that only *chooses values* takes nothing
else from a block (:class:`Chooser`): the guard of an instruction that only computes values
in its thread's registers and predicates (:func:`..decode.values_only`: no memory of any
space, no barrier, no other lane, nothing counted), or a branch whose paths, up to where
they meet and through the subroutines they call, run only such instructions
(:attr:`..taint_flow.Region.values`: nvcc's slow path of a float division, of ``sqrtf``).
Whichever way it goes in another block, that block's threads compute other values in the
same registers and nothing else: :mod:`..taint_flow` gives those registers the data's taint
(every register the paths write, where they meet), so any later decision on them is
watched as one on the data. Such decisions are counted (:attr:`Watch.chosen`) for the
report, which says what they leave estimated: the class's thread-instructions, its block's
paths (:class:`..grid.Proof`). Any other decision on global data, an inexact value or a
value without a form is the first that differs (:class:`..grid.Differs`): this block then
stands for itself alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ....cuda.sass import Function, Instruction
from ....cuda.sass_operands import Gdesc, Mem, Reg
from .. import taint_flow
from ..grid import Differs
from ..state import TAINT_BLOCK, Block, Idx
from . import guarded
from .evaluated import EVALUATED, base_opcode, needed, reads
from .forms import Forms
from .held import tidy

if TYPE_CHECKING:
    from ..decode import Program

#: the opcodes whose register operands decide something besides a shared address:
#: which of them (None: every register operand)
_WATCHED: dict[str, tuple[int, ...] | None] = {
    "SYNCS": None,
    "ARRIVES": None,
    "UTMALDG": (0,),  # the shared destination and the mbarrier, not the coordinates
    "UTMAPF": (),
    "UTMASTG": (0,),  # the shared source alone: the coordinates follow it (URa+1..)
    "UTMAREDG": (0,),
    "UBLKCP": (0, 2),  # the shared operand and the size, not the global address: _bulk
    "UBLKRED": (1, 2),  # [global], [shared], size
    "UBLKPF": (),
    "HGMMA": (),  # its descriptors only: _DESCRIBED
    "IGMMA": (),
    "QGMMA": (),
    "BAR": None,
    "SHFL": (3, 4),  # the lane and the clamp, not the value moved
    "BRX": None,
    "JMX": None,
    "CALL": None,
    "RET": None,
}
#: a wgmma's descriptors alone place its reads (watched wherever they stand: an SS form's
#: second operand, an RS form's third); its accumulators and an RS form's A registers are
#: data, and its scale-d predicate only says whether the product is added to them
_DESCRIBED = ("HGMMA", "IGMMA", "QGMMA")
#: operands whose registers hold a uniform pair base: only the first two are watched (a TMA
#: load's shared destination and its mbarrier; a store's URa+1 is its first coordinate, a
#: global place that a persistent GEMM's blocks differ in, tile by tile)
_PAIR_BASE = ("UTMALDG",)


def _bulk(ins: Instruction) -> tuple[tuple[int, ...], bool]:
    """A bulk copy's watched operands, and whether the first is a pair (its shared
    destination and the mbarrier after it): ``UBLKCP.S.G [shared], [global], size`` or
    ``UBLKCP.G.S [global], [shared], size``."""
    mods = list(ins.mods)
    to_shared = "S" in mods and "G" in mods and mods.index("S") < mods.index("G")
    return ((0, 2), True) if to_shared else ((1, 2), False)


def _registers(ins: Instruction) -> list[tuple[str, int]]:
    """(kind, index) of the registers :data:`_WATCHED` says decide something."""
    if ins.opcode not in _WATCHED:
        return []
    which = _WATCHED[ins.opcode]
    pair = ins.opcode in _PAIR_BASE
    if ins.opcode == "UBLKCP":
        which, pair = _bulk(ins)
    ops = ins.operands
    regs: list[tuple[str, int]] = []
    if ins.opcode in _DESCRIBED:
        for desc in ops:
            if isinstance(desc, Gdesc):
                regs += [(desc.reg.kind, desc.reg.index + i) for i in range(4)]
        return regs
    for k in range(len(ops)) if which is None else which:
        o = ops[k] if k < len(ops) else None
        if isinstance(o, Reg):
            if o.kind in ("R", "UR", "P", "UP") and not o.is_zero and not o.is_true:
                regs.append((o.kind, o.index))
        elif isinstance(o, Mem):
            regs += _mem_registers(ins, k, o, pair)
        elif isinstance(o, Gdesc):
            regs += [(o.reg.kind, o.reg.index + i) for i in range(4)]
    return regs


def _mem_registers(ins: Instruction, k: int, o: Mem, base: bool = False) -> list[tuple[str, int]]:
    """The registers of memory operand ``k``: its base (two where ``base`` says it is a pair
    base and ``k`` is 0, or where the register is 64-bit), index and descriptor."""
    regs: list[tuple[str, int]] = []
    for r in (o.reg, o.ureg, o.desc):
        if r is not None and not r.is_zero:
            pair = (base and k == 0) or "64" in r.sel
            regs += [(r.kind, r.index + i) for i in range(2 if pair else 1)]
    return regs


def _address(ins: Instruction) -> list[tuple[str, int]]:
    """The registers of an instruction's first memory operand (a shared access's address)."""
    for k, o in enumerate(ins.operands):
        if isinstance(o, Mem):
            return _mem_registers(ins, k, o)
    return []


#: global accesses: their addresses place no shared request and decide nothing the watch
#: looks at (where they read is global data's taint, watched where it is read)
_GLOBAL = frozenset(("LDG", "STG"))


def _decided(ins: Instruction) -> list[tuple[str, int]]:
    """The registers the watch's decisions at ``ins`` read (:func:`.evaluated.needed`): its
    guard, its branch condition, its watched registers, and its memory operands' (but a
    global access's, which place no shared request), as the watch reads them: an address
    register's pair only where it is a 64-bit one (``[R11+UR8]`` reads R11 alone; its pair
    kept R12 alive around llm.c's attention backward's row loop, and with it every select
    that writes R12)."""
    regs = [*taint_flow.branch_conditions(ins), *_registers(ins)]
    regs += reads(ins.guard) if ins.guard is not None else []
    if ins.opcode not in _GLOBAL:
        for k, o in enumerate(ins.operands):
            regs += _mem_registers(ins, k, o) if isinstance(o, Mem) else []
            regs += reads(o) if isinstance(o, Gdesc) else []
    return regs


class Chooser:
    """Whether a decision at an instruction that global data takes only chooses values: the
    instruction only computes values (:attr:`..decode.Program.values`), or it is a branch
    whose region runs only what does (:attr:`..taint_flow.Region.values`), or a return
    proven to go back to its call site (:attr:`..taint_flow.ControlFlow.returns`: its
    address was written in a region on the data, by a block that took the slow path) and
    not guarded (where it goes is proven, not whether it goes now: ``@P0 RET`` on data
    leaves the rest of the subroutine to the blocks whose P0 is false); such a return is
    proven for the threads that came by the calls :meth:`return_sites` gives."""

    def __init__(self, program: Program, function: Function, kinds: list[Any]) -> None:
        self.program, self.function, self.kinds = program, function, kinds

    def __call__(self, m: int) -> bool:
        ins = self.function.instructions[m]
        if ins.opcode in taint_flow.JUMPS:
            return self._flow().region(m).values
        if ins.opcode == "RET":  # proven to go back to its call site, whatever it reads
            unguarded = ins.guard is None or (ins.guard.index == 7 and not ins.guard.not_)
            return unguarded and m in self._flow().returns
        return bool(self.program.values[m])

    @cached_property
    def selects(self) -> list[bool]:
        """Per instruction: guarded, computing values only and evaluated by the shadow, so
        that a guard on the block index there is a select in every block (:mod:`.guarded`)."""
        return [
            ins.guard is not None
            and ins.guard.index != 7
            and ins.opcode not in taint_flow.CONTROL
            and bool(self.program.values[m])
            and base_opcode(ins) in EVALUATED
            for m, ins in enumerate(self.function.instructions)
        ]

    @cached_property
    def needed(self) -> list[bool]:
        """Per instruction: a form it writes may reach a decision (:func:`.evaluated.needed`)."""
        ins, dests = self.function.instructions, self.program.destinations
        decided = [_decided(x) for x in ins]
        return needed(ins, dests, self._flow(), decided, self.selects)

    def return_sites(self, m: int) -> frozenset[int]:
        """The calls (instruction indices) a return at ``m`` is proven for."""
        return self._flow().returns.get(m, frozenset())

    def _flow(self) -> taint_flow.ControlFlow:
        return taint_flow.flow_of(self.program, self.function, self.kinds)


class Watcher(Protocol):
    """What the scheduler asks of a watch: :class:`Watch` over one block, or
    :class:`.together.Watches` over classes' blocks run together."""

    def guard(self, m: int, blk: Block, kind: str, index: int, at: Idx) -> None: ...
    def operands(self, m: int, blk: Any, at: Any) -> None: ...
    def before(self, m: int, blk: Block, ix: Idx) -> Any: ...
    def after(self, pending: Any, m: int, blk: Block, ix: Idx) -> None: ...


class Watch:
    """The watch over a class's block: each instruction's watched registers, the blocks that
    took every decision so far as it did (:attr:`alike`, with :class:`.alike.forms.Forms`),
    and the first decision that could not be proven."""

    def __init__(
        self,
        instructions: list[Instruction],
        forms: Forms | None = None,
        shared: Sequence[bool] = (),
        candidates: Any = None,
        chooses: Chooser | None = None,
    ) -> None:
        self.instructions = instructions
        self.chooses = chooses  # Chooser's answer (None: every decision on data differs)
        self.chosen: set[int] = set()  # instructions whose decisions on data chose values
        self.registers = [_registers(ins) for ins in instructions]
        # a branch's predicate operands (BRA P0, BRA !P2): the guard's are watched apart
        self.branches = [taint_flow.branch_conditions(ins) for ins in instructions]
        self.addresses = [
            _address(ins) if k < len(shared) and shared[k] else []
            for k, ins in enumerate(instructions)
        ]
        self.differs: Differs | None = None
        self.decisions = 0
        self.forms = forms
        # the blocks still taking every decision as this one (of ``candidates``, a mask over
        # the grid's blocks: those in no class yet)
        self.alike = None
        if forms is not None:
            every = np.ones(forms.vec.n, dtype=bool)
            self.alike = every if candidates is None else np.array(candidates, dtype=bool)
        self.proven = 0  # decisions on the block index evaluated over the candidates
        self.checked: set[int] = set()  # shared instructions whose block-index address held
        self.alone = False  # every decision was proven, but no other block takes them all
        # a select made at a guard (.guarded), for the step about to run: (instruction, it)
        self.chose: tuple[int, Any] | None = None
        self.extra: Any = None  # per block, thread-instructions besides this block's (.guarded)

    def _narrow(self, agreed: Any, m: int, what: str) -> None:
        """Keep the blocks of ``agreed`` (None: nothing known: the block stands alone)."""
        if agreed is None or self.alike is None or self.forms is None:
            self.differs = Differs(self.instructions[m], what)
            return
        self.proven += 1
        self.alike &= agreed
        if int(self.alike.sum()) <= 1:  # the block stands for itself alone
            self.differs = Differs(self.instructions[m], what)
            self.alone = True

    def guard(self, m: int, blk: Block, kind: str, index: int, at: Idx) -> None:
        """Instruction ``m`` runs for the threads ``at`` under guard predicate
        ``kind``/``index``: is it free of taint, or which blocks take its outcome?"""
        self.decisions += 1
        if self.differs is None:
            self._decide(m, blk, kind, index, at, "its guard predicate")

    def _decide(self, m: int, blk: Block, kind: str, index: int, at: Idx, what: str) -> None:
        """Predicate ``kind``/``index`` decides instruction ``m`` for the threads ``at``."""
        taint = blk.file(kind)[1][index][at]
        if not np.count_nonzero(taint):  # (cheaper than np.any on a warp)
            return
        data = taint & taint_flow.FOLLOWED
        if np.any(data):
            if self.chooses is None or not self.chooses(m):
                self.differs = Differs(self.instructions[m], what)
                return
            self.chosen.add(m)  # values only: their taint follows them (taint_flow)
            if not np.any((taint != 0) & (data == 0)):
                return  # (Forms.agreement looks at the threads of the block index's alone)
        if self.forms is None:
            self.differs = Differs(self.instructions[m], what)
            return
        if not np.any(data) and self._choose(m, blk, kind, index, at):
            return
        ids = blk.ids(at)
        self._narrow(self.forms.agreement(kind, index, ids, blk), m, what)

    def _choose(self, m: int, blk: Block, kind: str, index: int, at: Idx) -> bool:
        """Whether the guard of ``m``, on the block index alone, only chose values: ``m``
        computes values alone and is evaluated as a select in every candidate block, or no
        decision reads what it writes (:mod:`.guarded`); then no block leaves the class by
        it."""
        guard = self.instructions[m].guard
        if self.forms is None or self.chooses is None or not self.chooses.selects[m]:
            return False
        assert guard is not None
        choose = guarded.select if self.chooses.needed[m] else guarded.unread
        got = choose(self.forms, m, blk, blk.ids(at), guard)
        if got is None:
            return False
        pending, counts = got
        self.proven += 1
        ran = blk.file(kind)[0][index][at]
        here = np.count_nonzero(~ran if guard.not_ else ran)
        # each block runs it for its own threads: thread-instructions besides this block's
        self.extra = counts - here if self.extra is None else self.extra + counts - here
        if here:
            self.chose = (m, pending)  # :meth:`before` hands it to the step's :meth:`after`
        else:  # no thread runs it here: its registers hold what they held
            self.forms.after(pending, m, blk, at)
        return True

    def operands(self, m: int, blk: Any, at: Any) -> None:
        """Instruction ``m`` runs for the threads ``at``: are its watched registers and its
        shared address free of taint, or which blocks hold the same values?"""
        if self.differs is not None:
            return
        for kind, index in self.branches[m]:  # a branch's condition: as its guard
            self.decisions += 1
            self._decide(m, blk, kind, index, at, "its branch condition")
            if self.differs is not None:
                return
        for regs, what in (
            (self.registers[m], "a register it reads"),
            (self.addresses[m], "a shared address"),
        ):
            if not regs:
                continue
            self.decisions += 1
            if regs is self.registers[m] and self._returns(m, blk, at):
                continue  # where it goes was proven from the code: not from what it reads
            for kind, index in regs:
                table = blk.file(kind)[1]
                if index >= len(table):
                    continue
                taint = table[index][at]
                if not np.count_nonzero(taint):
                    continue
                if np.any(taint & np.uint8(~TAINT_BLOCK & 0xFF)) or self.forms is None:
                    self.differs = Differs(self.instructions[m], what)
                    return
                ids = blk.ids(at)
                self._narrow(self.forms.same(kind, index, ids, blk), m, what)
                if self.differs is not None:
                    return
                if regs is self.addresses[m]:
                    self.checked.add(m)

    def before(self, m: int, blk: Block, ix: Idx, whole: bool = False) -> Any:
        """What instruction ``m`` will write for the threads ``ix`` (:meth:`.forms.Forms.before`;
        None without forms)."""
        if self.chose is not None and self.chose[0] == m:
            pending, self.chose = self.chose[1], None
            return pending
        if self.forms is None or (self.chooses is not None and not self.chooses.needed[m]):
            return None  # (no decision reads what it writes: :func:`.evaluated.needed`)
        return self.forms.before(m, blk, ix, whole)

    def after(self, pending: Any, m: int, blk: Block, ix: Idx, alone: bool = True) -> None:
        """The step :meth:`before` looked at ran (:meth:`.forms.Forms.after`); ``alone``:
        no other block's step is in flight (the vectors no form holds may be let go of)."""
        if self.forms is not None:
            self.forms.after(pending, m, blk, ix)
            if alone:
                tidy([self.forms], blk.threads if isinstance(ix, slice) else len(ix))

    def _returns(self, m: int, blk: Any, at: Any) -> bool:
        """Whether instruction ``m`` is a return proven to go back to its call site for the
        threads ``at``: each came into its subroutine by a call the proof is for (its
        innermost call frame's; not a call through a register: a function pointer)."""
        ins = self.instructions[m]
        if ins.opcode != "RET" or self.chooses is None or not self.chooses(m):
            return False
        frames = np.unique(blk.call_frame[at])
        sites = {blk.paths.frames[int(f)][1] for f in frames}
        return sites <= self.chooses.return_sites(m)

    def requests(self, tainted: dict[int, int], recorded: int) -> None:
        """The block recorded ``recorded`` shared-memory requests, those of the instructions
        of ``tainted`` (index -> their address taint) with tainted addresses."""
        self.decisions += recorded
        for index in sorted(tainted):
            if self.differs is not None:
                return
            if tainted[index] & ~TAINT_BLOCK & 0xFF or index not in self.checked:
                self.differs = Differs(self.instructions[index], "a shared address")
