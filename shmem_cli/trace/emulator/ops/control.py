"""Control flow, barriers and instructions without a data effect.

Scheduling state lives in the block: ``sched`` is each thread's next instruction
index (``BLOCKED`` for threads that exited or wait at a barrier), ``resume`` where a
waiting thread goes on. The emulator sets every thread at the instruction to the
next index before the step runs, so a step only changes what differs (a taken
branch, an exit, a barrier wait).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Imm, Label
from ..asserts import failed_assert, printed, trapped
from ..op_table import Context, Step, op, unsupported
from ..operands import (
    forget_bytes,
    read_pred,
    read_u32,
    read_u64,
    write_pred,
    write_u32,
    write_u64,
)
from ..state import BLOCKED, TAINT_UNKNOWN, Block, Idx, TraceError
from ..sync.convergence import diverged


def _noop(b: Block, ix: Idx) -> None:
    return None


@op(
    "NOP",
    "MEMBAR",
    "FENCE",
    "ERRBAR",
    "CCTL",
    "DEPBAR",
    "LDGDEPBAR",
    "CGAERRBAR",
    "PMTRIG",
    "ACQBULK",
    "PREEXIT",
)
def _nothing(ins: Instruction, ctx: Context) -> Step:
    """No data effect (memory is coherent); the convergence instructions:
    :mod:`..sync.converge_ops`. A programmatic dependent launch's ``griddepcontrol.wait``
    (``ACQBULK``: wait for the grids before this one, of which a traced launch has none) and
    ``griddepcontrol.launch_dependents`` (``PREEXIT``: let the next grid start early; Triton's
    ``gdc_wait``/``gdc_launch_dependents`` under ``launch_pdl=True``) change nothing here."""
    return _noop


@op("LEPC")
def _lepc(ins: Instruction, ctx: Context) -> Step:
    """``LEPC Rd, label``: the label's address (the return point of the call after it) in
    the register pair Rd:Rd+1, as ``RET`` reads it back; sm_80's ``LEPC Rd``: the address of
    the LEPC itself (the function starts at 0)."""
    ops = ins.operands
    label = ops[1] if len(ops) == 2 and isinstance(ops[1], Label) else None
    if label is None and len(ops) != 1:
        raise unsupported(ins)
    # sm_80's LEPC Rd: its own address (the code adds the return point's offset)
    pc = ctx.function.labels.get(label.name) if label else ins.pc
    if pc is None:
        raise TraceError(f"unknown label {ops[1]}", ins)
    w = write_u64(ops[0], ins)

    def step(b: Block, ix: Idx) -> None:
        w(b, ix, np.full(b.count(ix), pc, dtype=np.uint64), 0)

    return step


@op("CALL", moves=True)
def _call(ins: Instruction, ctx: Context) -> Step:
    """A call jumps; the return address is already in a register (set by a MOV before it).
    A call through a register goes where it says, each thread's own (a function pointer):
    ``CALL.ABS.NOINC R22`` to an address, ``CALL.REL.NOINC R8 `(fn)`` to ``fn`` plus the
    register. An address outside the code that the constant banks held for a function
    outside the cubin (trace/kernel/externals.py) is that function: ``printf``'s ``vprintf``
    is stepped over; a failed ``assert()``'s ``__assertfail`` stops the trace with a located
    error."""
    labels = [o for o in ins.operands if isinstance(o, Label)]
    if not labels and len(ins.operands) == 1:
        return _call_through(ins, ctx, 0)
    if len(labels) == 1 and len(ins.operands) == 1 and _undefined(ins, ctx, labels[0]):
        return _named_call(ins, ctx, labels[0].name)
    if len(labels) == 1 and len(ins.operands) == 2 and "REL" in ins.mods:
        name = labels[0].name
        return _call_through(ins, ctx, ctx.function.labels.get(name, 0))
    if len(labels) != 1 or len(ins.operands) != 1:
        raise unsupported(ins, "indirect call")
    target = ctx.target(ins, labels[0])
    site = ctx.position(ins)

    def step(b: Block, ix: Idx) -> None:
        b.call(b.ids(ix), site, ins)
        b.sched[ix] = target

    return step


#: the registers a function returns its value in (R4, and R5 for 64 bits)
_RETURNED = (4, 5)


def _undefined(ins: Instruction, ctx: Context, label: Label) -> bool:
    """An absolute call to a symbol the function does not hold (``CALL.ABS.NOINC
    `(vprintf)`` in a cubin built with ``-rdc=true``): a function outside the cubin."""
    name = label.name
    return "ABS" in ins.mods and name not in ctx.function.labels and name != ctx.function.name


def _call_through(ins: Instruction, ctx: Context, base: int) -> Step:
    """A call to the address a register (or an immediate) gives, plus ``base``: the start
    of a function of the code other than the kernel (a named label: a subroutine, a
    linked function), or a function outside the cubin (stepped over)."""
    rel = base or "REL" in ins.mods
    address = read_u32(ins.operands[0], "i", ins) if rel else read_u64(ins.operands[0], ins)
    step_over = _step_over(ins, ctx)
    pcs, indices, site = ctx.starts, ctx.start_indices, ctx.position(ins)

    def step(b: Block, ix: Idx) -> None:
        v, _ = address(b, ix)
        ids = b.ids(ix)
        if rel:  # a signed 32-bit offset from base
            v = np.asarray(v, dtype=np.uint32).view(np.int32).astype(np.int64) + base
        at = np.broadcast_to(np.asarray(v).astype(np.uint64), ids.shape)
        k = np.minimum(np.searchsorted(pcs, at), len(pcs) - 1)
        inside = pcs[k] == at
        called = [int(a) for a in np.unique(at[~inside])]
        unnamed = [a for a in called if a not in b.launch.externals]
        if unnamed:
            raise TraceError(
                f"the kernel calls a function outside it at 0x{min(unnamed):x}, an address no "
                "function of the cubin is linked at: the trace cannot step over it",
                ins,
            )
        if called:
            step_over(b, ids[~inside], sorted({b.launch.externals[a] for a in called}))
        if inside.any():
            b.call(ids[inside], site, ins)
            b.sched[ids[inside]] = indices[k[inside]]

    return step


def _named_call(ins: Instruction, ctx: Context, name: str) -> Step:
    step_over = _step_over(ins, ctx)
    return lambda b, ix: step_over(b, ix, [name])


def _step_over(ins: Instruction, ctx: Context) -> Callable[[Block, Idx, list[str]], None]:
    """What a call to functions outside the cubin does: it touches no shared memory of the
    kernel, so it is stepped over (counted among the instructions not modelled, the
    functions named in the report); what it returns is unknown, so a later use of its return
    registers is inexact. An ``assert()`` that failed (``__assertfail``) stops the trace."""
    index = ctx.position(ins)

    def step_over(b: Block, ix: Idx, names: list[str]) -> None:
        if "__assertfail" in names:
            raise failed_assert(b, ix, ins)
        if "vprintf" in names:
            b.printed = printed(b, ix)
        b.callees[index] = ", ".join(names)
        b.listed(index, b.ids(ix))
        for r in _RETURNED:
            if r < len(b.r):
                b.tr[r][ix] = TAINT_UNKNOWN
                forget_bytes(b, "R", r, ix)

    return step_over


@op("BRA", moves=True)
def _bra(ins: Instruction, ctx: Context) -> Step:
    labels = [o for o in ins.operands if isinstance(o, Label)]
    conds = [o for o in ins.operands if not isinstance(o, Label)]
    if len(labels) != 1:
        raise unsupported(ins, "indirect branch")
    if "DIV" in ins.mods:  # taken by the threads of a warp that runs without some lane
        divergent = ctx.target(ins, labels[0])

        def div(b: Block, ix: Idx) -> None:
            ids = b.ids(ix)
            b.sched[ids[diverged(b, ids)]] = divergent

        return div
    target = ctx.target(ins, labels[0])
    if "CONV" in ins.mods:
        conds = []  # taken when the warp is converged, which it is (see above)
    cond = read_pred(conds[0], ins) if conds else None

    def step(b: Block, ix: Idx) -> None:
        if cond is None:
            b.sched[ix] = target
            return
        p, _ = cond(b, ix)
        ids = b.ids(ix)
        b.sched[ids[np.broadcast_to(p, ids.shape)]] = target

    return step


@op("RET", moves=True)
def _ret(ins: Instruction, ctx: Context) -> Step:
    regs = [o for o in ins.operands if not isinstance(o, (Label, Imm))]
    if len(regs) != 1 or any(isinstance(o, Imm) and o.int_value for o in ins.operands):
        raise unsupported(ins)
    ra = read_u32(regs[0], "i", ins)
    find = _instruction_at(ins, ctx, "return address")

    def step(b: Block, ix: Idx) -> None:
        v, _ = ra(b, ix)
        b.sched[ix] = find(v.astype(np.int64))
        b.ret(b.ids(ix))

    return step


def _instruction_at(ins: Instruction, ctx: Context, what: str) -> Callable[[Any], Any]:
    """The instruction indices at byte addresses of the function, or an error naming them."""
    pcs = ctx.pcs

    def find(at: Any) -> Any:
        k = np.searchsorted(pcs, at)
        if (k >= len(pcs)).any() or (pcs[np.minimum(k, len(pcs) - 1)] != at).any():
            raise TraceError(f"{what} is not an instruction of the function", ins)
        return k

    return find


@op("BRX", moves=True)
def _brx(ins: Instruction, ctx: Context) -> Step:
    """``BRX Ra offset``: a branch to the address ``Ra + offset`` after this instruction, each
    thread its own: a switch's jump table (nvcc reads ``Ra`` from a constant bank that holds
    each case's address in the function and makes ``offset`` minus the next instruction's)."""
    ops = ins.operands
    if len(ops) != 2 or not isinstance(ops[1], Imm):
        raise unsupported(ins)
    ra = read_u32(ops[0], "i", ins)
    at = ctx.position(ins)
    if at + 1 >= len(ctx.function.instructions):
        raise unsupported(ins, "no instruction after it")
    base = ctx.function.instructions[at + 1].pc + (ops[1].int_value or 0)
    find = _instruction_at(ins, ctx, "a jump table's target")

    def step(b: Block, ix: Idx) -> None:
        v, _ = ra(b, ix)
        b.sched[ix] = find(np.asarray(v, dtype=np.uint32).view(np.int32).astype(np.int64) + base)

    return step


@op("ENDCOLLECTIVE", moves=True)
def _end_collective(ins: Instruction, ctx: Context) -> Step:
    """The end of a collective section, ``WARPSYNC.COLLECTIVE mask, label ... ENDCOLLECTIVE``
    (ptxas's form of a warp-collective instruction where a warp may be divergent: -O0 code,
    CUTLASS's ``elect.sync`` fallbacks): the threads go on at the section's label. The
    emulator runs the threads of a warp that reach the section together once, which is the
    section's effect for them (each warp instruction acts on the lanes that execute it)."""
    at = ctx.position(ins)
    start = next(
        (
            x
            for x in reversed(ctx.function.instructions[:at])
            if x.opcode == "WARPSYNC" and "COLLECTIVE" in x.mods
        ),
        None,
    )
    labels = [o for o in start.operands if isinstance(o, Label)] if start else []
    if len(labels) != 1:
        raise unsupported(ins, "no WARPSYNC.COLLECTIVE before it")
    target = ctx.target(ins, labels[0])

    def step(b: Block, ix: Idx) -> None:
        b.sched[ix] = target

    return step


@op("EXIT", moves=True)
def _exit(ins: Instruction, ctx: Context) -> Step:
    def step(b: Block, ix: Idx) -> None:
        b.exited[ix] = True
        b.sched[ix] = BLOCKED

    return step


@op("BAR", moves=True)
def _bar(ins: Instruction, ctx: Context) -> Step:
    """BAR.SYNC id[, count], BAR.ARV id, count, BAR.RED.{POPC,AND,OR} id[, count], P.

    A reduction's result is read afterwards with B2R.RESULT (kept per thread in the block).
    ``BAR.SYNC Ra, Rb`` takes the id from bits 0..3 of ``Ra`` and the thread count from bits
    16..27 of ``Rb`` (0: every thread of the CTA), as cooperative groups' collective sections
    pack them (``(count << 16) | id`` in one register given twice); every thread that
    arrives gives the same.
    """
    mods = set(ins.mods)
    ops = list(ins.operands)
    red = next((m for m in ("POPC", "AND", "OR") if m in mods), None)
    pred = read_pred(ops.pop(), ins) if "RED" in mods else None
    arrive_only = "ARV" in mods
    if not (mods & {"SYNC", "ARV", "RED"}) or ("RED" in mods and red is None) or not ops:
        raise unsupported(ins)
    index = ctx.position(ins)

    def arrive(b: Block, ix: Idx, bar_id: int, count: int | None) -> None:
        ids = b.ids(ix)
        bar = b.barriers.get(bar_id)
        if bar is None:
            bar = b.barriers[bar_id] = new_barrier(bar_id, b.ctas)
        per_cta = _per_cta(b, ids)
        bar["arrived"] += per_cta
        bar["count"] = count
        bar["at"] = ins
        if pred is not None:
            p, _ = pred(b, ix)
            yes = np.broadcast_to(p, ids.shape)
            true = np.bincount(b.cta[ids[yes]], minlength=b.ctas) if b.ctas > 1 else yes.sum()
            bar["true"] += true
            bar["false"] += per_cta - true
            bar["red"] = red
        if arrive_only:
            return
        b.waiting[ids] = bar_id
        b.resume[ids] = index + 1
        b.sched[ids] = BLOCKED

    if isinstance(ops[0], Imm):
        bar_id = ops[0].int_value or 0
        count = ops[1].int_value if len(ops) > 1 and isinstance(ops[1], Imm) else None
        return lambda b, ix: arrive(b, ix, bar_id, count)
    if red is not None or arrive_only or len(ops) != 2:
        raise unsupported(ins)
    ra, rb = read_u32(ops[0], "i", ins), read_u32(ops[1], "i", ins)

    def in_registers(b: Block, ix: Idx) -> None:
        ids, counts = np.unique(ra(b, ix)[0] & 0xF), np.unique((rb(b, ix)[0] >> 16) & 0xFFF)
        if len(ids) != 1 or len(counts) != 1:
            raise TraceError("the threads give the barrier different ids or counts", ins)
        arrive(b, ix, int(ids[0]), int(counts[0]) or None)

    return in_registers


#: the barrier id the cluster barrier is kept under (named barriers are 0..15)
CLUSTER_BARRIER = 1 << 20


@op("UCGABAR_ARV")
def _cluster_arrive(ins: Instruction, ctx: Context) -> Step:
    """``barrier.cluster.arrive``: the threads arrive at their cluster's barrier."""

    def step(b: Block, ix: Idx) -> None:
        bar = b.barriers.get(CLUSTER_BARRIER)
        if bar is None:
            bar = b.barriers[CLUSTER_BARRIER] = new_barrier(CLUSTER_BARRIER, b.ctas)
            bar["cluster"] = True
        bar["arrived"] += _per_cta(b, b.ids(ix))
        bar["at"] = ins

    return step


@op("UCGABAR_WAIT", moves=True)
def _cluster_wait(ins: Instruction, ctx: Context) -> Step:
    """``barrier.cluster.wait``: the threads wait until every live thread of every CTA of
    their cluster has arrived (released by the scheduler, as BAR.SYNC)."""
    index = ctx.position(ins)

    def step(b: Block, ix: Idx) -> None:
        ids = b.ids(ix)
        if CLUSTER_BARRIER not in b.barriers:
            raise TraceError("barrier.cluster.wait before any thread arrived", ins)
        b.waiting[ids] = CLUSTER_BARRIER
        b.resume[ids] = index + 1
        b.sched[ids] = BLOCKED

    return step


def new_barrier(bar_id: int, ctas: int) -> dict[str, Any]:
    """A named barrier's state, per CTA of the batch: threads arrived, and for BAR.RED the
    threads whose predicate was true and false (and the reduction)."""
    zeros = np.zeros(ctas, dtype=np.int64)
    return {
        "id": bar_id,
        "arrived": zeros,
        "true": zeros.copy(),
        "false": zeros.copy(),
        "count": None,
        "red": None,
    }


def _per_cta(b: Block, ids: Any) -> Any:
    """How many of the threads ``ids`` each CTA of the batch has."""
    if b.ctas == 1:
        return np.array([len(ids)], dtype=np.int64)
    return np.bincount(b.cta[ids], minlength=b.ctas)


@op("B2R")
def _b2r(ins: Instruction, ctx: Context) -> Step:
    """B2R.RESULT R[, P]: the last barrier reduction's value (and predicate)."""
    if "RESULT" not in ins.mods or not 1 <= len(ins.operands) <= 2:
        raise unsupported(ins)
    w = write_u32(ins.operands[0], ins)
    wp = write_pred(ins.operands[1], ins) if len(ins.operands) == 2 else None

    def step(b: Block, ix: Idx) -> None:
        w(b, ix, b.bar_value[ix], 0)
        if wp is not None:
            wp(b, ix, b.bar_pred[ix], 0)

    return step


@op("BPT")
def _bpt(ins: Instruction, ctx: Context) -> Step:
    def step(b: Block, ix: Idx) -> None:
        raise trapped(b, ins)

    return step
