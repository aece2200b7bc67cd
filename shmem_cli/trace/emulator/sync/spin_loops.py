"""Whether a grid's code may spin on memory another thread writes (:func:`may_wait`), read
from the code alone: :mod:`.waiting_blocks` then holds every batch of the grid to the state
the repeat check keeps, so that a spin is proven (and its threads parked, or its batch set
aside) wherever it runs (tests/data/trace/bigwait).

The rule is the loop's, not a mark on a load: a spin is a loop that a decision inside it
leaves on a value read inside the loop from memory other threads write, global or shared,
whatever the read: a weak ``ld.global`` that a ``__nanosleep`` keeps in the loop waits on
another block as well as an ``ld.acquire``, a volatile shared flag on another warp. A loop
whose read ptxas hoisted out of it reads a register and never ends, on the GPU too; a loop
over data that ends by a count waits on nothing. (An mbarrier's wait is no spin here: the
emulator blocks it, :mod:`.mbarrier`.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from ..alike.evaluated import UNFOLLOWED, reads, register_bits, sources, wide_source
from ..taint_flow import CONTROL, ControlFlow, conditions
from . import subroutines

if TYPE_CHECKING:
    from ....cuda.sass import Function, Instruction
    from ..operands import Dest

#: reads of memory that other threads write, into registers: global memory however marked
#: (weak, volatile, strong, ``.nc``), atomics, surfaces, shared memory (another warp's flag,
#: what a copy from global memory put there), generic addresses
_READS = frozenset({"LD", "LDG", "ATOM", "ATOMG", "SULD", "SUATOM", "LDS", "LDSM", "ATOMS"})
#: local memory, which passes such a value on (a register spilled and refilled)
_LOCAL_READS, _LOCAL_WRITES = frozenset({"LD", "LDL"}), frozenset({"ST", "STL"})
#: a bit per register (:data:`..alike.evaluated.REGISTER_BITS`) and one for local memory
_MEMORY = 1 << 336
_EVERY = (1 << 337) - 1


def may_wait(function: Function, destinations: Sequence[tuple[Dest, ...]]) -> bool:
    """Whether this code may spin on memory that another thread writes (the module's rule):
    a loop (a jump back) that a decision inside it may leave (a branch or exit with a way
    out, the jump back itself where it is conditional) on a value read inside the loop from
    global or shared memory (:data:`_READS`, however marked), followed through registers
    (``destinations``: what each instruction writes), local memory, the subroutines the
    loop calls, and the registers a branch on such a value chooses (written in its region)."""
    code = function.instructions
    if not any(ins.opcode in _READS for ins in code):
        return False
    if any(ins.opcode in UNFOLLOWED for ins in code):
        return True  # a jump through a register: its loops are not known
    flow = ControlFlow(function, list(destinations), [None] * len(code))
    for latch, after in enumerate(flow.succ):
        for head in after:
            if 0 <= head <= latch and _left_on_global(flow, _loop(flow, head, latch)):
                return True
    return False


def _loop(flow: ControlFlow, head: int, latch: int) -> set[int]:
    """The loop the jump back from ``latch`` to ``head`` closes: ``head`` and every
    instruction on a path from it to ``latch``. Where every path to ``latch`` passes ``head``
    (a natural loop), those that reach ``latch`` without passing ``head``; else (a retry
    block placed after the code that jumps back into it, ``mbarrier.try_wait``'s, closes no
    loop of its own) those that reach ``latch`` and that ``head`` reaches."""
    came = flow.predecessors
    body = {head} | _reach(latch, lambda i: came.get(i, ()), {head})
    if all(came.get(i) for i in body if i != head):
        return body  # no entry reached
    before = _reach(latch, lambda i: came.get(i, ()), set())
    return _reach(head, lambda i: [s for s in flow.succ[i] if s in before], set())


def _reach(start: int, step: Callable[[int], Iterable[int]], stop: set[int]) -> set[int]:
    """The instructions ``step`` leads to from ``start`` (itself included), none of ``stop``."""
    seen, todo = set[int](), [start]
    while todo:
        i = todo.pop()
        if i >= 0 and i not in seen and i not in stop:
            seen.add(i)
            todo += step(i)
    return seen


def _left_on_global(flow: ControlFlow, body: set[int]) -> bool:
    """Whether a decision of the loop ``body`` that may leave it reads a value from global
    memory read inside it (:func:`may_wait`)."""
    code = flow.function.instructions
    called, followed = subroutines.called(flow, sorted(body))
    every = body | called
    if not any(code[i].opcode in _READS for i in every):
        return False
    sites = [i + 1 for i in every if code[i].opcode == "CALL"]
    succ = {i: [s for s in _next(flow, i, sites) if s in every] for i in every}
    chosen: set[int] = set()  # what a branch on such a value runs: it writes such values
    while True:
        state = _spread(flow, every, succ, chosen, followed)
        more = set(chosen)
        for i in sorted(body):
            decide = conditions(code[i]) if code[i].opcode in CONTROL else None
            if decide is None or not register_bits(decide) & state[i]:
                continue
            if any(s not in body for s in flow.succ[i]):
                return True  # a way out of the loop, taken on the value
            meet = {flow.region(i).reconverge}  # (a return: back after the call walked)
            for s in succ[i]:
                more |= _reach(s, lambda j: [] if code[j].opcode == "RET" else succ[j], meet)
        if more == chosen:
            return False
        chosen = more


def _next(flow: ControlFlow, i: int, sites: list[int]) -> list[int]:
    """Where the value goes on after instruction ``i``: a call's subroutine and the
    instruction after it, a return's every call site's next."""
    ins = flow.function.instructions[i]
    if ins.opcode == "CALL":
        target = flow.target(ins)
        return [*flow.succ[i], *([] if target is None else [target])]
    return sites if ins.opcode == "RET" else flow.succ[i]


def _spread(
    flow: ControlFlow, every: set[int], succ: dict[int, list[int]], chosen: set[int], held: bool
) -> dict[int, int]:
    """The bits (:data:`..alike.evaluated.REGISTER_BITS`) that hold a value read from global
    memory in the loop, before each of its instructions ``every``, along its paths ``succ``
    (``chosen``: instructions whose writes hold one; ``held``: its calls were followed, else
    a call makes every bit hold)."""
    code = flow.function.instructions
    state = dict.fromkeys(every, 0)
    todo = sorted(every, reverse=True)  # every instruction once, then where a bit is new
    while todo:
        i = todo.pop()
        out = _step(code[i], flow.destinations[i], state[i], i in chosen, held)
        for s in succ[i]:
            if out & ~state[s]:
                state[s] |= out
                todo.append(s)
    return state


def _step(ins: Instruction, dests: tuple[Dest, ...], held: int, chosen: bool, calls: bool) -> int:
    """The bits ``held`` after ``ins`` (:func:`_spread`)."""
    op = ins.opcode
    if op == "CALL" and not calls:
        return _EVERY
    writes = op in _LOCAL_WRITES
    read = register_bits(
        r
        for k, o in enumerate(ins.operands if writes else sources(ins))
        for r in reads(o, wide_source(ins, k))
    )
    g = ins.guard
    guard = register_bits([(g.kind, g.index)]) if g is not None and g.index != 7 else 0
    defs = register_bits([(k, r + j) for k, r, n in dests for j in range(n)])
    taken = chosen or held & (read | guard) or op in _READS
    if taken or op in _LOCAL_READS and held & _MEMORY:
        held |= defs
    elif not guard:
        held &= ~defs
    return held | (_MEMORY if writes and taken else 0)
