"""sm_90 ``wgmma`` (``HGMMA``/``IGMMA``/``QGMMA``) and ``WARPGROUP``: the operands read
through :mod:`..tensor_units.wgmma`'s descriptors, the product computed, and one request per warp
recorded with the measured cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Gdesc, Reg, Special
from ..access_kind import wgmma_kind
from ..op_table import Context, Step, op, unsupported
from ..operands import read_pred, read_regs, write_regs
from ..state import TAINT_UNKNOWN, Block, Idx, TraceError
from ..tensor_units import wgmma
from .async_proxy import ur64


@op("WARPGROUP")
def _warpgroup(ins: Instruction, ctx: Context) -> Step:
    """WARPGROUP.ARRIVE / .DEPBAR: wgmma completes when it runs, so there is nothing to wait."""
    return lambda b, ix: None


# --- wgmma -------------------------------------------------------------------------------


@op("HGMMA", "IGMMA", "QGMMA")
def _gmma(ins: Instruction, ctx: Context) -> Step:
    ops = list(ins.operands)
    try:
        ta, tb, acc, n, k = wgmma.types_of(ins.opcode, ins.mods)
    except (StopIteration, ValueError):
        raise unsupported(ins) from None
    ops = [o for o in ops if not isinstance(o, Special)]  # the gsb0 scoreboard
    gpos = next((i for i, o in enumerate(ops) if isinstance(o, Gdesc)), None)
    if gpos is None or gpos not in (1, 2) or not isinstance(ops[0], Reg):
        raise unsupported(ins)
    g = ops[gpos]
    assert isinstance(g, Gdesc)
    if ops[0].is_zero and g.reg.is_zero:
        return _empty(ins, ctx)
    rs = gpos == 2
    tn_a, tn_b = "tnspA" in g.flags, "tnspB" in g.flags
    c_op = ops[gpos + 1] if len(ops) > gpos + 1 else ops[0]
    scale = ops[gpos + 2] if len(ops) > gpos + 2 else None
    rscale = read_pred(scale, ins) if scale is not None else None
    regs = n // 2 if acc != "f16" else n // 4
    wd = write_regs(ops[0], regs, ins)
    rc = read_regs(c_op, regs, ins)
    ra = read_regs(ops[1], 4, ins) if rs else None
    index = ctx.position(ins)
    kind = wgmma_kind()
    cost = wgmma.per_warp(wgmma.wavefronts(n, not rs))
    row, col = wgmma.accumulator_layout(n)
    ea, eb = wgmma.esize(ta), wgmma.esize(tb)
    arow, akb = wgmma.a_fragment_layout(ta) if rs else (None, None)
    shifts = (8 * np.arange(4, dtype=np.uint32))[None, :, None]
    # per descriptor (its 64 bits) and operand: the shared addresses it reads, their least
    # and greatest, its core matrices and its description, made once (the blocks of a batch,
    # and a loop's turns, read through the same few)
    known: dict[tuple[int, int, int, bool], tuple[Any, int, int, list[int], str]] = {}

    def read_by(raw: int, rows: int, e: int, tn: bool) -> tuple[Any, int, int, list[int], str]:
        got = known.get((raw, rows, e, tn))
        if got is None:
            d = wgmma.Descriptor.decode(raw)
            addr = wgmma.byte_addresses(d, rows, e, tn)
            addr.flags.writeable = False
            cores = wgmma.core_matrices(addr)
            got = addr, int(addr.min()), int(addr.max()), cores, d.describe(tn)
            if len(known) < _KNOWN:
                known[raw, rows, e, tn] = got
        return got

    def step(b: Block, ix: Idx) -> None:
        if b.warp_size != wgmma.WARP_LANES:
            raise unsupported(ins, f"wgmma's fragments of {wgmma.WARP_LANES}-lane warps")
        ids = b.ids(ix)
        for sel in _warpgroups(b, ids, ins):
            base = int(b.shared_base(int(sel[0])))
            addr_b, low, high, cores_b, text_b = read_by(ur64(b, sel, g.reg.index + 2), n, eb, tn_b)
            _check(b, low, high, ins)
            addr_b = addr_b + base
            vb = wgmma.values(b.smem[addr_b], tb)
            taint = int(np.bitwise_or.reduce(b.tsmem[addr_b].ravel()))
            if rs:
                assert ra is not None
                av, at = ra(b, sel)
                raw = np.zeros((wgmma.M, wgmma.K_BYTES), dtype=np.uint8)
                bytes_ = np.asarray(av, dtype=np.uint32)[:, None, :] >> shifts
                raw[arow, akb] = (bytes_ & 0xFF).astype(np.uint8)
                va = wgmma.values(raw, ta)
                read, cores = f"A from registers; B {text_b}", cores_b
            else:
                addr_a, low, high, cores_a, text_a = read_by(
                    ur64(b, sel, g.reg.index), wgmma.M, ea, tn_a
                )
                _check(b, low, high, ins)
                addr_a = addr_a + base
                va = wgmma.values(b.smem[addr_a], ta)
                taint |= int(np.bitwise_or.reduce(b.tsmem[addr_a].ravel()))
                read, cores = f"A {text_a}; B {text_b}", cores_a + cores_b
            prod = va @ vb.T  # (64, n)
            d = prod[row, col]  # (n/2, 128)
            add = True if rscale is None else bool(np.all(rscale(b, sel)[0]))
            if add and not (isinstance(c_op, Reg) and c_op.is_zero):
                cv, _ = rc(b, sel)
                d = d + _acc_values(np.asarray(cv), acc)
            wd(b, sel, _acc_bits(d, acc), TAINT_UNKNOWN if taint & TAINT_UNKNOWN else taint)
            b.rec.record_cost(index, ins, kind, sel, cost, b.warp_ids)
            b.rec.note(index, f"{read}; {len(cores)} core matrices of 128 B")

    return step


def _empty(ins: Instruction, ctx: Context) -> Step:
    """``HGMMA RZ, gdesc[URZ], RZ, !UPT``: the empty wgmma ptxas puts where a group may hold
    none (after a loop of wgmma that may run no turn). It writes no register and reads no
    operand, but it executes: measured (tests/data/trace/empty_wgmma), one shared request a
    warp and no LSU wavefront (docs/hardware-model.md 9b)."""
    index = ctx.position(ins)
    kind = wgmma_kind()
    none = [0] * (wgmma.GROUP_THREADS // wgmma.WARP_LANES)

    def step(b: Block, ix: Idx) -> None:
        for sel in _warpgroups(b, b.ids(ix), ins):
            b.rec.record_cost(index, ins, kind, sel, none, b.warp_ids)
            b.rec.note(index, "the empty wgmma: no operand read, no wavefront")

    return step


#: descriptors whose reads a wgmma keeps (then it makes them afresh)
_KNOWN = 4096


def _warpgroups(b: Block, ids: Any, ins: Instruction) -> list[Any]:
    """The threads ``ids`` (sorted) by warpgroup (128 threads of one CTA: a CTA's threads
    start at a multiple of 32), in the warpgroups' order: runs of ``ids`` where their
    warpgroups rise with them (a mask per warpgroup was quadratic in a batch's). A warpgroup
    not whole at ``ins`` is the trace's error."""
    groups = b.cta[ids] * b.stride + (ids % b.stride) // wgmma.GROUP_THREADS
    if len(groups) and not np.count_nonzero(groups[1:] < groups[:-1]):
        out = np.split(np.array(ids, dtype=np.intp), np.flatnonzero(np.diff(groups)) + 1)
    else:
        out = [np.asarray(ids[groups == g], dtype=np.intp) for g in np.unique(groups).tolist()]
    if any(len(sel) != wgmma.GROUP_THREADS for sel in out):
        raise TraceError("wgmma executed by a partial warpgroup", ins)
    return out


def _check(b: Block, low: int, high: int, ins: Instruction) -> None:
    if low < 0 or high >= b.smem_size:
        raise TraceError(
            f"a wgmma descriptor reads shared 0x{low:x}..0x{high:x}, "
            f"outside the block's shared memory (0x{b.smem_size:x} bytes)",
            ins,
        )


def _acc_values(regs: Any, acc: str) -> Any:
    if acc == "f32":
        return regs.view(np.float32).astype(np.float64)
    if acc == "s32":
        return regs.view(np.int32).astype(np.float64)
    halves = np.stack([regs & 0xFFFF, regs >> 16], axis=1).reshape(-1, regs.shape[-1])
    return halves.astype(np.uint16).view(np.float16).astype(np.float64)


def _acc_bits(d: Any, acc: str) -> Any:
    if acc == "f32":
        return d.astype(np.float32).view(np.uint32)
    if acc == "s32":
        return np.clip(d, -(2**31), 2**31 - 1).astype(np.int64).astype(np.int32).view(np.uint32)
    h = d.astype(np.float16).view(np.uint16).astype(np.uint32).reshape(-1, 2, d.shape[-1])
    return h[:, 0] | (h[:, 1] << np.uint32(16))
