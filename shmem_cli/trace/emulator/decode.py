"""The opcode registry: every opcode family, and decoding with the full table.

Importing a family module registers its builders in :data:`decode.TABLE
<shmem_cli.trace.decode.TABLE>`; this module imports every family, so whoever decodes
through it sees every opcode. A new family module is added to :data:`FAMILIES`. An
opcode outside the table is an error naming it, its pc and its source line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from ...cuda.sass import Function, Instruction
from ...cuda.sass_operands import Const
from .op_table import TABLE, Builder, Context, Skipped, Step
from .operands import Dest, collecting_destinations
from .ops import async_proxy as ops_async
from .ops import atomic as ops_atomic
from .ops import bits as ops_bits
from .ops import control as ops_ctrl
from .ops import convert as ops_convert
from .ops import float_compare as ops_fcompare
from .ops import floating as ops_float
from .ops import half as ops_half
from .ops import integer as ops_int
from .ops import memory as ops_mem
from .ops import mma as ops_mma
from .ops import packed as ops_packed
from .ops import warpgroup as ops_warpgroup
from .ops.warp import collective as ops_warp
from .ops.warp import reconvergence as ops_reconverge
from .ops.warp import special_registers as ops_special
from .state import Block, Idx, TraceError
from .sync import clock
from .whole.chains import chains_of
from .whole.pick import whole_step
from .whole.rows import Rows, WholeStep

#: The families whose steps compute values in the running thread's own registers and
#: predicates, and do nothing else: no memory of any space, no other lane, no thread moved,
#: nothing the records or the op_misc rows count (:func:`values_only`).
VALUE_FAMILIES: tuple[ModuleType, ...] = (
    ops_int,
    ops_packed,
    ops_bits,
    ops_float,
    ops_fcompare,
    ops_half,
    ops_convert,
)
#: The family modules, each registering the opcodes of one kind of instruction.
FAMILIES: tuple[ModuleType, ...] = (
    *VALUE_FAMILIES,
    ops_mem,
    ops_atomic,
    ops_ctrl,
    ops_warp,
    ops_special,
    ops_reconverge,
    ops_mma,
    ops_async,
    ops_warpgroup,
)
_VALUE_BUILDERS = frozenset(m.__name__ for m in VALUE_FAMILIES)
#: the constant loads, values alike where they read the parameters' bank at a fixed offset
#: (FlashAttention-2's ``@P4 LDC R11, c[0x0][0x2e8]`` of its scale, under the row sum's test)
_CONSTANT_LOADS = frozenset({"LDC", "ULDC"})


def values_only(ins: Instruction) -> bool:
    """Whether ``ins`` only computes values in its thread's registers and predicates: an
    opcode of :data:`VALUE_FAMILIES`, or a constant load (``LDC``, ``ULDC``: no other
    memory, nothing counted), reading no constant but the parameters' bank at a fixed
    offset (an indexed read may fail the bank's bounds, an unset ``__constant__`` is named in
    the report). A decision on global data that chooses only among such instructions changes
    values, which its taint follows, and nothing else (:mod:`.taint_flow`,
    :mod:`.alike.watch`)."""
    builder = TABLE.get(ins.opcode)
    if builder is None:
        return False
    if builder.__module__ not in _VALUE_BUILDERS and ins.opcode not in _CONSTANT_LOADS:
        return False
    return all(o.bank == 0 and o.reg is None for o in ins.operands if isinstance(o, Const))


def registered() -> dict[str, Builder]:
    """Every registered opcode and its builder."""
    return dict(TABLE)


#: the opcodes executed while :func:`recording` is active (None: not recording)
_EXECUTED: set[str] | None = None


@contextmanager
def recording() -> Iterator[set[str]]:
    """Collect the base opcodes of every instruction a thread executes, in functions decoded
    while the context is active (the tests' proof that each registered opcode ran on real
    SASS). Outside it, decoding adds nothing to a step."""
    global _EXECUTED
    outer, _EXECUTED = _EXECUTED, set()
    try:
        yield _EXECUTED
    finally:
        inner, _EXECUTED = _EXECUTED, outer
        if outer is not None:
            outer |= inner


def is_recording() -> bool:
    """Whether :func:`recording` is active (its steps then run one by one: no chains)."""
    return _EXECUTED is not None


def decode(ins: Instruction, ctx: Context) -> Step:
    """The step of one instruction, or a :class:`TraceError` naming it."""
    if ins.error is not None:
        raise TraceError(f"instruction {ins.text!r} did not parse: {ins.error}", ins)
    builder = TABLE.get(ins.opcode)
    if builder is None:
        raise TraceError(f"instruction {ins.name} is not modelled by the emulator", ins)
    step = builder(ins, ctx)
    seen = _EXECUTED
    if seen is None:
        return step
    opcode = ins.opcode

    def counted(b: Block, ix: Idx) -> None:
        seen.add(opcode)
        step(b, ix)

    return counted


class Program(list[Step]):
    """A function's steps, one per instruction, and the registers each writes."""

    destinations: list[tuple[Dest, ...]]
    skipped: dict[int, Skipped]  # what threads a tainted decision kept off still taint
    values: list[bool]  # per instruction: decoded, and it computes values only (values_only)
    flow: Any = None  # taint_flow.ControlFlow, made when a decision first carries taint
    tables: Any = None  # scheduler.ProgramTables, made when a block first runs it
    looked: Any = None  # alike.evaluated.looked_at of each, made when a watched block runs
    whole: list[Any]  # per instruction: its whole step (whole.pick), or None
    chains: list[Any]  # per instruction: the chain of whole steps from it (whole.chains)


