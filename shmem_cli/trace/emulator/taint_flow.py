"""Taint through control flow: what global data decides about which lanes run, and how often.

A value read from global memory carries taint (:mod:`.state`: bit 0, and a bit for the
buffer it came from); the ops spread it through registers, predicates and memory. This
module spreads it through the decisions a thread's path takes:

* A **guard** whose predicate carries taint decides which lanes run the instruction: the
  registers it writes take the taint for every thread at it (run or not: what they hold
  depends on the decision either way), and so do the requests of a shared-memory
  instruction (per warp: its lane set is the decision), which is marked *decided* even
  when every lane is off.
* A **branch or exit** whose condition carries taint decides what its threads run until
  they reconverge: at the branch's immediate post-dominator (where nvcc puts the ``BSYNC``
  of a ``BSSY``; never, for a decision to exit). Its threads carry the taint in a *region*
  keyed by that instruction: while it is open every register they write and every request
  they make takes it (which lanes run there, and how many times: a loop whose trip count
  is data ends in such a branch); every shared-memory instruction the region can reach is
  marked decided by that data, even where no thread went (the loop that zeros skip); and
  when the threads reconverge, every register any path of the region writes takes it (the
  value the decision chose, whichever path ran). A region takes in the subroutines its
  paths call (:mod:`.sync.subroutines`: nvcc's slow path of a float division).

:class:`ControlFlow` is the static part, per function: the basic blocks, each block's
immediate post-dominator (Cooper, Harvey and Kennedy's iteration on the reversed graph,
with one virtual exit after every ``EXIT``, ``RET`` and trap), and each branch's region,
with whether it only chooses values (:attr:`Region.values`: what the proof of alike blocks
lets through, :mod:`.alike.watch`).
The functions below are the emulator's hooks; they cost nothing until a decision carries
taint.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ...cuda.sass import Function, Instruction
from ...cuda.sass_operands import Label, Reg
from ...plumbing.frozen import frozen
from ..distinct_rows import warp_or
from .operands import Dest
from .state import TAINT_BLOCK, Block
from .sync import subroutines

if TYPE_CHECKING:
    import numpy.typing as npt

    from ...hardware.engine import AccessKind
    from .decode import Program

EXIT = -1  # the virtual exit: a region that never reconverges
JUMPS = ("BRA", "JMP")
_ENDS = ("EXIT", "KILL", "RET", "BPT")
#: the instructions whose tainted guard decides a thread's path, not just its lanes
CONTROL = (*JUMPS, *_ENDS)
#: the taint bits a decision passes on: global data, inexact values and the buffers; not
#: the block index's (state.py TAINT_BLOCK): a bounds check on it guards nearly every
#: kernel's accesses, and following it through them made a 16,384-block trace 1.8x slower
FOLLOWED = np.uint8(0xFF & ~TAINT_BLOCK)


@frozen
class Region:
    """What a branch decides: the shared-memory instructions its threads may reach before
    they reconverge, and the registers those paths write."""

    reconverge: int  # instruction index, or EXIT
    shared: tuple[int, ...]
    dests: frozenset[Dest]
    # its paths meet again, and run only what computes values (decode.values_only), branches
    # among them, convergence barriers and calls of subroutines made of the same: a
    # decision on global data here chooses values, nothing else (alike/watch.py)
    values: bool = False


class ControlFlow:
    """The control-flow graph of a function, its post-dominators and branch regions."""

    def __init__(
        self,
        function: Function,
        destinations: list[tuple[Dest, ...]],
        kinds: Sequence[AccessKind | None],
        values: list[bool] | None = None,
    ) -> None:
        self.function = function
        self.destinations = destinations
        self.kinds = kinds
        self.values = values or [False] * len(function.instructions)
        n = len(function.instructions)
        self.succ = [self._successors(i) for i in range(n)]
        leaders = {0} | {s for ss in self.succ for s in ss if s != EXIT}
        leaders |= {i + 1 for i in range(n) if self.succ[i] != [i + 1]}
        starts = sorted(x for x in leaders if x < n)
        self.block_of = np.zeros(n, dtype=np.int64)
        self.starts = starts
        for b, s in enumerate(starts):
            end = starts[b + 1] if b + 1 < len(starts) else n
            self.block_of[s:end] = b
        self.ends = [(starts[b + 1] if b + 1 < len(starts) else n) - 1 for b in range(len(starts))]
        self.ipdom = self._post_dominators()
        self._regions: dict[int, Region] = {}

    def _successors(self, i: int) -> list[int]:
        ins = self.function.instructions[i]
        n = len(self.function.instructions)
        after = [i + 1] if i + 1 < n else [EXIT]
        guard = ins.guard
        if guard is not None and guard.index == 7 and guard.not_:
            return after  # @!PT: never runs
        guarded = guard is not None and guard.index != 7
        if ins.opcode in _ENDS:
            return [*after, EXIT] if guarded else [EXIT]
        if ins.opcode in JUMPS:
            labels = [o for o in ins.operands if isinstance(o, Label)]
            if "DIV" in ins.mods or len(labels) != 1:
                return after  # the emulator's BRA.DIV falls through; indirect: refused there
            pc = self.function.labels.get(labels[0].name)
            target = self.function.index_of(pc) if pc is not None else 0
            conds = [o for o in ins.operands if isinstance(o, Reg) and not o.is_true]
            conditional = guarded or (bool(conds) and "CONV" not in ins.mods)
            return [target, *after] if conditional else [target]
        return after

    def _post_dominators(self) -> list[int]:
        """Each block's immediate post-dominator (a block index, or EXIT)."""
        nb = len(self.starts)
        exit_ = nb
        succ = [
            sorted({exit_ if s == EXIT else int(self.block_of[s]) for s in self.succ[self.ends[b]]})
            for b in range(nb)
        ]
        preds: list[list[int]] = [[] for _ in range(nb + 1)]  # edges of the reversed graph
        for b in range(nb):
            for s in succ[b]:
                preds[s].append(b)
        # reverse postorder of the reversed graph from the exit
        order: list[int] = []
        seen = {exit_}
        stack: list[tuple[int, int]] = [(exit_, 0)]
        while stack:
            node, k = stack.pop()
            if k < len(preds[node]):
                stack.append((node, k + 1))
                nxt = preds[node][k]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, 0))
            else:
                order.append(node)
        number = {node: len(order) - 1 - k for k, node in enumerate(order)}  # RPO numbers
        rpo = order[::-1]
        idom: dict[int, int] = {exit_: exit_}

        def meet(a: int, b: int) -> int:
            while a != b:
                while number[a] > number[b]:
                    a = idom[a]
                while number[b] > number[a]:
                    b = idom[b]
            return a

        changed = True
        while changed:
            changed = False
            for node in rpo[1:]:
                done = [s for s in succ[node] if s in idom]
                if not done:
                    continue
                new = done[0]
                for s in done[1:]:
                    new = meet(s, new)
                if idom.get(node) != new:
                    idom[node] = new
                    changed = True
        # blocks that never reach an exit (a trap loop) reconverge nowhere
        return [EXIT if idom.get(b, exit_) == exit_ else idom[b] for b in range(nb)]

    def region(self, index: int) -> Region:
        """The region of the decision at instruction ``index`` (the end of its block)."""
        found = self._regions.get(index)
        if found is not None:
            return found
        b = int(self.block_of[index])
        stop = self.ipdom[b]
        reconverge = EXIT if stop == EXIT else self.starts[stop]
        todo = [int(self.block_of[s]) for s in self.succ[index] if s != EXIT]
        seen: set[int] = set()
        while todo:
            x = todo.pop()
            if x == stop or x in seen:
                continue
            seen.add(x)
            todo.extend(int(self.block_of[s]) for s in self.succ[self.ends[x]] if s != EXIT)
        members = [i for x in sorted(seen) for i in range(self.starts[x], self.ends[x] + 1)]
        called, followed = subroutines.called(self, members)
        # its threads meet again where they reconverge, whatever paths they took: every
        # instruction of the region comes before it (those of a subroutine rank at its call
        # site), so the scheduler runs none there before the region's are all there
        meet = followed and reconverge != EXIT and all(i < reconverge for i in members)
        members = sorted({*members, *called})
        shared = tuple(i for i in members if self.kinds[i] is not None)
        dests = frozenset(d for i in members for d in self.destinations[i])
        values = meet and all(self._chooses(i) for i in members)
        found = self._regions[index] = Region(reconverge, shared, dests, values)
        return found

    @cached_property
    def predecessors(self) -> dict[int, list[int]]:
        """Each instruction's predecessors (:func:`.sync.subroutines.predecessors`)."""
        return subroutines.predecessors(self.succ)

    @cached_property
    def jumped(self) -> frozenset[int]:
        """The instructions reached from another than the one before them
        (:func:`.sync.subroutines.jumped`)."""
        return subroutines.jumped(self.predecessors)

    @cached_property
    def returns(self) -> dict[int, frozenset[int]]:
        """The subroutines' returns proven to go back to their call sites, each with the
        calls it is proven for (:func:`.sync.subroutines.returns`): for a thread that came
        by one of them, where it goes does not depend on a value."""
        return subroutines.returns(self)

    def _chooses(self, i: int) -> bool:
        """Whether instruction ``i`` of a region (or of a subroutine it calls) only computes
        values or steers among such: :attr:`values`, a branch to a label, a convergence
        barrier, a call :func:`.sync.subroutines.called` followed, a subroutine's return."""
        ins = self.function.instructions[i]
        if self.values[i] or ins.opcode in ("BSSY", "BSYNC", "NOP", "CALL", "RET"):
            return True
        return ins.opcode in JUMPS and self.target(ins) is not None

    def target(self, ins: Instruction) -> int | None:
        """The instruction a branch or a call to one label goes to (None: another kind:
        through a register, ``.DIV``/``.CONV``, a function outside the code)."""
        labels = [o for o in ins.operands if isinstance(o, Label)]
        if len(labels) != 1 or {"DIV", "CONV"} & set(ins.mods):
            return None
        if ins.opcode == "CALL" and len(ins.operands) != 1:
            return None
        pc = self.function.labels.get(labels[0].name)
        return None if pc is None else self.function.index_of(pc)


