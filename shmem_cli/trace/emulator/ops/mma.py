"""The warp's matrix fragments: moved with ldmatrix and stmatrix (LDSM/STSM) and multiplied
with mma.sync (HMMA, IMMA, DMMA).

LDSM/STSM move 8x8 matrices of 16-bit elements between shared memory and the registers of
a warp. Lanes 8m..8m+7 give the row addresses of matrix m; each lane then holds two
elements of each matrix (transposed with .TRANS).

HMMA: mma.sync m16n8k16 and m16n8k8 with f16 or bf16 inputs, f32 or f16 accumulators;
m16n8k8 and m16n8k4 with tf32 inputs, f32 accumulators.

Each lane holds fragments in the layout PTX documents for mma.sync: with
``g = lane / 4`` and ``t = lane % 4``, A element pairs sit at rows ``g`` / ``g + 8`` and
columns ``2t, 2t + 1`` (+ 8 for the second k half), B pairs at rows (k) ``2t, 2t + 1``
(+ 8) and column ``g``, C and D pairs at row ``g`` / ``g + 8`` and columns ``2t, 2t + 1``.
A tf32 element takes a whole register: A at rows ``g`` / ``g + 8`` and column ``t`` (+ 4
for k8's second half), B at row ``t`` (+ 4) and column ``g``; its low 13 mantissa bits are
not used.
Products are summed in float64 and rounded once; the tensor cores' own summation order
and rounding may differ in the last bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Reg
from ...distinct_rows import warp_or
from ..access_kind import matrix_shape, shared_kind
from ..memory_bytes import gather, gather_taint
from ..op_table import Context, Step, op, unsupported
from ..operands import read_regs, write_regs
from ..state import Block, Idx, TraceError
from .memory import address, record_shared, shared_offsets

_U = np.uint32
_BYTE = np.arange(2)  # the two bytes of a 16-bit element
_SHIFT = np.array([0, 8], dtype=np.uint32)  # their shifts in it
#: the lanes of an mma.sync fragment: the PTX ISA defines its layouts for 32 threads (a
#: profile of another warp size runs no mma.sync: see _whole_warps)
FRAGMENT_LANES = 32
LANES = np.arange(FRAGMENT_LANES)
G, T = LANES // 4, LANES % 4


def _warp_taint(taint: Any, warps: int) -> Any:
    """Every lane's result depends on its whole warp's fragments: each warp's taint, per lane."""
    n = FRAGMENT_LANES
    return np.bitwise_or.reduce(taint.reshape(warps, n), axis=1).repeat(n)


def _whole_warps(blk: Block, ids: Any, ins: Instruction) -> int:
    """How many whole warps ``ids`` are (an mma.sync runs on whole warps only)."""
    n = FRAGMENT_LANES
    if blk.warp_size != n:
        raise unsupported(ins, f"mma.sync fragments of {n} lanes in {blk.warp_size}-lane warps")
    if len(ids) % n or (ids.reshape(-1, n) % n != LANES).any():
        raise TraceError("mma.sync executed by a partial warp", ins)
    return len(ids) // n


