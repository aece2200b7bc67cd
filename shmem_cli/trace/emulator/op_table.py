"""How an instruction is decoded: builders, their context and the opcode table.

Each instruction is decoded once into a step closure. A step is ``step(block,
index)``: it executes the instruction for the threads of the index (those at its pc
whose guard predicate holds). A builder turns an instruction into its step; the
``ops_*`` family modules register theirs in :data:`TABLE` with :func:`op`. This module
imports no family: :mod:`shmem_cli.trace.emulator.decode` imports them all and decodes with
the full table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from ...cuda.sass import Function, Instruction
from ...cuda.sass_operands import Const, Label
from .state import Block, Idx, TraceError
from .trace_error import NotModelled

Step: TypeAlias = Callable[[Block, Idx], None]


@dataclass
class Context:
    """What a builder may need beyond the instruction: the function and its labels. A
    builder may also leave, by instruction index, what the threads a decision on global
    data kept off the instruction still do to the taint (``skipped``: a shared store's
    bytes)."""

    function: Function

    def __post_init__(self) -> None:
        self._lookup = {x.pc: i for i, x in enumerate(self.function.instructions)}
        self.skipped: dict[int, Skipped] = {}

    @cached_property
    def pcs(self) -> npt.NDArray[np.int64]:
        """Every instruction's address, in order (made once: a RET or BRX of each of 30,000
        functions made its own copy, quadratic in the code)."""
        return np.array([x.pc for x in self.function.instructions], dtype=np.int64)

    @cached_property
    def starts(self) -> npt.NDArray[np.uint64]:
        """The addresses where a function of the code other than the kernel starts: a named
        label at an instruction (a subroutine, a linked function); [1] (no instruction's)
        where none does."""
        named = {pc for name, pc in self.function.labels.items() if pc and name[:1] != "."}
        found = sorted(named & set(self._lookup))
        return np.array(found or [1], dtype=np.uint64)

    @cached_property
    def start_indices(self) -> npt.NDArray[np.intp]:
        """The instruction index of each of :attr:`starts` (0 for the placeholder)."""
        return np.array([self._lookup.get(int(pc), 0) for pc in self.starts], dtype=np.intp)

    def position(self, ins: Instruction) -> int:
        """The index of an instruction of this function."""
        return self._lookup[ins.pc]

    def target(self, ins: Instruction, label: Label) -> int:
        """The instruction index a label names."""
        pc = self.function.labels.get(label.name)
        if pc is None:
            if label.name == self.function.name:
                return 0
            raise TraceError(f"unknown branch target {label.name}", ins)
        return self.index_of(ins, pc)

    def index_of(self, ins: Instruction, pc: int) -> int:
        if pc not in self._lookup:
            raise TraceError(f"branch target pc 0x{pc:x} is not an instruction", ins)
        return self._lookup[pc]


Builder: TypeAlias = Callable[[Instruction, Context], Step]
#: (block, the threads kept off, the taint of the decision per thread)
Skipped: TypeAlias = Callable[[Block, npt.NDArray[np.intp], npt.NDArray[np.uint8]], None]
TABLE: dict[str, Builder] = {}
#: opcodes whose steps may move threads other than to the next instruction: they write
#: ``Block.sched`` (a branch, an exit, a barrier, an mbarrier's wait or what completes one)
MOVES: set[str] = set()


def op(*names: str, moves: bool = False) -> Callable[[Builder], Builder]:
    """Register a builder for the given base opcodes; ``moves``: its steps may set where a
    thread goes next (``Block.sched``) other than the next instruction, so the scheduler
    looks again at every thread after it (:data:`MOVES`)."""

    def deco(fn: Builder) -> Builder:
        for n in names:
            TABLE[n] = fn
            if moves:
                MOVES.add(n)
            else:
                MOVES.discard(n)
        return fn

    return deco


def unsupported(ins: Instruction, what: str = "") -> NotModelled:
    extra = f" ({what})" if what else ""
    return NotModelled(f"instruction {ins.name} is not modelled by the emulator{extra}", ins)


#: register-to-register opcodes whose step may run over every thread of a batch
WIDE_OPS = frozenset(
    [
        *("IADD3", "UIADD3", "VIADD", "IMAD", "UIMAD", "LEA", "ULEA", "IABS", "IMNMX"),
        *("VIMNMX", "MOV", "UMOV", "SEL", "USEL", "FSEL", "ISETP", "UISETP", "PLOP3"),
        *("UPLOP3", "LOP3", "ULOP3", "SHF", "USHF", "PRMT", "UPRMT", "POPC", "FLO", "BREV"),
        *("SGXT", "BMSK", "FFMA", "FADD", "FMUL", "FMNMX", "FSETP", "MUFU", "I2FP", "I2F"),
        *("F2I", "F2F", "HFMA2", "HADD2", "HMUL2"),
    ]
)


def widens(ins: Instruction, dests: tuple[tuple[str, int, int], ...]) -> bool:
    """Whether a step of ``ins`` may run over every thread of a batch with its one write
    landing only on the step's threads (:meth:`.state.Block.run_wide`): a pure
    register-to-register instruction (:data:`WIDE_OPS`) with one destination register, so
    that all its reads come before its write, and no indexed constant (other threads'
    values could fail its bounds)."""
    if ins.opcode not in WIDE_OPS or len(dests) != 1 or dests[0][2] != 1:
        return False
    return not any(isinstance(o, Const) and o.reg is not None for o in ins.operands)
