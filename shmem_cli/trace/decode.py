"""The opcode table: each instruction is decoded once into a step closure.

A step is ``step(block, index)``: it executes the instruction for the threads of the
index (those at its pc whose guard predicate holds). Families of opcodes register
their builders here from the ``ops_*`` modules; an opcode outside the table is an
error naming it, its pc and its source line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from .sass import Function, Instruction, Label
from .state import Block, Idx, TraceError

Step: TypeAlias = Callable[[Block, Idx], None]


@dataclass
class Context:
    """What a builder may need beyond the instruction: the function and its labels."""

    function: Function

    def __post_init__(self) -> None:
        self._lookup = {x.pc: i for i, x in enumerate(self.function.instructions)}

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
TABLE: dict[str, Builder] = {}


def op(*names: str) -> Callable[[Builder], Builder]:
    """Register a builder for the given base opcodes."""

    def deco(fn: Builder) -> Builder:
        for n in names:
            TABLE[n] = fn
        return fn

    return deco


def decode(ins: Instruction, ctx: Context) -> Step:
    _load_families()
    builder = TABLE.get(ins.opcode)
    if builder is None:
        raise TraceError(f"instruction {ins.name} is not modelled by the emulator", ins)
    return builder(ins, ctx)


def decode_function(fn: Function) -> list[Step]:
    """Every instruction's step. One the emulator cannot run becomes a step that raises
    its error when a thread reaches it: library code carries paths a launch never takes
    (CUB's warp-collective fallbacks behind ``BRA.DIV``), which must not stop a trace."""
    ctx = Context(fn)
    steps = []
    for ins in fn.instructions:
        try:
            steps.append(decode(ins, ctx))
        except TraceError as exc:
            steps.append(_raises(exc))
    return steps


def _raises(error: TraceError) -> Step:
    def step(b: Block, ix: Idx) -> None:
        raise error

    return step


def unsupported(ins: Instruction, what: str = "") -> TraceError:
    extra = f" ({what})" if what else ""
    return TraceError(f"instruction {ins.name} is not modelled by the emulator{extra}", ins)


def _load_families() -> None:
    if TABLE.get("__loaded__") is None:
        from . import (  # noqa: F401 (imported for the opcodes they register)
            ops_async,
            ops_atomic,
            ops_bits,
            ops_convert,
            ops_ctrl,
            ops_float,
            ops_half,
            ops_int,
            ops_ldsm,
            ops_mem,
            ops_mma,
            ops_warp,
        )

        TABLE["__loaded__"] = _never


def _never(ins: Instruction, ctx: Context) -> Step:
    raise unsupported(ins)
