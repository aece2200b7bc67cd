"""What the proof of alike blocks evaluates over the grid's blocks: the instructions whose
values it computes for every candidate block (:data:`EVALUATED`, uniform twins read as their
base: :func:`base_opcode`), the operands each reads (:func:`sources`), and those whose values
may reach a decision (:func:`needed`: no other's are evaluated)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Gdesc, Imm, Mem, Operand, Reg
from ..operands import is_pred

TWINS = frozenset(
    ("IADD3", "IMAD", "LEA", "MOV", "SHF", "ISETP", "LOP3", "SEL", "PRMT")
    + ("POPC", "FLO", "BREV", "BMSK", "SGXT")
)
#: instructions evaluated over the candidate blocks (their uniform twins too): integer ones,
#: and the conversions and reciprocal of nvcc's division by a runtime value (I2F.RP,
#: MUFU.RCP, F2I; CUTLASS 3.x's scheduler's ``(float)b * (1 / size)``: FMUL), run as for a block
EVALUATED = frozenset(
    {*TWINS, "VIADD", "IABS", "IMNMX", "VIMNMX", "VIADDMNMX", "PLOP3", "R2UR", "P2R", "UP2UR"}
    | {"I2F", "I2FP", "MUFU", "F2I", "FMUL"}
)


def base_opcode(ins: Instruction) -> str:
    """The opcode, a uniform twin read as its base (UIADD3 as IADD3, S2UR as S2R)."""
    op = ins.opcode
    if op == "S2UR":
        return "S2R"
    if op.startswith("U") and op[1:] in TWINS:
        return op[1:]
    return op


def sources(ins: Instruction) -> list[Operand]:
    """The operands an instruction reads: those after its destinations (the first operand,
    the carry-out predicates after it, both predicates of ISETP and PLOP3, LOP3's predicate
    and register)."""
    ops = list(ins.operands)
    op = base_opcode(ins)
    if op in ("ISETP", "PLOP3"):
        return ops[2:]
    if op in ("P2R", "UP2UR") and len(ops) == 4 and isinstance(ops[3], Imm):
        # P2R Rd, PR, Rb, mask reads Rb and the predicates of the mask (a guard kept in a
        # register across a loop: Triton's block pointers' bounds checks)
        kind = "UP" if op == "UP2UR" else "P"
        mask = (ops[3].int_value or 0) & 0x7F
        return [ops[2], *(Reg(kind, k) for k in range(7) if mask >> k & 1)]
    if op in ("VOTE", "VOTEU"):  # VOTE.ANY P1, P0 and VOTE.ANY R5, PT, P0 read P0
        return ops[-1:]
    first = ops[0] if ops else None
    if op == "LOP3" and isinstance(first, Reg) and first.kind in ("P", "UP"):
        return ops[2:]
    start = 1
    while start < len(ops):
        o = ops[start]
        if not (isinstance(o, Reg) and o.kind in ("P", "UP") and not o.not_):
            break
        start += 1
    return ops[start:]


def looked_at(ins: Instruction) -> list[tuple[str, int]] | None:
    """The registers whose taint makes the proof look at what ``ins`` writes
    (:meth:`.forms.Forms.before`): an empty list where it always looks (an ``S2R``; a spill or
    a refill, which carries a form), None where it never does (an instruction it does not
    evaluate); else the registers it reads, looked at where one carries taint (a value of
    sources free of taint is the same in every block: no form is needed)."""
    op = base_opcode(ins)
    if op in ("S2R", "STL", "LDL"):
        return []
    if op not in EVALUATED and op not in ("VOTE", "VOTEU"):
        return None
    return [
        (o.kind, o.index)
        for o in sources(ins)
        if isinstance(o, Reg) and not o.is_zero and not o.is_true
    ]


_WIDE = {"X", "64", "WIDE", "HI"}


def additive(ins: Instruction, sources: Sequence[Operand], blocky: Sequence[bool]) -> set[int]:
    """Which sources (positions in ``sources``) pass a thread's constant through unchanged:
    the result is a sum of them and the others, each additive source times a factor the
    group shares (so only their vectors group the threads)."""
    op, mods = base_opcode(ins), set(ins.mods)
    if mods & _WIDE or len(ins.operands) > 1 and is_pred(ins.operands[1]):
        return set()  # a carry out (IADD3 R, P1, ...) depends on a thread's constant too
    n = len(sources)
    if op in ("MOV", "IADD3", "VIADD"):
        return set(range(n))
    if op == "LEA" and n == 3:  # (a << s) + b
        return {0, 1}
    if op == "SHF" and "L" in mods and n == 3:  # the low word of a << s
        return {0}
    if op == "IMAD" and n == 3:  # a * b + c: linear in the factor the other one scales
        if not blocky[1]:
            return {0, 2}
        if not blocky[0]:
            return {1, 2}
        return {2}
    return set()


#: the instructions that write a form (:meth:`.forms.Forms.before`) besides :data:`EVALUATED`
_FORMED = frozenset(("S2R", "VOTE", "VOTEU", "LDL"))


def reads(o: Any, pair: bool = False) -> list[tuple[str, int]]:
    """The registers operand ``o`` reads (a register and, where ``pair``, the one after it;
    a memory operand's base pair, uniform base and descriptor; a wgmma descriptor's four)."""
    if isinstance(o, Reg):
        if o.kind not in ("R", "UR", "P", "UP") or o.is_zero or o.is_true:
            return []
        two = pair and o.kind in ("R", "UR")
        return [(o.kind, o.index + i) for i in range(2 if two else 1)]
    if isinstance(o, Mem):
        return [r for x in (o.reg, o.ureg, o.desc) if x is not None for r in reads(x, True)]
    if isinstance(o, Gdesc):
        return [(o.reg.kind, o.reg.index + i) for i in range(4)]
    return []


#: where each kind's registers start in a mask of registers (:func:`needed`, and
#: :mod:`..sync.spin_loops`); one bit after them stands for memory (spill slots)
REGISTER_BITS = {"R": (0, 256), "UR": (256, 64), "P": (320, 8), "UP": (328, 8)}
_SLOTS = 1 << 336
#: jumps through a register, which :func:`needed` does not follow: every form is made
UNFOLLOWED = frozenset(("BRX", "BRXU", "JMX", "JMXU"))


_ALWAYS = Reg("P", 7)  # (@PT)


def wide_source(ins: Instruction, k: int) -> bool:
    """Whether source ``k`` of ``ins`` (:func:`sources`) may be a register pair:
    ``IMAD.WIDE``'s addend, any source of a 64-bit form (``.U64``, ``.S64``, ``.64``)."""
    if any("64" in mod for mod in ins.mods):
        return True
    return k == 2 and "WIDE" in ins.mods


