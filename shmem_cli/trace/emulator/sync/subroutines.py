"""What a call reaches, read from the code alone: the instructions of the subroutines it
calls, and whether each of their returns comes back to the instruction after the call.

:mod:`..taint_flow` follows a branch's region into the subroutines it calls (nvcc's slow
path of a float division is one: ``MOV R4, 0x14e0; CALL.REL.NOINC `($__internal_..._slowpath)``,
which returns by ``RET.REL.NODEC R8`` after ``IMAD.MOV.U32 R8, RZ, RZ, R4``): the registers
they write are the region's too, and a region whose subroutines compute values only chooses
values only. A call is followed where it goes to a label, and proven to come back where
every return of its subroutine reads the address a ``MOV`` on the straight line before
the call set to the address after it (ptxas may put the moves of the arguments between them,
which must not write it), or a plain copy of it into that register made on
the straight line before the return (no call between), no instruction of the subroutine
or of those it calls writes the address's register, and no instruction outside the
subroutine falls or jumps into it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ....cuda.sass import Function, Instruction
from ....cuda.sass_operands import Imm, Reg

#: the instructions of the subroutines a region calls, followed at most
CALLED = 4096


class Graph(Protocol):
    """A function's control flow (:class:`..taint_flow.ControlFlow`): each instruction's
    successors (an index below 0: the exit) and the registers it writes."""

    function: Function
    succ: list[list[int]]
    destinations: list[tuple[tuple[str, int, int], ...]]

    @property
    def predecessors(self) -> dict[int, list[int]]:
        """:func:`predecessors` of :attr:`succ`, made once."""

    @property
    def jumped(self) -> frozenset[int]:
        """:func:`jumped` of :attr:`predecessors`, made once."""

    def target(self, ins: Instruction) -> int | None: ...


def called(graph: Graph, members: Sequence[int]) -> tuple[set[int], bool]:
    """The instructions of the subroutines the instructions ``members`` call, those they call
    in turn included, at most :data:`CALLED`; and whether every call was followed and comes
    back (the module's rule)."""
    ins = graph.function.instructions
    body: set[int] = set()
    todo, done = [i for i in members if ins[i].opcode == "CALL"], set[int]()
    if not todo:  # no call: nothing to follow (most regions)
        return body, True
    came, jumped = graph.predecessors, graph.jumped
    bodies: dict[int, set[int]] = {}  # each call's subroutine (those it calls left out)
    while todo:
        c = todo.pop()
        start = graph.target(ins[c])
        if start is None or not 0 < c < len(ins) - 1 or c in jumped:
            return body, False
        done.add(c)
        walk, seen = [start], set[int]()
        while walk and len(seen) + len(body) <= CALLED:
            i = walk.pop()
            if i not in seen and i >= 0:
                seen.add(i)
                todo += [i] if ins[i].opcode == "CALL" and i not in done else []
                walk += graph.succ[i]  # a guarded return's too: its threads go on
        if walk or _entered(came, seen):
            return body, False
        bodies[c] = seen
        body |= seen
    for c, seen in bodies.items():  # (the register it returns by: not written in its callees)
        if not _returns(graph, c, seen, _deep(ins, bodies, c), jumped):
            return body, False
    return body, True


def _deep(ins: Sequence[Instruction], bodies: dict[int, set[int]], c: int) -> set[int]:
    """The instructions of the subroutine called at ``c`` and of those it calls in turn."""
    deep: set[int] = set()
    todo = [c]
    while todo:
        k = todo.pop()
        if k in bodies and not bodies[k] <= deep:
            deep |= bodies[k]
            todo += [i for i in bodies[k] if ins[i].opcode == "CALL"]
    return deep


def returns(graph: Graph) -> dict[int, frozenset[int]]:
    """The returns proven to come back to their call site (the module's rule), each with the
    calls it is proven for. A call not followed (through a register: a function pointer,
    ``printf``'s ``vprintf`` or ``__assertfail`` called from the address ``LEPC`` made)
    proves nothing, and may enter any function of the code: a thread that came by it, not
    by a call its return is proven for, is not covered (the proof of alike blocks reads each
    thread's call frame: :meth:`..alike.watch.Watch.operands`)."""
    ins = graph.function.instructions
    proven: dict[int, set[int]] = {}
    for c in (i for i in range(len(ins)) if ins[i].opcode == "CALL"):
        body, followed = called(graph, [c])
        for i in (i for i in body if ins[i].opcode == "RET") if followed else ():
            proven.setdefault(i, set()).add(c)
    return {i: frozenset(sites) for i, sites in proven.items()}


def predecessors(succ: Sequence[Sequence[int]]) -> dict[int, list[int]]:
    """Each instruction's predecessors, from each one's successors ``succ`` (a call's
    successor is the instruction after it)."""
    came: dict[int, list[int]] = {}
    for k, ss in enumerate(succ):
        for s in ss:
            came.setdefault(s, []).append(k)
    return came


def jumped(came: dict[int, list[int]]) -> frozenset[int]:
    """The instructions reached from another than the one before them (a jump's target),
    from each one's predecessors ``came``: made once per function (its control flow's), not
    for each call site."""
    return frozenset(s for s, ks in came.items() if any(k != s - 1 for k in ks))


def _entered(came: dict[int, list[int]], body: set[int]) -> bool:
    """Whether an instruction outside ``body`` falls or jumps into it: a path that reaches
    its returns without the call, with any value in the register they read."""
    return any(k not in body for i in body for k in came.get(i, ()))


def _returns(graph: Graph, c: int, body: set[int], deep: set[int], jumped: frozenset[int]) -> bool:
    """Whether every return of ``body``, the subroutine called at ``c`` (``deep``: with the
    subroutines it calls), comes back to the instruction after ``c``."""
    ins = graph.function.instructions
    held = _return_address(graph, c, jumped)
    if held is None or any(_writes(graph, i, held) for i in deep):
        return False
    for i in (i for i in body if ins[i].opcode == "RET"):
        read = [o for o in ins[i].operands if isinstance(o, Reg)]
        if len(read) != 1:
            return False
        j = i  # the last write of the register read, on the straight line before the return
        while not _same(read[0], held) and j not in jumped and j > 0 and graph.succ[j - 1] == [j]:
            j -= 1
            if _writes(graph, j, read[0]) or ins[j].opcode == "CALL":  # (a callee may)
                break
        if not _same(read[0], held) and not _copies(ins[j], read[0], held):
            return False
    return True


def _return_address(graph: Graph, c: int, jumped: frozenset[int]) -> Reg | None:
    """The register an unguarded ``MOV`` on the straight line before the call at ``c`` sets
    to the address after it, written by nothing between them (ptxas may schedule the moves
    of the arguments there: ``MOV R16, 0x6b0; IMAD.MOV.U32 R3, RZ, RZ, R4; CALL``); None
    without one."""
    ins = graph.function.instructions
    j = c
    while j > 0 and j not in jumped and graph.succ[j - 1] == [j] and ins[j - 1].opcode != "CALL":
        j -= 1
        ops = ins[j].operands
        if ins[j].opcode != "MOV" or ins[j].guard is not None or len(ops) != 2:
            continue
        held, value = ops
        if isinstance(held, Reg) and isinstance(value, Imm) and value.int_value == ins[c + 1].pc:
            return None if any(_writes(graph, k, held) for k in range(j + 1, c)) else held
    return None


def _same(a: Reg, b: Reg) -> bool:
    return (a.kind, a.index) == (b.kind, b.index)


def _writes(graph: Graph, i: int, reg: Reg) -> bool:
    """Whether instruction ``i`` writes register ``reg``."""
    return any(k == reg.kind and a <= reg.index < a + n for k, a, n in graph.destinations[i])


def _copies(ins: Instruction, into: Reg, reg: Reg) -> bool:
    """Whether ``ins`` always copies ``reg`` as it is into ``into`` (``MOV Rd, Rs``,
    ``IMAD.MOV.U32 Rd, RZ, RZ, Rs``): a copy into another register leaves ``into`` as it
    was."""
    ops = ins.operands
    plain = ins.opcode == "MOV" or (ins.opcode == "IMAD" and "MOV" in ins.mods)
    if not plain or ins.guard is not None or not ops or ops[-1] != Reg(reg.kind, reg.index):
        return False
    if ops[0] != Reg(into.kind, into.index):
        return False
    return all(isinstance(o, Reg) and o.is_zero for o in ops[1:-1])
