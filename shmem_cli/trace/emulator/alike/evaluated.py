"""What the proof of alike blocks evaluates over the grid's blocks: the instructions whose
values it computes for every candidate block (:data:`EVALUATED`, uniform twins read as their
base: :func:`base_opcode`) and the operands each reads (:func:`sources`)."""

from __future__ import annotations

from collections.abc import Sequence

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Imm, Operand, Reg
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
