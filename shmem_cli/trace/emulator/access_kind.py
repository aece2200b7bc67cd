"""What a memory instruction accesses, read from its opcode and modifiers: the width of
a lane's access, an atomic's operation and class, an ldmatrix/stmatrix's matrix count,
and the engine's :class:`~shmem_cli.hardware.engine.AccessKind` the recorder is given for a
shared-memory access; the local word a spill or a refill reaches (:func:`local_word`).

One place for these, so that the memory families (:mod:`.ops_mem`, :mod:`.ops_atomic`,
:mod:`.ops.mma`) and the emulator's up-front pass over a function agree; which opcodes
are shared-memory ops, and how SASS spells widths and atomic classes, is the op
vocabulary's (:mod:`shmem_cli.hardware.ops`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...cuda.sass import Instruction
from ...cuda.sass_operands import Mem
from ...hardware import ops
from ...hardware.engine import AccessKind
from .op_table import unsupported

if TYPE_CHECKING:
    from .state import Block


def access_width(ins: Instruction) -> tuple[int, bool]:
    """Bytes per lane and whether a sub-word load sign-extends."""
    return ops.sass_width(ins.mods)


def shared_op_of(ins: Instruction) -> AccessKind | None:
    """What a shared-memory instruction does per lane; None for other instructions."""
    op = ops.op_of_opcode(ins.opcode)
    if op is None:
        return None
    if op.matrix:
        count, _ = matrix_shape(ins)
        return AccessKind(op.name, op.widths[0], matrices=count)
    if op.atomic:
        return AccessKind(op.name, access_width(ins)[0], atomic_class(ins))
    return AccessKind(op.name, access_width(ins)[0])


def wgmma_kind() -> AccessKind:
    """A wgmma's operand reads (costed by the measured rule of :mod:`.tensor_units.wgmma`,
    not by lanes)."""
    return AccessKind(ops.WGMMA.name, ops.WGMMA.widths[0])


def recorded_kind(ins: Instruction, width: int) -> AccessKind:
    """The kind a load's, store's or atomic's shared lanes are recorded as, ``width`` bytes a
    lane: its own op's (``LDS``, ``STS``, ``ATOMS``), else the op the vocabulary makes its
    generic opcode where its lanes land in the CTA's own shared window
    (:func:`shmem_cli.hardware.ops.op_of_generic`: ``LD``, ``ST``, ``ATOM``; an atomic in the
    class of its operation, an ``ATOM.E.ADD`` as an ``ATOMS.ADD``), else (``LDG``, ``STL``:
    never shared) a load's, never recorded."""
    own = shared_op_of(ins)
    if own is not None:
        return own
    op = ops.op_of_generic(ins.opcode) or ops.LOAD
    if op.atomic:
        return AccessKind(op.name, width, atomic_class(ins))
    return AccessKind(op.name, width)


def tma_kind() -> AccessKind:
    """A TMA or bulk copy: one request per issue, no LSU wavefronts (its bytes said apart)."""
    return AccessKind("tma", 16)


#: the copies Nsight Compute counts as TMA instructions (``smsp__sass_inst_executed_op_tma``)
TMA_COPIES = frozenset({"UTMALDG", "UTMASTG", "UTMAREDG", "UBLKCP", "UBLKRED"})


def guarded_kind(ins: Instruction) -> AccessKind | None:
    """The kind a warp's execution of ``ins`` with every lane's guard false is recorded as:
    a shared-memory instruction's, or a TMA copy's (CUTLASS's epilogue issues its
    ``@!UP4 UTMASTG`` in every warp of a warpgroup, one elected warp's guard true; Nsight's
    source view counts the others' executions too: 32 for 4, example 54 on the H200)."""
    return shared_op_of(ins) or (tma_kind() if ins.opcode in TMA_COPIES else None)


def shared_kind(ins: Instruction) -> AccessKind:
    """``shared_op_of`` for an instruction known to access shared memory."""
    kind = shared_op_of(ins)
    assert kind is not None
    return kind


def atomic_op(ins: Instruction) -> str:
    """The operation an atomic or reduction applies (ADD, MIN, ..., CAS, POPC)."""
    for m in ins.mods:
        if ops.atomic_class_of_sass(m) is not None:
            return m
    raise unsupported(ins, "unknown atomic operation")


def atomic_class(ins: Instruction) -> str:
    """The engine's class of an ATOMS (the op vocabulary's class of its operation). An
    "add" (ADD, MIN, MAX, INC, DEC, AND, OR, XOR) is served lane by lane even when every lane
    gives one address, whether the address is a per-thread register or a uniform one
    (`[UR4+0x4]`: measured, tests/data/trace/semantics), so it is charged as an exchange. A
    warp-uniform address costs one wavefront only where the compiler reduced the warp itself
    (`REDUX`, `VOTEU` and a single lane's atomic), which the trace sees as that one lane."""
    cls = ops.atomic_class_of_sass(atomic_op(ins))
    assert cls is not None
    return "exch" if cls == "add" else cls


def matrix_shape(ins: Instruction) -> tuple[int, bool]:
    """An ldmatrix/stmatrix's matrix count (1, 2 or 4) and whether it transposes."""
    trans = "MT88" in ins.mods or "TRANS" in ins.mods
    count = next((int(m) for m in ins.mods if m in ("1", "2", "4")), 1)
    if "16" not in ins.mods:
        raise unsupported(ins, "only 16-bit element matrices")
    return count, trans


def local_word(ins: Instruction, blk: Block, ids: Any) -> int:
    """The first 4-byte word of local memory a whole-word ``STL``/``LDL`` reaches, the same
    for every thread of ``ids`` from an address free of taint (``[R1+0x38]``); else -1."""
    mem = next((o for o in ins.operands if isinstance(o, Mem)), None)
    if mem is None or mem.ureg is not None or mem.reg is None or access_width(ins)[0] % 4:
        return -1
    values, taints = blk.file("R")
    at = values[mem.reg.index][ids].astype(np.int64) + mem.offset
    if np.count_nonzero(taints[mem.reg.index][ids]) or at.min() != at.max() or at[0] % 4:
        return -1
    return int(at[0]) // 4