def register_bits(regs: Iterable[tuple[str, int]]) -> int:
    """The bits of registers ``regs`` (:data:`REGISTER_BITS`)."""
    out = 0
    for kind, index in regs:
        start, count = REGISTER_BITS.get(kind, (0, 0))
        if index < count:
            out |= 1 << (start + index)
    return out


def needed(
    instructions: Sequence[Instruction],
    destinations: Sequence[Any],
    flow: Any,
    decided: Sequence[Sequence[tuple[str, int]]],
    selects: Sequence[bool] = (),
) -> list[bool]:
    """Per instruction: whether a form it writes may reach a decision (``decided``: the
    registers each instruction's decisions read, :mod:`.watch`'s) along some path of
    ``flow`` (a :class:`..taint_flow.ControlFlow`; a call goes on at its target and after
    it, a return after every call), through the instructions that write forms (a backward
    liveness of the registers decisions read); every one where the code jumps through a
    register. A form no decision reads is not made: a 64-bit global address's high word,
    whose carries differ block by block, cost a vector per group of threads at each step of
    a loop (llm.c's fused classifier: 16.8 s of CPU where its block took 3.1). A guarded
    select (``selects``: :mod:`.guarded`) that is needed reads its sources as pairs and what
    its registers held (kept where its guard is false); one that is not is chosen by its
    guard without its sources: they were needed for its guard alone, and made the first
    block of llm.c's attention backward evaluate 50 million values (each column's address
    chain, under the row guard, for a global load and store)."""
    n = len(instructions)
    succ = [list(s) for s in flow.succ]
    sites = [m + 1 for m, ins in enumerate(instructions) if ins.opcode == "CALL"]
    for m, ins in enumerate(instructions):
        target = flow.target(ins) if ins.opcode == "CALL" else None
        if ins.opcode in UNFOLLOWED or ins.opcode == "CALL" and target is None:
            return [True] * n
        succ[m] += [target] if target is not None else sites if ins.opcode == "RET" else []
    decides, defs, reading, formed = [0] * n, [0] * n, [0] * n, [False] * n
    for m, ins in enumerate(instructions):
        decides[m] = register_bits(decided[m])
        defs[m] = register_bits([(k, i + j) for k, i, c in destinations[m] for j in range(c)])
        op = base_opcode(ins)
        formed[m] = op in EVALUATED or op in _FORMED
        if op == "STL":  # a spill: its registers reach the slots, read by a refill
            formed[m], defs[m] = True, _SLOTS
            r = reads(ins.operands[1])
            reading[m] = register_bits([(k, i + j) for k, i in r for j in range(4)])
        elif op == "LDL":
            reading[m] = _SLOTS
        elif m < len(selects) and selects[m]:  # evaluated as a select where it is needed
            # (.guarded): what it reads, and what its registers held where it did not run
            regs = [r for o in sources(ins) for r in reads(o, True)]
            reading[m] = register_bits(regs) | defs[m]
        elif formed[m]:
            regs = [r for k, o in enumerate(sources(ins)) for r in reads(o, wide_source(ins, k))]
            reading[m] = register_bits(regs)
    kills = [x.opcode != "STL" and (x.guard is None or x.guard == _ALWAYS) for x in instructions]
    live, out = [0] * n, [False] * n
    changed = True
    while changed:
        changed = False
        for m in range(n - 1, -1, -1):
            after = 0
            for s in succ[m]:
                after |= live[s] if 0 <= s < n else 0
            out[m] = formed[m] and after & defs[m] != 0
            if kills[m]:  # (a guarded write, a spill to one slot of many: may not)
                after &= ~defs[m]
            now = decides[m] | after | (reading[m] if out[m] else 0)
            if now != live[m]:
                live[m], changed = now, True
    return out
