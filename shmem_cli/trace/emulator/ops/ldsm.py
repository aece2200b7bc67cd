"""ldmatrix and stmatrix (LDSM/STSM): 8x8 matrices of 16-bit elements moved between
shared memory and the registers of a warp. Lanes 8m..8m+7 give the row addresses of
matrix m; each lane then holds two elements of each matrix (transposed with .TRANS).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ..access_kind import matrix_shape, shared_kind
from ..op_table import Context, Step, op
from ..operands import read_regs, write_regs
from ..state import Block, Idx, TraceError
from .memory import address, record_shared, shared_offsets
from .memory_bytes import gather, gather_taint, scatter, scatter_taint


def _warp_rows(b: Block, ix: Idx, a: Any, ins: Instruction, count: int) -> Any:
    """(warps, lanes) addresses of every lane that executed; lanes 8m..8m+7 must all be there."""
    tids = b.ids(ix)
    warps, lanes = np.divmod(tids, b.warp_size)
    uw, row = np.unique(warps, return_inverse=True)
    table = np.full((len(uw), b.warp_size), -1, dtype=np.int64)
    table[row, lanes] = a
    if (table[:, : 8 * count] < 0).any():
        raise TraceError("ldmatrix/stmatrix executed by a partial warp", ins)
    return uw, row, table


def _matrix_offsets(table: Any, row: Any, lanes: Any, m: int, trans: bool) -> Any:
    """Byte offsets of the two 16-bit elements lane ``lanes`` holds of matrix ``m``."""
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
        out = np.zeros((count, len(lanes)), dtype=np.uint32)
        tout = []
        for m in range(count):
            lo, hi = _matrix_offsets(table, row, lanes, m, trans)
            vlo = gather(b.smem, lo, 2, False)[0]
            vhi = gather(b.smem, hi, 2, False)[0]
            out[m] = vlo | (vhi << np.uint32(16))
            tout.append(gather_taint(b.tsmem, lo, 2) | gather_taint(b.tsmem, hi, 2) | ta)
        w(b, ix, out, tout)

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
        for m in range(count):
            lo, hi = _matrix_offsets(table, row, lanes, m, trans)
            v = np.asarray(vals[m], dtype=np.uint32)
            scatter(b.smem, lo, 2, (v & np.uint32(0xFFFF))[None, :])
            scatter(b.smem, hi, 2, (v >> np.uint32(16))[None, :])
            scatter_taint(b.tsmem, lo, 2, tv[m] | ta)
            scatter_taint(b.tsmem, hi, 2, tv[m] | ta)

    return step