_TAINTS = {"R": "tr", "UR": "tur", "P": "tp", "UP": "tup"}  # each kind's taint rows


def _registers(blk: Block, kind: str) -> Any:
    return getattr(blk, _TAINTS[kind])


def _per_thread(taint: Any, shape: tuple[int, ...]) -> Any:
    """``taint`` as uint8 of ``shape`` (a view where it must be broadcast)."""
    t = np.asarray(taint, dtype=np.uint8)
    return t if t.shape == shape else np.broadcast_to(t, shape)


def _at(blk: Block, ids: npt.NDArray[np.intp]) -> Any:
    """An index of the threads ``ids``: a slice where they are every thread (a slice costs
    less than a gather or a scatter)."""
    return slice(None) if ids is blk.all_idx else ids


def taint_destinations(
    blk: Block, dests: Any, ids: npt.NDArray[np.intp], taint: npt.NDArray[np.uint8]
) -> None:
    """OR ``taint`` (per thread of ``ids``) into the registers ``dests`` of those threads."""
    at = _at(blk, ids)
    for kind, first, count in dests:
        _registers(blk, kind)[first : first + count, at] |= taint[None, :]
        for k in range(count if blk.byte_clean else 0):  # every byte of the register takes it
            rec = blk.byte_clean.get((kind, first + k))
            if rec is not None:
                rec[:, at] &= ~taint[None, :]


