"""What a memory instruction accesses, read from its opcode and modifiers: the width of
a lane's access, an atomic's operation and class, an ldmatrix/stmatrix's matrix count,
and the :class:`~.records.SharedOp` the recorder is given for a shared-memory access.

One place for these, so that the memory families (:mod:`.ops_mem`, :mod:`.ops_atomic`,
:mod:`.ops_ldsm`) and the emulator's up-front pass over a function agree.
"""

from __future__ import annotations

from .decode import unsupported
from .records import SharedOp
from .sass import Instruction, Mem

_SIZES = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8, "128": 16}


def access_width(ins: Instruction) -> tuple[int, bool]:
    """Bytes per lane and whether a sub-word load sign-extends."""
    for m in ins.mods:
        if m in _SIZES:
            return _SIZES[m], m.startswith("S")
    return 4, False


def shared_op_of(ins: Instruction) -> SharedOp | None:
    """What a shared-memory instruction does per lane; None for other instructions."""
    name = ins.opcode
    if name in ("LDS", "STS"):
        return SharedOp("load" if name == "LDS" else "store", access_width(ins)[0])
    if name == "ATOMS":
        return SharedOp("atomic", access_width(ins)[0], atomic_class(ins))
    if name in ("LDSM", "STSM"):
        count, _ = matrix_shape(ins)
        return SharedOp("ldmatrix" if name == "LDSM" else "stmatrix", 16, matrices=count)
    if name == "LDGSTS":
        return SharedOp("cp_async", access_width(ins)[0])
    return None


def wgmma_kind() -> SharedOp:
    """A wgmma's operand reads (costed by the measured rule of :mod:`.wgmma`, not by lanes)."""
    return SharedOp("wgmma", 16)


def shared_kind(ins: Instruction) -> SharedOp:
    """``shared_op_of`` for an instruction known to access shared memory."""
    kind = shared_op_of(ins)
    assert kind is not None
    return kind


# the atomic class the engine charges an operation as; any other operation is "add"
ATOMIC_CLASS = {"POPC": "inc", "EXCH": "exch", "CAS": "cas", "CAST": "cas_spin"}


def atomic_class(ins: Instruction) -> str:
    """The engine's class of an ATOMS. An "add" (ADD, MIN, MAX, INC, DEC, AND, OR, XOR)
    whose address is a per-thread register is served lane by lane even when every lane
    gives one address (measured: 32 wavefronts a request, tests/data/trace/everyday), so it
    is charged as an exchange; only a uniform-register address is reduced in one."""
    cls = ATOMIC_CLASS.get(atomic_op(ins), "add")
    mem = next((o for o in ins.operands if isinstance(o, Mem)), None)
    per_thread = mem is not None and mem.reg is not None and not mem.reg.is_zero
    return "exch" if cls == "add" and per_thread else cls


def atomic_op(ins: Instruction) -> str:
    """The operation an atomic or reduction applies (ADD, MIN, ..., CAS, POPC)."""
    for m in ins.mods:
        if m in ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS", "CAST"):
            return m
        if m == "POPC":
            return "POPC"
    raise unsupported(ins, "unknown atomic operation")


def matrix_shape(ins: Instruction) -> tuple[int, bool]:
    """An ldmatrix/stmatrix's matrix count (1, 2 or 4) and whether it transposes."""
    trans = "MT88" in ins.mods or "TRANS" in ins.mods
    count = next((int(m) for m in ins.mods if m in ("1", "2", "4")), 1)
    if "16" not in ins.mods:
        raise unsupported(ins, "only 16-bit element matrices")
    return count, trans
