"""Atomic instructions on shared and global memory: ATOMS, ATOMG, ATOM and the
reductions RED/REDG, applied thread by thread in thread order (one valid
serialization of the lanes), 32-bit only. Shared atomics are handed to the block's
recorder with their atomic class.
"""

from __future__ import annotations

import numpy as np

from .access_kind import access_width, atomic_op, shared_op_of
from .decode import Context, Step, op, unsupported
from .operands import read_u32, write_regs
from .ops_mem import (
    address,
    check_align,
    gather_taint,
    or_all,
    record_shared,
    scatter_taint,
    shared_offsets,
)
from .records import SharedOp
from .sass import Instruction, Operand, Reg
from .state import TAINT_GLOBAL, Block, Idx

_U = np.uint32


def _apply(opname: str, old: int, val: int, cmp: int, signed: bool, flt: bool) -> int:
    if flt:
        f = np.array([old, val], dtype=np.uint32).view(np.float32)
        if opname == "ADD":
            return int(np.array(f[0] + f[1], dtype=np.float32).view(np.uint32))
        if opname in ("MIN", "MAX"):
            r = min(f[0], f[1]) if opname == "MIN" else max(f[0], f[1])
            return int(np.array(r, dtype=np.float32).view(np.uint32))
    so = old - (1 << 32) if signed and old >> 31 else old
    sv = val - (1 << 32) if signed and val >> 31 else val
    table = {
        "ADD": lambda: old + val,
        "POPC": lambda: old + 1,
        "MIN": lambda: min(so, sv),
        "MAX": lambda: max(so, sv),
        "INC": lambda: 0 if old >= val else old + 1,
        "DEC": lambda: val if old == 0 or old > val else old - 1,
        "AND": lambda: old & val,
        "OR": lambda: old | val,
        "XOR": lambda: old ^ val,
        "EXCH": lambda: val,
        "CAS": lambda: val if old == cmp else old,
        "CAST": lambda: val if old == cmp else old,
    }
    return table[opname]() & 0xFFFFFFFF


@op("ATOMS", "ATOMG", "ATOM", "RED", "REDG")
def _atomic(ins: Instruction, ctx: Context) -> Step:
    opname = atomic_op(ins)
    ops = list(ins.operands)
    shared = ins.opcode == "ATOMS"
    # destinations come first: an optional predicate (CAST.SPIN, ATOMG PT), then a register
    wpred = None
    if ops and isinstance(ops[0], Reg) and ops[0].kind == "P":
        wpred = ops.pop(0)
    dest: Operand | None = None
    if ins.opcode not in ("RED", "REDG"):
        dest = ops.pop(0)
        if isinstance(dest, Reg) and dest.kind == "P":
            wpred, dest = dest, ops.pop(0)
    mem = ops.pop(0)
    srcs = ops
    width, _ = access_width(ins)
    if width != 4:
        raise unsupported(ins, "only 32-bit atomics")
    signed = "S32" in ins.mods
    flt = "F32" in ins.mods
    ra = address(mem, ins)
    readers = [read_u32(s, "i", ins) for s in srcs]
    w = write_regs(dest, 1, ins) if dest is not None else None
    from .operands import write_pred

    wp = write_pred(wpred, ins) if wpred is not None else None
    index = ctx.position(ins)
    kind = shared_op_of(ins) or SharedOp("atomic", 4)  # recorded for ATOMS only

    def step(b: Block, ix: Idx) -> None:
        a, ta = ra(b, ix)
        check_align(a, 4, ins)
        n = b.count(ix)
        vals = [np.broadcast_to(r(b, ix)[0], (n,)) for r in readers]
        tv = or_all([r(b, ix)[1] for r in readers])
        if shared:
            off = shared_offsets(b, a, 4, ins)
            record_shared(b, index, ins, kind, ix, off, ta)
            data, taint = b.smem, b.tsmem
        else:
            mem_ = b.launch.memory
            off = mem_.offsets(a, 4, ins)
            data, taint = mem_.data, None
        words = data.view(np.uint32)
        widx = off // 4
        old = np.zeros(n, dtype=np.uint32)
        ok = np.zeros(n, dtype=bool)
        if opname in ("CAS", "CAST"):
            cmp_v, new_v = vals[0], vals[1]
        else:
            cmp_v, new_v = (
                vals[0] if vals else np.zeros(n, _U),
                vals[0] if vals else np.zeros(n, _U),
            )
        for k in range(n):  # thread order: one valid serialization of the lanes
            o = int(words[widx[k]])
            old[k] = o
            nv = _apply(opname, o, int(new_v[k]), int(cmp_v[k]), signed, flt)
            ok[k] = o == int(cmp_v[k])
            words[widx[k]] = nv
        if taint is not None:
            scatter_taint(taint, off, 4, np.asarray(tv, dtype=np.uint8) | ta)
        t_old = (gather_taint(taint, off, 4) if taint is not None else TAINT_GLOBAL) | ta
        if w is not None:
            w(b, ix, old[None, :], t_old)
        if wp is not None:
            wp(b, ix, ok, t_old)

    return step
