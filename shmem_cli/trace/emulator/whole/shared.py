"""The whole steps of a shared load and store (``LDS``, ``STS`` of 4, 8 or 16 bytes) in a
batch of one CTA outside a cluster, the address a register or two (R, UR) plus a
non-negative offset: :func:`..ops.memory._load`'s and ``_store``'s shared paths on the
block's rows, shared memory read and written as rows of a view. The checks come first
(alignment, the window's bound: the OR of the addresses bounds their maximum, one reduce
where it is inside): where one fails the instruction's own step runs and says so, nothing
done yet. The access is recorded as the own step records it. A load whose address is a
uniform register of one value in every lane (a broadcast) reads its bytes once."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Mem, Operand, Reg
from ....hardware.engine import AccessKind
from ..access_kind import access_width, recorded_kind
from ..op_table import Context, Step
from ..operands import forget_bytes
from ..state import Block
from .rows import EVERY, Rows, WholeStep

_I64 = np.dtype(np.int64)


def _term(reg: Reg | None) -> tuple[bool, int] | None:
    """(uniform, index) of an address register read as it is (32 bits, unscaled)."""
    if reg is None or reg.kind not in ("R", "UR") or reg.is_zero or reg.neg or reg.inv:
        return None
    if reg.abs or any(s in ("64", "X4", "X8", "X16") for s in reg.sel):
        return None
    return reg.kind == "UR", reg.index


_Term = tuple[bool, int]


def _form(ins: Instruction, data: Operand, mem: Operand) -> tuple[int, list[_Term]] | None:
    """(width, address terms) of an LDS or STS this module steps, or None: 4, 8 or 16
    bytes, the data an R register (not RZ), the address one or two registers read as they
    are plus a non-negative offset."""
    width, signed = access_width(ins)
    if width not in (4, 8, 16) or signed or not isinstance(mem, Mem):
        return None
    if not isinstance(data, Reg) or data.kind != "R" or data.is_zero:
        return None
    if mem.offset < 0 or mem.desc is not None:
        return None
    terms = [_term(r) for r in (mem.reg, mem.ureg) if r is not None]
    if not terms or None in terms:
        return None
    return width, [t for t in terms if t is not None]


def _address(b: Block, rows: Rows, terms: list[_Term], off: int, width: int) -> Any:
    """(addresses, their taint) of the lanes, or None where one is misaligned or outside
    the window (the own step's error) or the batch is not one CTA outside a cluster."""
    if b.ctas != 1 or b.cluster_ctas != 1:
        return None
    (uniform, i), *rest = terms
    a = (rows.ur if uniform else rows.r)[i].astype(_I64)
    ta: Any = (rows.tur if uniform else rows.t)[i]
    for uniform, j in rest:
        a += (rows.ur if uniform else rows.r)[j]
        ta = ta | (rows.tur if uniform else rows.t)[j]
    if off:
        a += off
    bits, size = int(np.bitwise_or.reduce(a)), b.smem_size  # (the OR: at least the max)
    beyond = bits + width > size and int(np.maximum.reduce(a)) + width > size
    return None if bits & (width - 1) or beyond else (a, ta)


def _uniform(b: Block, rows: Rows, i: int, off: int, width: int) -> int | None:
    """The one address of every lane where uniform register ``i``'s row holds one value,
    aligned and inside the window, in a batch of one CTA outside a cluster; else None (the
    row's bytes compared with its first word's repeated: cheaper on a warp than a ufunc)."""
    if b.ctas != 1 or b.cluster_ctas != 1:
        return None
    raw = rows.ur[i].tobytes()
    first = raw[:4]
    if raw != first * b.threads:
        return None
    x = int.from_bytes(first, sys.byteorder) + off
    return None if x & (width - 1) or x + width > b.smem_size else x


def _record(b: Block, index: int, ins: Instruction, kind: AccessKind, a: Any, ta: Any) -> None:
    """The request of every thread of the batch, its lanes at ``a``, their taint ``ta``
    (:meth:`.recorder.Recorder.record`; a block of one warp's without its checks)."""
    if b.threads == b.warp_size:
        b.rec.record_warp(index, ins, kind, a, _one(ta), b.warp_ids)
    else:
        b.rec.record(index, ins, kind, b.all_idx, a, ta, b.warp_ids)


def _one(taint: Any) -> Any:
    """A row of taint bytes as its one value where every lane has the same (the usual case:
    read from its bytes, cheaper than the reduce the record makes of a row), else the row."""
    raw = taint.tobytes()
    return raw[0] if raw == raw[:1] * len(raw) else taint


def shared_step(ins: Instruction, ctx: Context, general: Step) -> WholeStep | None:
    """The whole step of such an LDS or STS, or None."""
    ops, store = ins.operands, ins.opcode == "STS"
    if ins.opcode not in ("LDS", "STS") or len(ops) != 2:
        return None
    mem, data = (ops[0], ops[1]) if store else (ops[1], ops[0])
    form = _form(ins, data, mem)
    if form is None:
        return None
    width, terms = form
    assert isinstance(mem, Mem) and isinstance(data, Reg)
    index, kind, off, d = ctx.position(ins), recorded_kind(ins, width), mem.offset, data.index
    words, shift = width // 4, width.bit_length() - 1
    one = terms[0][1] if len(terms) == 1 and terms[0][0] else -1  # a uniform register

    def load(b: Block, rows: Rows) -> None:
        x = None if one < 0 else _uniform(b, rows, one, off, width)
        if x is not None:  # every lane reads the same bytes (a broadcast)
            ta = rows.tur[one]
            lanes = rows.lanes_at(x)
            _record(b, index, ins, kind, lanes, ta)
            values, taints, taint_words = rows.shared(b, width)
            q = x >> shift
            if np.count_nonzero(taint_words[q]):
                ta = ta | int(np.bitwise_or.reduce(taints[q]))
            for k in range(words if b.byte_clean else 0):
                forget_bytes(b, "R", d + k, EVERY)
            b.r[d : d + words] = values[q][:, None]
            b.tr[d : d + words] = ta
            return
        at = _address(b, rows, terms, off, width)
        if at is None:
            general(b, EVERY)
            return
        a, ta = at
        _record(b, index, ins, kind, a, ta)
        values, taints, taint_words = rows.shared(b, width)
        q = a >> shift
        vals = values.take(q, axis=0).T
        if np.count_nonzero(taint_words.take(q, axis=0)):
            t = np.bitwise_or.reduce(taints.take(q, axis=0), axis=1) | ta
        else:
            t = ta
        for k in range(words if b.byte_clean else 0):
            forget_bytes(b, "R", d + k, EVERY)
        b.r[d : d + words] = vals
        b.tr[d : d + words] = t

    def store_(b: Block, rows: Rows) -> None:
        at = _address(b, rows, terms, off, width)
        if at is None:
            general(b, EVERY)
            return
        a, ta = at
        t = rows.t[d] | ta  # the data's taint and the address's, each byte of the lane's
        for k in range(1, words):
            t |= rows.t[d + k]
        _record(b, index, ins, kind, a, ta)
        values, taints, _ = rows.shared(b, width)
        q = a >> shift
        values[q] = b.r[d : d + words].T
        taints[q] = t[:, None]

    return store_ if store else load
