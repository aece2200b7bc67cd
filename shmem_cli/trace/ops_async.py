"""sm_90 asynchronous-proxy instructions whose shared-memory traffic is not modelled yet:
mbarriers (``SYNCS``), bulk copies (``UBLKCP``), TMA (``UTMALDG``/``UTMASTG``/...),
``wgmma`` (``HGMMA``) and its ``WARPGROUP`` fences.

They run so that the rest of the kernel can be traced, and every warp execution is
counted in the block's ``unmodelled`` table, which the trace lists apart from the
totals. What they do to data: a bulk copy copies its bytes at once; an mbarrier wait
succeeds at once (a correct program only waits for copies that were issued); a TMA
transfer moves nothing (its tensor map is opaque here) and ``HGMMA`` writes zero
accumulators; both mark what they write as not modelled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .decode import Context, Step, op, unsupported
from .operands import read_u32, write_pred, write_regs, write_u32
from .ops_mem import address, shared_offsets
from .sass import Instruction, Reg
from .state import TAINT_GLOBAL, TAINT_UNKNOWN, Block, Idx


def _count(b: Block, index: int, ix: Idx) -> None:
    warps = len(np.unique(b.ids(ix) >> 5))
    b.unmodelled[index] = b.unmodelled.get(index, 0) + warps


def _listed(ins: Instruction, ctx: Context, then: Step | None = None) -> Step:
    index = ctx.position(ins)

    def step(b: Block, ix: Idx) -> None:
        _count(b, index, ix)
        if then is not None:
            then(b, ix)

    return step


@op("SYNCS")
def _syncs(ins: Instruction, ctx: Context) -> Step:
    mods = set(ins.mods)
    if "PHASECHK" in mods:  # try_wait / test_wait: the phase is complete
        wp = write_pred(ins.operands[0], ins)

        def done(b: Block, ix: Idx) -> None:
            wp(b, ix, np.ones(b.count(ix), dtype=bool), 0)

        return _listed(ins, ctx, done)
    if mods & {"EXCH", "ARRIVE", "ARRIVES", "CCTL"}:
        return _listed(ins, ctx)
    raise unsupported(ins)


@op("ELECT")
def _elect(ins: Instruction, ctx: Context) -> Step:
    """ELECT P, R, mask: P true for the lowest executing lane of each warp, R = its lane."""
    ops = ins.operands
    if len(ops) != 3:
        raise unsupported(ins)
    wp = write_pred(ops[0], ins)
    w = write_u32(ops[1], ins)

    def step(b: Block, ix: Idx) -> None:
        ids = b.ids(ix)
        warps = ids >> 5
        first = np.r_[True, warps[1:] != warps[:-1]]
        leader = np.maximum.accumulate(np.where(first, np.arange(len(ids)), 0))
        wp(b, ix, first, 0)
        w(b, ix, (ids[leader] & 31).astype(np.uint32), 0)

    return step


@op("UBLKCP")
def _ublkcp(ins: Instruction, ctx: Context) -> Step:
    """UBLKCP.S.G [shared], [global], size16: a bulk copy of size16 * 16 bytes."""
    ops = ins.operands
    if len(ops) != 3 or "S" not in ins.mods or "G" not in ins.mods:
        raise unsupported(ins, "only global -> shared bulk copies")
    rdst, rsize = address(ops[0], ins), read_u32(ops[2], "i", ins)
    src_op = ops[1]
    rsrc = address(_as_64(src_op), ins)

    def copy(b: Block, ix: Idx) -> None:
        d, _ = rdst(b, ix)
        s, _ = rsrc(b, ix)
        n = np.broadcast_to(rsize(b, ix)[0], d.shape).astype(np.int64) * 16
        mem = b.launch.memory
        for k in range(len(d)):  # one copy per executing thread (an elected lane)
            size = int(n[k])
            off = int(shared_offsets(b, d[k : k + 1], size, ins)[0])
            src = int(mem.offsets(s[k : k + 1], size, ins)[0])
            b.smem[off : off + size] = mem.data[src : src + size]
            b.tsmem[off : off + size] = TAINT_GLOBAL

    return _listed(ins, ctx, copy)


def _as_64(o: Any) -> Any:
    """A uniform register used as a 64-bit global address: mark it as a register pair."""
    from .sass import Mem

    if isinstance(o, Mem) and o.ureg is not None and o.reg is None and "64" not in o.ureg.sel:
        return Mem(None, Reg("UR", o.ureg.index, sel=("64",)), o.offset, o.desc)
    return o


@op("UTMALDG", "UTMASTG", "UTMAPF", "UTMACCTL", "UTMAREDG", "UBLKPF", "UBLKRED")
def _tma(ins: Instruction, ctx: Context) -> Step:
    return _listed(ins, ctx)


@op("WARPGROUP", "WARPGROUPSET")
def _warpgroup(ins: Instruction, ctx: Context) -> Step:
    return lambda b, ix: None


@op("HGMMA", "IGMMA", "QGMMA", "BGMMA")
def _gmma(ins: Instruction, ctx: Context) -> Step:
    """wgmma: the accumulators become zeros marked not modelled."""
    shape = next((m for m in ins.mods if "x" in m), None)
    if shape is None or not ins.operands:
        raise unsupported(ins)
    try:
        n = int(shape.split("x")[1])
    except (IndexError, ValueError):
        raise unsupported(ins) from None
    per_thread = n // 2 if ("F32" in ins.mods or "S32" in ins.mods) else n // 4
    w = write_regs(ins.operands[0], per_thread, ins)

    def zero(b: Block, ix: Idx) -> None:
        k = b.count(ix)
        w(b, ix, np.zeros((per_thread, k), dtype=np.uint32), TAINT_UNKNOWN)

    return _listed(ins, ctx, zero)