def _a_layout(k: int) -> list[tuple[Any, Any]]:
    """(row, col) per lane of each A element i (register i // 2, half i % 2)."""
    out = []
    for i in range(2 * (k // 4)):  # 4 registers for k16, 2 for k8
        reg, half = divmod(i, 2)
        row = G + 8 * (reg % 2)
        col = 2 * T + half + 8 * (reg // 2)
        out.append((row, col))
    return out


def _b_layout(k: int) -> list[tuple[Any, Any]]:
    out = []
    for i in range(2 * (k // 8)):  # 2 registers for k16, 1 for k8
        reg, half = divmod(i, 2)
        out.append((2 * T + half + 8 * reg, G))
    return out


def _tf32_layouts(k: int) -> tuple[list[tuple[Any, Any]], list[tuple[Any, Any]]]:
    """(row, col) per lane of each tf32 A and B register (one element each)."""
    a = [(G + 8 * (i % 2), T + 4 * (i // 2)) for i in range(k // 2)]
    b = [(T + 4 * i, G) for i in range(k // 4)]
    return a, b


def _tf32(regs: Any) -> Any:
    """(n_regs, W, 32) uint32 -> float64, tf32: the low 13 mantissa bits dropped."""
    return (regs & _U(0xFFFFE000)).view(np.float32).astype(np.float64)


def _c_layout() -> list[tuple[Any, Any]]:
    return [(G + 8 * (i // 2), 2 * T + i % 2) for i in range(4)]


def _halves(regs: Any, bf16: bool) -> Any:
    """(n_regs, W, 32) uint32 -> (2 * n_regs, W, 32) float64, element i = reg i//2 half i%2."""
    lo = regs & _U(0xFFFF)
    hi = regs >> _U(16)
    both = np.stack([lo, hi], axis=1).reshape(-1, *regs.shape[1:])
    if bf16:
        return (both << _U(16)).view(np.float32).astype(np.float64)
    return both.astype(np.uint16).view(np.float16).astype(np.float64)


@op("HMMA")
def _hmma(ins: Instruction, ctx: Context) -> Step:
    tf32 = "TF32" in ins.mods
    shapes = {"16816": 16, "1688": 8, "1684": 4} if tf32 else {"16816": 16, "1688": 8}
    shape = next((m for m in ins.mods if m in shapes), None)
    if shape is None or len(ins.operands) != 4:
        raise unsupported(ins, "only m16n8k16 and m16n8k8 shapes (tf32: m16n8k8, m16n8k4)")
    k = shapes[shape]
    f32_acc = "F32" in ins.mods
    bf16 = "BF16" in ins.mods
    acc_regs = 4 if f32_acc else 2
    a_regs, b_regs = (k // 2, k // 4) if tf32 else (k // 4, k // 8)
    d, a, b, c = ins.operands
    wd = write_regs(d, acc_regs, ins)
    ra, rb = read_regs(a, a_regs, ins), read_regs(b, b_regs, ins)
    rc = read_regs(c, acc_regs, ins)
    c_zero = isinstance(c, Reg) and c.is_zero
    a_map, b_map = _tf32_layouts(k) if tf32 else (_a_layout(k), _b_layout(k))
    c_map = _c_layout()

    def elements(regs: Any) -> Any:
        return _tf32(regs) if tf32 else _halves(regs, bf16)

    def step(blk: Block, ix: Idx) -> None:
        ids = blk.ids(ix)
        w = _whole_warps(blk, ids, ins)
        (av, at), (bv, bt), (cv, ct) = ra(blk, ix), rb(blk, ix), rc(blk, ix)
        av = np.asarray(av).reshape(a_regs, w, FRAGMENT_LANES)
        bv = np.asarray(bv).reshape(b_regs, w, FRAGMENT_LANES)
        am = np.zeros((w, 16, k))
        bm = np.zeros((w, k, 8))
        for e, (row, col) in zip(elements(av), a_map, strict=True):
            am[:, row, col] = e
        for e, (row, col) in zip(elements(bv), b_map, strict=True):
            bm[:, row, col] = e
        cm = np.zeros((w, 16, 8))
        if not c_zero:
            cv = np.asarray(cv).reshape(acc_regs, w, FRAGMENT_LANES)
            elems = cv.view(np.float32).astype(np.float64) if f32_acc else _halves(cv, False)
            for e, (row, col) in zip(elems, c_map, strict=True):
                cm[:, row, col] = e
        dm = np.einsum("wik,wkj->wij", am, bm) + cm
        out = np.stack([dm[:, row, col] for row, col in c_map])  # (4, w, 32)
        if f32_acc:
            regs = out.astype(np.float32).view(_U).reshape(4, -1)
        else:
            h = out.astype(np.float16).view(np.uint16).astype(_U)
            regs = (h[0::2] | (h[1::2] << _U(16))).reshape(2, -1)
        taint: Any = np.zeros(len(ids), dtype=np.uint8)
        for t in (*at, *bt, *ct):
            taint = taint | t
        wd(blk, ix, regs, _warp_taint(taint, w))

    return step


def _bytes(regs: Any, signed: bool) -> Any:
    """(n_regs, W, 32) uint32 -> (4 * n_regs, W, 32) int64, element i = reg i//4 byte i%4."""
    parts = [(regs >> _U(8 * j)) & _U(0xFF) for j in range(4)]
    both = np.stack(parts, axis=1).reshape(-1, *regs.shape[1:]).astype(np.int64)
    return np.where(both >= 128, both - 256, both) if signed else both


@op("IMMA")
def _imma(ins: Instruction, ctx: Context) -> Step:
    """mma.sync m16n8k32 / m16n8k16 / m8n8k16 with 8-bit integer inputs and int32
    accumulators.

    With ``g = lane / 4`` and ``t = lane % 4``: A register r holds row ``g + 8 (r % 2)``,
    columns ``4t .. 4t + 3`` (+ 16 for r >= 2); B register r holds rows (k) ``4t .. 4t + 3``
    (+ 16 r) of column ``g``; C and D as for HMMA. As the H200 computes them, ``.SAT`` near
    the int32 bounds too (tests/data/trace/probes' ``imma``). m8n8k16 (Turing's
    ``IMMA.8816``, CUTLASS 2.x's Sm75 int8 GEMMs) is the PTX ISA's layout: one A register
    (row ``g``, columns ``4t .. 4t + 3``), one B register (rows ``4t .. 4t + 3`` of column
    ``g``), C and D two registers (row ``g``, columns ``2t, 2t + 1``).
    """
    shape = next((m for m in ins.mods if m in ("16832", "16816", "8816")), None)
    types = [m for m in ins.mods if m in ("S8", "U8")]
    if shape is None or len(types) != 2 or len(ins.operands) != 4:
        raise unsupported(ins, "only m16n8k32, m16n8k16 and m8n8k16 with 8-bit inputs")
    m, k = (8, 16) if shape == "8816" else (16, 32 if shape == "16832" else 16)
    a_regs, b_regs, c_regs = m * k // 128, k // 16, m // 4
    a_signed, b_signed = types[0] == "S8", types[1] == "S8"
    sat = "SAT" in ins.mods
    d, a, b, c = ins.operands
    wd = write_regs(d, c_regs, ins)
    ra, rb, rc = read_regs(a, a_regs, ins), read_regs(b, b_regs, ins), read_regs(c, c_regs, ins)
    c_zero = isinstance(c, Reg) and c.is_zero
    a_map = [(G + 8 * (i // 4 % 2), 4 * T + i % 4 + 16 * (i // 8)) for i in range(4 * a_regs)]
    if m == 8:
        a_map = [(G, 4 * T + i) for i in range(4)]
    b_map = [(4 * T + i % 4 + 16 * (i // 4), G) for i in range(4 * b_regs)]
    c_map = _c_layout()[:c_regs]

    def step(blk: Block, ix: Idx) -> None:
        ids = blk.ids(ix)
        w = _whole_warps(blk, ids, ins)
        (av, at), (bv, bt), (cv, ct) = ra(blk, ix), rb(blk, ix), rc(blk, ix)
        am = np.zeros((w, m, k), dtype=np.int64)
        bm = np.zeros((w, k, 8), dtype=np.int64)
        a_el = _bytes(np.asarray(av).reshape(a_regs, w, FRAGMENT_LANES), a_signed)
        b_el = _bytes(np.asarray(bv).reshape(b_regs, w, FRAGMENT_LANES), b_signed)
        for e, (row, col) in zip(a_el, a_map, strict=True):
            am[:, row, col] = e
        for e, (row, col) in zip(b_el, b_map, strict=True):
            bm[:, row, col] = e
        cm = np.zeros((w, m, 8), dtype=np.int64)
        if not c_zero:
            cvals = np.asarray(cv).reshape(c_regs, w, FRAGMENT_LANES).view(np.int32)
            cvals = cvals.astype(np.int64)
            for e, (row, col) in zip(cvals, c_map, strict=True):
                cm[:, row, col] = e
        dm = np.einsum("wik,wkj->wij", am, bm) + cm
        if sat:
            dm = np.clip(dm, -(2**31), 2**31 - 1)
        out = np.stack([dm[:, row, col] for row, col in c_map])
        regs = (out & 0xFFFFFFFF).astype(_U).reshape(c_regs, -1)
        taint: Any = np.zeros(len(ids), dtype=np.uint8)
        for t in (*at, *bt, *ct):
            taint = taint | t
        wd(blk, ix, regs, _warp_taint(taint, w))

    return step


def _f64(regs: Any) -> Any:
    """(2 * n, W, 32) uint32 register pairs (low word first) -> (n, W, 32) float64."""
    pairs = regs.reshape(-1, 2, *regs.shape[1:])
    return (pairs[:, 0].astype(np.uint64) | (pairs[:, 1].astype(np.uint64) << np.uint64(32))).view(
        np.float64
    )


@op("DMMA")
def _dmma(ins: Instruction, ctx: Context) -> Step:
    """mma.sync m16n8k16 of float64 (sm_90's ``DMMA.16x8x16``, Triton's ``tl.dot`` of f64):
    each element a register pair. With ``g = lane / 4`` and ``t = lane % 4``, A element i
    (pair i) at row ``g + 8 (i % 2)``, column ``t + 4 (i // 2)``; B element i at row (k)
    ``t + 4 i``, column ``g``; C and D as for HMMA (row ``g`` / ``g + 8``, columns ``2t,
    2t + 1``), the PTX ISA's layouts, as for tf32 with a pair for a register. The sum is
    float64's, in NumPy's order (the tensor core's may differ in the last bit)."""
    if "16x8x16" not in ins.mods or len(ins.mods) != 1 or len(ins.operands) != 4:
        raise unsupported(ins, "only m16n8k16 (DMMA.16x8x16)")
    d, a, b, c = ins.operands
    wd = write_regs(d, 8, ins)
    ra, rb, rc = read_regs(a, 16, ins), read_regs(b, 8, ins), read_regs(c, 8, ins)
    c_zero = isinstance(c, Reg) and c.is_zero
    a_map = [(G + 8 * (i % 2), T + 4 * (i // 2)) for i in range(8)]
    b_map = [(T + 4 * i, G) for i in range(4)]
    c_map = _c_layout()

    def step(blk: Block, ix: Idx) -> None:
        ids = blk.ids(ix)
        w = _whole_warps(blk, ids, ins)
        (av, at), (bv, bt), (cv, ct) = ra(blk, ix), rb(blk, ix), rc(blk, ix)
        am, bm, cm = np.zeros((w, 16, 16)), np.zeros((w, 16, 8)), np.zeros((w, 16, 8))
        for e, (row, col) in zip(_f64(np.asarray(av).reshape(16, w, 32)), a_map, strict=True):
            am[:, row, col] = e
        for e, (row, col) in zip(_f64(np.asarray(bv).reshape(8, w, 32)), b_map, strict=True):
            bm[:, row, col] = e
        if not c_zero:
            for e, (row, col) in zip(_f64(np.asarray(cv).reshape(8, w, 32)), c_map, strict=True):
                cm[:, row, col] = e
        dm = np.einsum("wik,wkj->wij", am, bm) + cm
        out = np.stack([dm[:, row, col] for row, col in c_map]).view(np.uint64)  # (4, w, 32)
        words = np.stack([out & np.uint64(0xFFFFFFFF), out >> np.uint64(32)], axis=1)
        taint: Any = np.zeros(len(ids), dtype=np.uint8)
        for t in (*at, *bt, *ct):
            taint = taint | t
        wd(blk, ix, words.astype(_U).reshape(8, -1), _warp_taint(taint, w))

    return step


def _warp_rows(b: Block, ix: Idx, a: Any, ins: Instruction, count: int) -> Any:
    """(warps, lanes) addresses of every lane that executed; lanes 8m..8m+7 must all be there."""
    tids = b.ids(ix)
    by_warp = warp_or(tids, b.warp_size, np.uint8(0))  # the warps, each thread's row
    uw, row = by_warp.warps, by_warp.row
    table = np.full((len(uw), b.warp_size), -1, dtype=np.int64)
    table[row, tids % b.warp_size] = a
    if (table[:, : 8 * count] < 0).any():
        raise TraceError("ldmatrix/stmatrix executed by a partial warp", ins)
    return uw, row, table


def _matrix_offsets(table: Any, row: Any, lanes: Any, count: int, trans: bool) -> Any:
    """Byte offsets of the two 16-bit elements lane ``lanes`` holds of each of ``count``
    matrices: (lo, hi), each (count, lanes)."""
    m = np.arange(count)[:, None]
    if trans:
        r0 = table[row, 8 * m + 2 * (lanes % 4)]
        r1 = table[row, 8 * m + 2 * (lanes % 4) + 1]
        col = 2 * (lanes // 4)
        return r0 + col, r1 + col
    base = table[row, 8 * m + lanes // 4] + 4 * (lanes % 4)
    return base, base + 2


@op("LDSM")
def _ldsm(ins: Instruction, ctx: Context) -> Step:
    count, trans = matrix_shape(ins)
    w = write_regs(ins.operands[0], count, ins)
    ra = address(ins.operands[1], ins)
    index = ctx.position(ins)
    kind = shared_kind(ins)

    def step(b: Block, ix: Idx) -> None:
        a, ta = ra(b, ix)
        off = shared_offsets(b, a, 16, ins)
        record_shared(b, index, ins, kind, ix, off, ta)
        uw, row, table = _warp_rows(b, ix, off + b.shared_base(ix), ins, count)
        lanes = b.ids(ix) % b.warp_size
        lo, hi = _matrix_offsets(table, row, lanes, count, trans)
        at = np.concatenate((lo, hi)).reshape(-1)  # every element of every matrix at once
        v = gather(b.smem, at, 2, False).reshape(2, count, -1)
        t = gather_taint(b.tsmem, at, 2).reshape(2, count, -1)
        w(b, ix, v[0] | (v[1] << np.uint32(16)), t[0] | t[1] | np.asarray(ta, dtype=np.uint8))

    return step


@op("STSM")
def _stsm(ins: Instruction, ctx: Context) -> Step:
    count, trans = matrix_shape(ins)
    ra = address(ins.operands[0], ins)
    rv = read_regs(ins.operands[1], count, ins)
    index = ctx.position(ins)
    kind = shared_kind(ins)

    def step(b: Block, ix: Idx) -> None:
        a, ta = ra(b, ix)
        off = shared_offsets(b, a, 16, ins)
        record_shared(b, index, ins, kind, ix, off, ta)
        uw, row, table = _warp_rows(b, ix, off + b.shared_base(ix), ins, count)
        lanes = b.ids(ix) % b.warp_size
        vals, tv = rv(b, ix)
        lo, hi = _matrix_offsets(table, row, lanes, count, trans)
        v = np.asarray(vals, dtype=np.uint32)
        # every byte at once, in the order a matrix at a time, its low halves then its
        # high ones, each half's low bytes then its high ones (where places repeat, the
        # last written stays)
        at = np.stack((lo, hi), axis=1)[:, :, None, :] + _BYTE[:, None]
        halves = np.stack((v & np.uint32(0xFFFF), v >> np.uint32(16)), axis=1)
        b.smem[at.reshape(-1)] = ((halves[:, :, None, :] >> _SHIFT[:, None]) & 0xFF).reshape(-1)
        n = len(lanes)
        tt = np.stack([np.broadcast_to(np.asarray(t | ta, dtype=np.uint8), (n,)) for t in tv])
        b.tsmem[at.reshape(-1)] = np.broadcast_to(tt[:, None, None, :], at.shape).reshape(-1)

    return step
