"""sm_90 asynchronous proxy: mbarriers (``SYNCS``), TMA (``UTMALDG``/``UTMASTG``/...),
bulk copies (``UBLKCP``/``UBLKRED``), ``wgmma`` (``HGMMA``/``IGMMA``/``QGMMA``) and the
instructions around them (``WARPGROUP``, ``ELECT``, ``USETMAXREG``, ``UTMACMDFLUSH``).

Uniform operands: ``UTMALDG.nD [URa], [URb]`` reads the shared destination from URa, its
mbarrier from URa+1 and the n coordinates from URa+2..; ``UTMASTG.nD [URa], [URb]`` the
shared source from URa and the coordinates from URa+1..; URb:URb+1 is the generic address
of the tensor map (a ``__grid_constant__`` parameter: ``c[0x0][0x198]`` holds the generic
address of the parameters). A copy completes on its mbarrier at once (:mod:`.mbarrier`);
the data moves as :mod:`.tma` says. A tensor map that was not given (zero bytes) moves
nothing: its barrier is completed as if the bytes it expects had come, and the instruction
is listed as not modelled. wgmma reads its operands through :mod:`.wgmma`'s descriptors,
computes the product, and records one request per warp with the measured cost.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Gdesc, Mem, Reg, Special
from ...kernel.tensormap import describe
from .. import tma, wgmma
from ..access_kind import tma_kind, wgmma_kind
from ..op_table import Context, Step, op, unsupported
from ..operands import read_pred, read_regs, read_u32, write_pred, write_regs, write_u32
from ..state import TAINT_GLOBAL, TAINT_UNKNOWN, Block, Idx, TraceError
from .control import BLOCKED
from .memory import address, shared_offsets


def _count(b: Block, index: int, ix: Idx) -> None:
    warps = len(np.unique(b.warp[b.ids(ix)]))
    b.unmodelled[index] = b.unmodelled.get(index, 0) + warps


def _copied(b: Block, index: int, ins: Instruction, t: int, text: str) -> None:
    """A TMA or bulk copy issued by thread ``t``'s warp: one request, no LSU wavefronts, and
    what it moved said once (the report's row and its ``reads``)."""
    one = np.array([t], dtype=np.intp)
    b.rec.record_cost(index, ins, tma_kind(), one, [0], b.n_warps, b.warp_base)
    b.rec.note(index, text)


def _ur(b: Block, ix: Idx, i: int) -> int:
    """A uniform register's value (the first executing thread's copy)."""
    t = b.ids(ix)[0]
    return int(b.ur[i, t]) if i != 63 else 0


def _ur64(b: Block, ix: Idx, i: int) -> int:
    return _ur(b, ix, i) | (_ur(b, ix, i + 1) << 32)


def _mem_ureg(o: Any, ins: Instruction) -> int:
    if not isinstance(o, Mem) or o.ureg is None or o.reg is not None or o.offset:
        raise unsupported(ins, "expected a [URn] operand")
    return o.ureg.index


# --- mbarriers ---------------------------------------------------------------------------


def _bar_offset(b: Block, addr: int, ins: Instruction) -> int:
    return int(shared_offsets(b, np.array([addr], dtype=np.int64), 8, ins)[0])


@op("SYNCS")
def _syncs(ins: Instruction, ctx: Context) -> Step:
    mods = set(ins.mods)
    ops = ins.operands
    index = ctx.position(ins)
    if "EXCH" in mods and len(ops) == 3:  # mbarrier.init: the 64-bit initial state
        ra, rv = address(ops[1], ins), ops[2]
        if not isinstance(rv, Reg) or rv.kind != "UR":
            raise unsupported(ins)
        vi = rv.index

        def init(b: Block, ix: Idx) -> None:
            a, _ = ra(b, ix)
            lo = _ur(b, ix, vi)
            count = 0x100000 - ((lo >> 1) & 0xFFFFF)
            for addr in np.unique(a).tolist():
                b.mbarriers.init(_bar_offset(b, int(addr), ins), count)

        return init
    if "ARRIVE" in mods and len(ops) == 3:
        arrivals, with_tx = 1, True
        for m in ins.mods:
            g = re.fullmatch(r"A(\d)T(\d)", m)
            if g:
                arrivals, with_tx = int(g.group(1)), g.group(2) != "0"
        ra = address(ops[1], ins)
        rtx = read_u32(ops[2], "i", ins)
        wtok = write_u32(ops[0], ins)

        def arrive(b: Block, ix: Idx) -> None:
            a, _ = ra(b, ix)
            tx, _ = rtx(b, ix)
            n = b.count(ix)
            a = np.broadcast_to(a, (n,))
            tx = np.broadcast_to(tx, (n,)).astype(np.int64) if with_tx else np.zeros(n, np.int64)
            token = np.zeros(n, dtype=np.uint32)
            for addr in np.unique(a).tolist():
                sel = a == addr
                off = _bar_offset(b, int(addr), ins)
                if b.mbarriers.get(off) is None:
                    raise TraceError(
                        f"arrive on shared 0x{off:x}, not an initialized mbarrier", ins
                    )
                phase = b.mbarriers.arrive(
                    off, arrivals * int(sel.sum()), int(tx[sel].sum()), b.sched
                )
                token[sel] = (phase & 1) << 31
            wtok(b, ix, token, 0)

        return arrive
    if "PHASECHK" in mods and len(ops) == 3:  # try_wait / test_wait on a phase parity
        wp = write_pred(ops[0], ins)
        ra = address(ops[1], ins)
        rpar = read_u32(ops[2], "i", ins)

        def wait(b: Block, ix: Idx) -> None:
            a, _ = ra(b, ix)
            par, _ = rpar(b, ix)
            ids = b.ids(ix)
            n = len(ids)
            a = np.broadcast_to(a, (n,))
            par = (np.broadcast_to(par, (n,)) >> np.uint32(31)) & np.uint32(1)
            ok = np.zeros(n, dtype=bool)
            for addr in np.unique(a).tolist():
                off = _bar_offset(b, int(addr), ins)
                if b.mbarriers.get(off) is None:
                    raise TraceError(f"wait on shared 0x{off:x}, not an initialized mbarrier", ins)
                for p in (0, 1):
                    sel = (a == addr) & (par == p)
                    if not sel.any():
                        continue
                    if b.mbarriers.done(off, p):
                        ok[sel] = True
                    else:  # blocked until the phase completes, then this wait runs again
                        b.mbarriers.block(off, ids[sel], p, index, ins)
                        b.sched[ids[sel]] = BLOCKED
            wp(b, ix, ok, 0)

        return wait
    if mods & {"CCTL"}:
        return lambda b, ix: None
    raise unsupported(ins)


# --- TMA and bulk copies -----------------------------------------------------------------


def per_warp(b: Block, ix: Idx) -> list[tuple[int, int]]:
    """(position in ``ix``, thread) of the first executing thread of each warp: a TMA or bulk
    copy is a uniform-datapath instruction, issued once per warp that executes it, whether
    one elected lane or a whole warp (under a uniform predicate, as Triton writes it) runs
    it; its operands are uniform registers, the same in every lane."""
    ids = b.ids(ix)
    _, first = np.unique(ids >> 5, return_index=True)
    return [(int(k), int(ids[k])) for k in first]


@op("UTMALDG")
def _utmaldg(ins: Instruction, ctx: Context) -> Step:
    if len(ins.operands) < 2 or "IM2COL" in ins.mods:
        raise unsupported(ins)
    rank = tma.rank_of(ins)
    a = _mem_ureg(ins.operands[0], ins)
    m = _mem_ureg(ins.operands[1], ins)
    mcast = ins.operands[-1] if "MULTICAST" in ins.mods else None
    index = ctx.position(ins)

    def step(b: Block, ix: Idx) -> None:
        for _, t in per_warp(b, ix):
            one = np.array([t], dtype=np.intp)
            dst = int(shared_offsets(b, np.array([_ur(b, one, a)]), 1, ins)[0])
            bar = _bar_offset(b, _ur(b, one, a + 1), ins)
            coords = tuple(_signed(_ur(b, one, a + 2 + k)) for k in range(rank))
            tm = tma.tensor_map(b, _ur64(b, one, m), ins)
            if tm is None:
                _count(b, index, one)
                b.mbarriers.complete_tx(bar, None, b.sched)
                continue
            if mcast is not None and isinstance(mcast, Reg):
                pass  # one CTA per trace: the copy lands in this CTA (clusters: see docs)
            nbytes = tma.load(b, tm, dst, coords, ins)
            b.rec.fill(ins, dst, tm.box_bytes, tm.swizzle)
            b.mbarriers.complete_tx(bar, nbytes, b.sched)
            said = f"TMA load of {nbytes:,} B into shared 0x{dst:x}: {describe(tm)}"
            _copied(b, index, ins, t, said)

    return step


@op("UTMASTG", "UTMAREDG")
def _utmastg(ins: Instruction, ctx: Context) -> Step:
    if len(ins.operands) != 2:
        raise unsupported(ins)
    rank = tma.rank_of(ins)
    a = _mem_ureg(ins.operands[0], ins)
    m = _mem_ureg(ins.operands[1], ins)
    index = ctx.position(ins)
    reduce = ins.opcode == "UTMAREDG"

    def step(b: Block, ix: Idx) -> None:
        for _, t in per_warp(b, ix):
            one = np.array([t], dtype=np.intp)
            src = int(shared_offsets(b, np.array([_ur(b, one, a)]), 1, ins)[0])
            coords = tuple(_signed(_ur(b, one, a + 1 + k)) for k in range(rank))
            tm = tma.tensor_map(b, _ur64(b, one, m), ins)
            if tm is None or reduce:  # reductions into global memory: not modelled
                _count(b, index, one)
                continue
            tma.store(b, tm, src, coords, ins)
            said = f"TMA store of {tm.box_bytes:,} B from shared 0x{src:x}: {describe(tm)}"
            _copied(b, index, ins, t, said)

    return step


def _signed(v: int) -> int:
    return v - (1 << 32) if v & 0x80000000 else v


@op("UBLKCP")
def _ublkcp(ins: Instruction, ctx: Context) -> Step:
    """UBLKCP.S.G [shared], [global], size (global -> shared, completing on the mbarrier in
    the register after the destination) and UBLKCP.G.S [global], [shared], size."""
    ops = ins.operands
    if len(ops) != 3 or not {"S", "G"} <= set(ins.mods):
        raise unsupported(ins)
    to_shared = ins.mods.index("S") < ins.mods.index("G")
    d, s = _mem_ureg(ops[0], ins), _mem_ureg(ops[1], ins)
    rsize = read_u32(ops[2], "i", ins)
    index = ctx.position(ins)

    def step(b: Block, ix: Idx) -> None:
        mem = b.launch.memory
        sizes, _ = rsize(b, ix)
        for k, t in per_warp(b, ix):
            one = np.array([t], dtype=np.intp)
            size = int(np.broadcast_to(sizes, (b.count(ix),))[k]) * 16
            if to_shared:
                off = int(shared_offsets(b, np.array([_ur(b, one, d)]), size, ins)[0])
                g = int(mem.offsets(np.array([_ur64(b, one, s)]), size, ins)[0])
                b.smem[off : off + size] = mem.data[g : g + size]
                fresh = mem.untouched_taint(np.array([g]), size)
                b.tsmem[off : off + size] = TAINT_GLOBAL | int(np.max(fresh))
                bar = _bar_offset(b, _ur(b, one, d + 1), ins)
                b.mbarriers.complete_tx(bar, size, b.sched)
                _copied(b, index, ins, t, f"bulk copy of {size:,} B into shared 0x{off:x}")
            else:
                off = int(shared_offsets(b, np.array([_ur(b, one, s)]), size, ins)[0])
                g = int(mem.store_offsets(np.array([_ur64(b, one, d)]), size, ins)[0])
                mem.data[g : g + size] = b.smem[off : off + size]
                _copied(b, index, ins, t, f"bulk copy of {size:,} B from shared 0x{off:x}")

    return step


@op("UBLKRED")
def _ublkred(ins: Instruction, ctx: Context) -> Step:
    """UBLKRED.G.S.ADD [global], [shared], size: 32-bit integer adds into global memory."""
    ops = ins.operands
    if (
        len(ops) != 3
        or "ADD" not in ins.mods
        or any(m in ins.mods for m in ("F32", "F16", "BF16", "F64", "U64", "S64"))
    ):
        raise unsupported(ins)
    d, s = _mem_ureg(ops[0], ins), _mem_ureg(ops[1], ins)
    rsize = read_u32(ops[2], "i", ins)
    index = ctx.position(ins)

    def step(b: Block, ix: Idx) -> None:
        mem = b.launch.memory
        sizes, _ = rsize(b, ix)
        for k, t in per_warp(b, ix):
            one = np.array([t], dtype=np.intp)
            size = int(np.broadcast_to(sizes, (b.count(ix),))[k]) * 16
            off = int(shared_offsets(b, np.array([_ur(b, one, s)]), size, ins)[0])
            g = int(mem.store_offsets(np.array([_ur64(b, one, d)]), size, ins)[0])
            acc = mem.data[g : g + size].view(np.uint32) + b.smem[off : off + size].view(np.uint32)
            mem.data[g : g + size] = acc.view(np.uint8)
            _copied(b, index, ins, t, f"bulk add of {size:,} B from shared 0x{off:x}")

    return step


@op("UTMAPF", "UTMACCTL", "UTMACMDFLUSH", "UBLKPF")
def _tma_quiet(ins: Instruction, ctx: Context) -> Step:
    """Prefetches, tensor-map cache control and the flush of pending TMA commands: no data."""
    return lambda b, ix: None


@op("USETMAXREG")
def _setmaxreg(ins: Instruction, ctx: Context) -> Step:
    """setmaxnreg: registers are not limited here; a TRY_ALLOC always succeeds."""
    preds = [o for o in ins.operands if isinstance(o, Reg) and o.kind in ("P", "UP")]
    if not preds:
        return lambda b, ix: None
    wp = write_pred(preds[0], ins)
    return lambda b, ix: wp(b, ix, np.ones(b.count(ix), dtype=bool), 0)


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
        warps = b.warp[ids]
        first = np.r_[True, warps[1:] != warps[:-1]]
        leader = np.maximum.accumulate(np.where(first, np.arange(len(ids)), 0))
        wp(b, ix, first, 0)
        w(b, ix, b.lane[ids[leader]], 0)

    return step


@op("WARPGROUP", "WARPGROUPSET")
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

    def step(b: Block, ix: Idx) -> None:
        if b.warp_size != wgmma.WARP_LANES:
            raise unsupported(ins, f"wgmma's fragments of {wgmma.WARP_LANES}-lane warps")
        ids = b.ids(ix)
        size = wgmma.GROUP_THREADS
        for group in np.unique(ids // size).tolist():
            mine = ids[(ids // size) == group]
            if len(mine) != size:
                raise TraceError("wgmma executed by a partial warpgroup", ins)
            sel = np.asarray(mine, dtype=np.intp)
            db = wgmma.Descriptor.decode(_ur64(b, sel, g.reg.index + 2))
            addr_b = wgmma.byte_addresses(db, n, eb, tn_b)
            _check(b, addr_b, ins)
            vb = wgmma.values(b.smem[addr_b], tb)
            taint = int(np.bitwise_or.reduce(b.tsmem[addr_b].ravel()))
            if rs:
                assert ra is not None
                av, at = ra(b, sel)
                raw = np.zeros((wgmma.M, wgmma.K_BYTES), dtype=np.uint8)
                arow, akb = wgmma.a_fragment_layout(ta)
                bytes_ = (
                    np.asarray(av, dtype=np.uint32)[:, None, :]
                    >> (8 * np.arange(4, dtype=np.uint32))[None, :, None]
                )
                raw[arow, akb] = (bytes_ & 0xFF).astype(np.uint8)
                va = wgmma.values(raw, ta)
                read = f"A from registers; B {db.describe(tn_b)}"
                cores = wgmma.core_matrices(addr_b)
            else:
                da = wgmma.Descriptor.decode(_ur64(b, sel, g.reg.index))
                addr_a = wgmma.byte_addresses(da, wgmma.M, ea, tn_a)
                _check(b, addr_a, ins)
                va = wgmma.values(b.smem[addr_a], ta)
                taint |= int(np.bitwise_or.reduce(b.tsmem[addr_a].ravel()))
                read = f"A {da.describe(tn_a)}; B {db.describe(tn_b)}"
                cores = wgmma.core_matrices(addr_a) + wgmma.core_matrices(addr_b)
            prod = va @ vb.T  # (64, n)
            d = prod[row, col]  # (n/2, 128)
            add = True if rscale is None else bool(np.all(rscale(b, sel)[0]))
            if add and not (isinstance(c_op, Reg) and c_op.is_zero):
                cv, _ = rc(b, sel)
                d = d + _acc_values(np.asarray(cv), acc)
            wd(b, sel, _acc_bits(d, acc), TAINT_UNKNOWN if taint & TAINT_UNKNOWN else taint)
            b.rec.record_cost(index, ins, kind, sel, cost, b.n_warps, b.warp_base)
            b.rec.note(index, f"{read}; {len(cores)} core matrices of 128 B")

    return step


def _check(b: Block, addr: Any, ins: Instruction) -> None:
    if int(addr.min()) < 0 or int(addr.max()) >= len(b.smem):
        raise TraceError(
            f"a wgmma descriptor reads shared 0x{int(addr.min()):x}..0x{int(addr.max()):x}, "
            f"outside the block's shared memory (0x{len(b.smem):x} bytes)",
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