def per_warp(blk: Block, ids: npt.NDArray[np.intp], taint: Any) -> npt.NDArray[np.uint8]:
    """Each thread's taint ORed over its warp's threads among ``ids`` (sorted)."""
    by_warp = warp_or(ids, blk.warp_size, _per_thread(taint, ids.shape))
    out: npt.NDArray[np.uint8] = by_warp.ors[by_warp.row]
    return out


def open_region(
    blk: Block, flow: ControlFlow, index: int, ids: npt.NDArray[np.intp], taint: Any
) -> None:
    """Threads ``ids`` took a decision at ``index`` that carried ``taint``."""
    taint = _per_thread(taint, ids.shape)
    if not np.count_nonzero(taint):  # (count_nonzero: a tenth of .any()'s cost on a warp)
        return
    region = flow.region(index)
    held = blk.regions.get(region.reconverge)
    if held is None:
        held = blk.regions[region.reconverge] = np.zeros(blk.threads, dtype=np.uint8)
    at = _at(blk, ids)
    held[at] |= taint
    blk.ctl[at] |= taint
    blk.region_dests.setdefault(region.reconverge, set()).update(region.dests)
    if not region.shared:
        return
    bits = int(np.bitwise_or.reduce(taint))
    instructions = flow.function.instructions
    for j in region.shared:
        kind = flow.kinds[j]
        assert kind is not None
        blk.rec.decide(j, instructions[j], kind, bits)