def decode_function(fn: Function) -> Program:
    """Every instruction's step. One the emulator cannot run becomes a step that raises
    its error when a thread reaches it: library code carries paths a launch never takes
    (CUB's warp-collective fallbacks behind ``BRA.DIV``), which must not stop a trace."""
    ctx = Context(fn)
    steps = Program()
    steps.destinations = []
    steps.values = []
    steps.whole = []
    for ins in fn.instructions:
        with collecting_destinations() as dests:
            try:
                steps.append(decode(ins, ctx))
                steps.values.append(values_only(ins) and ins.error is None)
                steps.whole.append(_whole(ins, ctx, steps[-1]))
            except TraceError as exc:
                steps.append(_raises(exc))
                steps.values.append(False)
                steps.whole.append(None)
        steps.destinations.append(tuple(dict.fromkeys(dests)))
    steps.skipped = ctx.skipped
    if any(clock.reads_clock(ins) for ins in fn.instructions):  # a spin ends at these
        for k, ins in enumerate(fn.instructions):
            if clock.observable(ins):
                steps[k] = _touching(steps[k])
                steps.whole[k] = None
    counted = is_recording()  # (then each step notes its opcode: none runs chained)
    steps.chains = [None] * len(steps) if counted else chains_of(fn.instructions, steps.whole)
    return steps


def _whole(ins: Instruction, ctx: Context, step: Step) -> WholeStep | None:
    """The instruction's whole step (:func:`.whole.pick.whole_step`), which notes its opcode
    while :func:`recording` is active (as its own step does)."""
    whole = whole_step(ins, ctx, step)
    seen = _EXECUTED
    if whole is None or seen is None:
        return whole
    opcode = ins.opcode

    def counted(b: Block, rows: Rows) -> None:
        seen.add(opcode)
        whole(b, rows)

    return counted


def _touching(step: Step) -> Step:
    """``step``, which also ends the spins on the clock of the warps that run it
    (:mod:`.sync.clock`: fast-forward)."""

    def touching(b: Block, ix: Idx) -> None:
        b.clock.touch(b.warp[b.ids(ix)])
        step(b, ix)

    return touching


def _raises(error: TraceError) -> Step:
    def step(b: Block, ix: Idx) -> None:
        raise error

    return step
