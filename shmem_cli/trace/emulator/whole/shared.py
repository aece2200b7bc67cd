"""The whole step of a shared load (``LDS`` of 4, 8 or 16 bytes) in a batch of one CTA
outside a cluster, its address a register or two (R, UR) plus a non-negative offset:
:func:`..ops.memory._load`'s shared path on the block's rows. Its checks come first
(alignment, the window's bound): where one fails the instruction's own step runs and says
so, nothing done yet. The access is recorded as the load's own step records it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Mem, Reg
from ..access_kind import access_width, recorded_kind
from ..op_table import Context, Step
from ..operands import forget_bytes
from ..state import Block
from .rows import Rows, WholeStep

_I64 = np.dtype(np.int64)
_EVERY = slice(None)


def _term(reg: Reg | None) -> tuple[bool, int] | None:
    """(uniform, index) of an address register read as it is (32 bits, unscaled)."""
    if reg is None or reg.kind not in ("R", "UR") or reg.is_zero or reg.neg or reg.inv:
        return None
    if reg.abs or any(s in ("64", "X4", "X8", "X16") for s in reg.sel):
        return None
    return reg.kind == "UR", reg.index


def load_step(ins: Instruction, ctx: Context, general: Step) -> WholeStep | None:
    """The whole step of such an LDS, or None."""
    ops = ins.operands
    if ins.opcode != "LDS" or len(ops) != 2 or not isinstance(ops[1], Mem):
        return None
    width, signed = access_width(ins)
    dest, mem = ops[0], ops[1]
    if width not in (4, 8, 16) or signed or mem.offset < 0 or mem.desc is not None:
        return None
    if not isinstance(dest, Reg) or dest.kind != "R" or dest.is_zero:
        return None
    terms = [_term(r) for r in (mem.reg, mem.ureg) if r is not None]
    if not terms or None in terms:
        return None
    first, *rest = [t for t in terms if t is not None]
    index, kind, off, d = ctx.position(ins), recorded_kind(ins, width), mem.offset, dest.index
    words, shift = width // 4, width.bit_length() - 1

    def whole(b: Block, rows: Rows) -> None:
        if b.ctas != 1 or b.cluster_ctas != 1:
            general(b, _EVERY)
            return
        uniform, i = first
        a = (rows.ur if uniform else rows.r)[i].astype(_I64)
        ta: Any = (rows.tur if uniform else rows.t)[i]
        for uniform, j in rest:
            a += (rows.ur if uniform else rows.r)[j]
            ta = ta | (rows.tur if uniform else rows.t)[j]
        if off:
            a += off
        aligned = not int(np.bitwise_or.reduce(a)) & (width - 1)
        if not aligned or int(np.maximum.reduce(a)) + width > b.smem_size:
            general(b, _EVERY)  # (its error)
            return
        b.rec.record(index, ins, kind, b.all_idx, a, ta, b.warp_ids)
        values, taints, taint_words = rows.shared(b, width)
        q = a >> shift
        vals = values.take(q, axis=0).T
        if np.count_nonzero(taint_words.take(q, axis=0)):
            t = np.bitwise_or.reduce(taints.take(q, axis=0), axis=1) | ta
        else:
            t = ta
        for k in range(words if b.byte_clean else 0):
            forget_bytes(b, "R", d + k, _EVERY)
        b.r[d : d + words] = vals
        b.tr[d : d + words] = t

    return whole