def reconverge(blk: Block, index: int, ids: npt.NDArray[np.intp]) -> None:
    """Threads ``ids`` reached instruction ``index``: the regions that end there close."""
    held = blk.regions[index]
    taint = held[ids]
    if not np.count_nonzero(taint):
        return
    taint_destinations(blk, blk.region_dests[index], ids, taint)
    held[ids] = 0
    if not np.count_nonzero(held):
        del blk.regions[index]
        del blk.region_dests[index]
    rest = np.zeros(len(ids), dtype=np.uint8)
    for other in blk.regions.values():
        rest |= other[ids]
    blk.ctl[ids] = rest


def flow_of(program: Program, function: Function, kinds: Sequence[Any]) -> ControlFlow:
    """The function's control flow, made once per program."""
    if program.flow is None:
        program.flow = ControlFlow(function, program.destinations, kinds, program.values)
    flow: ControlFlow = program.flow
    return flow


def conditions(ins: Instruction) -> tuple[tuple[str, int], ...] | None:
    """The predicates that decide whether (or where) the threads at ``ins`` go on: its
    guard, and a branch's condition operand; None when nothing decides."""
    guard = ins.guard
    found = [(guard.kind, guard.index)] if guard is not None and guard.index != 7 else []
    return tuple(found + branch_conditions(ins)) or None


def branch_conditions(ins: Instruction) -> list[tuple[str, int]]:
    """A branch's condition operands (``BRA P0``, ``@P1 BRA !P2``), its guard aside."""
    if ins.opcode not in JUMPS or {"DIV", "CONV"} & set(ins.mods):
        return []
    ops = ins.operands
    return [
        (o.kind, o.index)
        for o in ops
        if isinstance(o, Reg) and o.kind in ("P", "UP") and not o.is_true
    ]


def before_step(
    blk: Block,
    program: Program,
    function: Function,
    kinds: Sequence[Any],
    index: int,
    sel: npt.NDArray[np.intp],
    decide: tuple[tuple[str, int], ...] | None,
) -> npt.NDArray[np.uint8] | None:
    """The threads ``sel`` are at instruction ``index``, which the predicates ``decide``
    (:func:`conditions`) decide: the taint of the decisions behind the step, per thread
    (their open regions, and the predicates' per warp), or None. Closes the regions that
    reconverge here, opens that of a tainted branch or exit, marks a shared-memory
    instruction decided."""
    if index in blk.regions:
        reconverge(blk, index, sel)
    taint: npt.NDArray[np.uint8] | None = None
    every = sel is blk.all_idx  # every thread: rows copied, not gathered
    if blk.regions:
        held = blk.ctl.copy() if every else blk.ctl[sel]
        if np.count_nonzero(held):
            taint = held
    if decide is not None:
        found = None
        for kind, k in decide:
            row = _registers(blk, kind)[k]
            if np.count_nonzero(row):
                bits = (row if every else row[sel]) & FOLLOWED
                found = bits if found is None else found | bits
        if found is not None and np.count_nonzero(found):
            decided = per_warp(blk, sel, found)
            ins = function.instructions[index]
            if ins.opcode in CONTROL:
                open_region(blk, flow_of(program, function, kinds), index, sel, decided)
            kind_ = kinds[index]
            if kind_ is not None:
                blk.rec.decide(index, ins, kind_, int(np.bitwise_or.reduce(decided)))
            taint = decided if taint is None else taint | decided
    return taint


def enter(blk: Block, sel: npt.NDArray[np.intp], taint: npt.NDArray[np.uint8]) -> None:
    """The step about to run takes ``taint`` (per thread of ``sel``) into the requests it
    records and the memory it writes (read only: where every thread is at the step, the
    array itself)."""
    if sel is blk.all_idx:
        ambient = taint
    else:
        ambient = np.zeros(blk.threads, dtype=np.uint8)
        ambient[sel] = taint
    blk.ambient = ambient
    blk.rec.control = ambient


def after_step(
    blk: Block,
    program: Program,
    index: int,
    sel: npt.NDArray[np.intp],
    taint: npt.NDArray[np.uint8],
) -> None:
    """The registers the step writes take the taint of its decisions, for every thread at
    it (run or predicated off); requests and stores stop taking it."""
    blk.ambient = None
    blk.rec.control = None
    taint_destinations(blk, program.destinations[index], sel, taint)
