"""sm_90 asynchronous proxy: mbarriers (``SYNCS``, cp.async's ``ARRIVES``), TMA
(``UTMALDG``/``UTMASTG``/...), bulk copies (``UBLKCP``/``UBLKRED``) and the instructions
around them (``ELECT``, ``USETMAXREG``, ``UTMACMDFLUSH``); wgmma is :mod:`.warpgroup`.

Uniform operands: ``UTMALDG.nD [URa], [URb]`` reads the shared destination from URa, its
mbarrier from URa+1 and the n coordinates from URa+2..; ``UTMASTG.nD [URa], [URb]`` the
shared source from URa and the coordinates from URa+1..; URb:URb+1 is the generic address
of the tensor map (a ``__grid_constant__`` parameter: ``c[0x0][0x198]`` holds the generic
address of the parameters). A copy completes on its mbarrier at once (:mod:`.mbarrier`);
the data moves as :mod:`..tensor_units.tma` says. A tensor map that was not given (zero bytes) moves
nothing: its barrier is completed as if the bytes it expects had come, and the instruction
is listed as not modelled.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from ....cuda.launch.tensormap import describe
from ....cuda.sass import Instruction
from ....cuda.sass_operands import Mem, Reg
from ..access_kind import tma_kind
from ..memory_bytes import element_reduction
from ..memory_bytes import reduction_name as _reduction_name
from ..op_table import Context, Step, op, unsupported
from ..operands import read_u32, write_pred, write_u32
from ..state import BLOCKED, Block, Idx, TraceError
from ..tensor_units import tma
from .memory import address, shared_offsets


def _count(b: Block, index: int, ix: Idx) -> None:
    warps = len(np.unique(b.warp[b.ids(ix)]))
    b.unmodelled[index] = b.unmodelled.get(index, 0) + warps


def _copied(b: Block, index: int, ins: Instruction, t: int, text: str) -> None:
    """A TMA or bulk copy issued by thread ``t``'s warp: one request, no LSU wavefronts, and
    what it moved said once (the report's row and its ``reads``)."""
    one = np.array([t], dtype=np.intp)
    b.rec.record_cost(index, ins, tma_kind(), one, [0], b.warp_ids)
    b.rec.note(index, text)


def _ur(b: Block, ix: Idx, i: int) -> int:
    """A uniform register's value (the first executing thread's copy)."""
    t = b.ids(ix)[0]
    return int(b.ur[i, t]) if i != 63 else 0


def ur64(b: Block, ix: Idx, i: int) -> int:
    """A 64-bit uniform register pair's value (the first executing thread's copy)."""
    return _ur(b, ix, i) | (_ur(b, ix, i + 1) << 32)


def _mem_ureg(o: Any, ins: Instruction) -> int:
    if not isinstance(o, Mem) or o.ureg is None or o.reg is not None or o.offset:
        raise unsupported(ins, "expected a [URn] operand")
    return o.ureg.index


# --- mbarriers ---------------------------------------------------------------------------


def _bar_offset(b: Block, addr: int, ins: Instruction, t: int) -> int:
    """The mbarrier at window address ``addr`` of thread ``t``'s CTA (in a cluster launch:
    of the CTA whose rank the address holds in bits 24-31, a remote arrive's): its offset in
    the batch's shared memory (what :attr:`~.state.Block.mbarriers` is keyed by)."""
    off = int(shared_offsets(b, np.array([addr], dtype=np.int64), 8, ins)[0])
    if b.cluster_ctas == 1:
        return off + int(b.shared_base(t))
    rank = (addr & 0xFFFFFFFF) >> 24
    if rank >= b.cluster_ctas:
        raise TraceError(
            f"mbarrier address 0x{addr & 0xFFFFFFFF:x} names CTA rank {rank}; the cluster has "
            f"{b.cluster_ctas} CTAs",
            ins,
        )
    return off + int(b.cluster_table[b.cta_cluster[b.cta[t]], rank]) * b.smem_stride


def _barrier_addresses(b: Block, ix: Idx, a: Any) -> Any:
    """Each executing thread's mbarrier address, told apart by CTA (window address + the
    CTA's base in the batch; checked where used)."""
    a = np.broadcast_to(np.asarray(a, dtype=np.int64), (b.count(ix),)) & 0xFFFFFFFF
    return a + b.shared_base(ix)


def _barriers(
    b: Block, ix: Idx, a: Any, ins: Instruction, verb: str = ""
) -> Iterator[tuple[int, Any, int]]:
    """The distinct mbarriers the executing threads name: per barrier its offset in the
    shared window, the threads (a mask over ``ix``) naming it and the first of them. With a
    ``verb`` (what the instruction does), a barrier never initialized is a located error."""
    ids = b.ids(ix)
    key = _barrier_addresses(b, ix, a)
    for at, k in zip(*np.unique(key, return_index=True), strict=True):
        t = int(ids[k])
        off = _bar_offset(b, int(at - b.shared_base(t)), ins, t)
        if verb and b.mbarriers.get(off) is None:
            where = b.window(off)[1]
            raise TraceError(f"{verb} on shared 0x{where:x}, not an initialized mbarrier", ins)
        yield off, key == at, t


@op("ARRIVES", moves=True)
def _arrives(ins: Instruction, ctx: Context) -> Step:
    """``cp.async.mbarrier.arrive[.noinc]``: ``ARRIVES.LDGSTSBAR.64.ARVCNT [URa]`` (``.noinc``)
    is one arrival of each thread on the mbarrier, made when the thread's earlier cp.async
    copies complete (at once here: a copy completes when it is issued); ``.TRANSCNT`` (no
    ``.noinc``) adds one to the pending count and arrives, no change in all: nothing to do."""
    if len(ins.operands) != 1:
        raise unsupported(ins)
    if "ARVCNT" not in ins.mods:
        return lambda b, ix: None
    ra = address(ins.operands[0], ins)

    def step(b: Block, ix: Idx) -> None:
        a, _ = ra(b, ix)
        for off, sel, _ in _barriers(b, ix, a, ins, "arrive"):
            b.mbarriers.arrive(off, int(sel.sum()), 0, b.sched)

    return step


def _arrive_form(ins: Instruction) -> tuple[int | None, int]:
    """An arrive's arrivals per thread (None: the count in its last source register) and
    what it does to the transaction bytes with that register (1 adds them: ``expect_tx``, -1
    completes them: ``complete_tx``, 0 neither), from its ``A<n|R>T<0|R|X>`` modifier; with
    none it is ``mbarrier.arrive.expect_tx``: one arrival and the bytes expected. A ``.RED``
    arrive returns no state; ``expect_tx`` alone is ``A0TR``, ``complete_tx`` ``A0TX``, an
    arrival of a count ``ART0``."""
    for m in ins.mods:
        g = re.fullmatch(r"A(\d|R)T([0RX])", m)
        if g:
            n = None if g.group(1) == "R" else int(g.group(1))
            return n, {"0": 0, "R": 1, "X": -1}[g.group(2)]
    return 1, 1


@op("SYNCS", moves=True)
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
            for off, _, t in _barriers(b, ix, a, ins):
                lo = int(b.ur[vi, t]) if vi != 63 else 0
                b.mbarriers.init(off, 0x100000 - ((lo >> 1) & 0xFFFFF))

        return init
    if "ARRIVE" in mods and len(ops) == 3:
        arrivals, tx_sign = _arrive_form(ins)
        drop = "OPTOUT" in mods  # arrive_drop: the arrivals leave every later phase too
        ra = address(ops[1], ins)
        rsrc = read_u32(ops[2], "i", ins)  # the bytes, or the count of ART0
        wtok = write_u32(ops[0], ins)

        def arrive(b: Block, ix: Idx) -> None:
            a, _ = ra(b, ix)
            src, _ = rsrc(b, ix)
            n = b.count(ix)
            v = np.broadcast_to(src, (n,)).astype(np.int64)
            counts = v if arrivals is None else np.full(n, arrivals, dtype=np.int64)
            token = np.zeros(n, dtype=np.uint32)
            for off, sel, _ in _barriers(b, ix, a, ins, "arrive"):
                tx = tx_sign * int(v[sel].sum())
                phase = b.mbarriers.arrive(off, int(counts[sel].sum()), tx, b.sched, drop)
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
            par = (np.broadcast_to(par, (n,)) >> np.uint32(31)) & np.uint32(1)
            ok = np.zeros(n, dtype=bool)
            failed = b.converge.failed[ids]
            for off, on, _ in _barriers(b, ix, a, ins, "wait"):
                for p in (0, 1):
                    sel = on & (par == p)
                    if not sel.any():
                        continue
                    if b.mbarriers.done(off, p):
                        ok[sel] = True
                        continue
                    # a first failure is reported (the retry path runs); after that the
                    # thread is blocked until the phase completes, then this wait runs again
                    again = sel & failed
                    if again.any():
                        b.mbarriers.block(off, ids[again], p, index, ins)
                        b.sched[ids[again]] = BLOCKED
            b.converge.failed[ids] = ~ok
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


#: a TMA copy's shared address as an error names it (the box's first byte is checked there)
_TMA_DST = "the TMA load's shared destination"
_TMA_SRC = "the TMA store's shared source"


@op("UTMALDG", moves=True)
def _utmaldg(ins: Instruction, ctx: Context) -> Step:
    if len(ins.operands) < 2 or "IM2COL" in ins.mods:
        raise unsupported(ins)
    rank = tma.rank_of(ins)
    a = _mem_ureg(ins.operands[0], ins)
    m = _mem_ureg(ins.operands[1], ins)
    # the CTA mask's register follows the two addresses; a cache hint (``desc[URx]``, as
    # CUTLASS's loads carry) may come after it
    mcast = (
        next((o for o in ins.operands[2:] if isinstance(o, Reg)), None)
        if "MULTICAST" in ins.mods
        else None
    )
    index = ctx.position(ins)

    def step(b: Block, ix: Idx) -> None:
        for _, t in per_warp(b, ix):
            one = np.array([t], dtype=np.intp)
            dst = int(shared_offsets(b, np.array([_ur(b, one, a)]), 1, ins, _TMA_DST)[0])
            bar = _bar_offset(b, _ur(b, one, a + 1), ins, t)
            coords = tuple(_signed(_ur(b, one, a + 2 + k)) for k in range(rank))
            tm = tma.tensor_map(b, ur64(b, one, m), ins)
            if tm is None:
                _count(b, index, one)
                b.mbarriers.complete_tx(bar, None, b.sched)
                continue
            own, nbytes = int(b.shared_base(t)), 0
            for base in _destinations(b, t, mcast, ins):
                # each destination CTA gets the box at the same window offset, and its
                # mbarrier at the same offset as the issuing CTA's completes the bytes
                nbytes = tma.load(b, tm, dst, coords, ins, base)
                b.mbarriers.complete_tx(bar - own + base, nbytes, b.sched)
            b.rec.fill(ins, dst, tm.box_bytes, tm.swizzle)
            said = f"TMA load of {nbytes:,} B into shared 0x{dst:x}: {describe(tm)}"
            _copied(b, index, ins, t, said)

    return step


def _destinations(b: Block, t: int, mcast: Any, ins: Instruction) -> list[int]:
    """Where a TMA load of thread ``t`` lands: its CTA's window, or with ``.multicast``
    (``mcast``: the uniform register whose upper half is the 16-bit CTA mask: nvcc moves
    ``ctaMask`` there with ``UPRMT UR4, URZ, 0x5410, UR4``) the window of each CTA of the
    cluster whose rank the mask names (their offsets in the batch's shared memory). A mask
    naming a rank past the cluster is an error: the launch's cluster was not given."""
    if not isinstance(mcast, Reg):
        return [int(b.shared_base(t))]
    mask = (_ur(b, np.array([t], dtype=np.intp), mcast.index) >> 16) & 0xFFFF
    if mask >> b.cluster_ctas:
        raise TraceError(
            f"a TMA multicast to the CTAs of mask 0x{mask:x}, in a cluster of "
            f"{b.cluster_ctas} CTA(s): the ranks past {b.cluster_ctas - 1} are not in it; "
            "trace with the cluster the launch had (--cluster X[,Y[,Z]], a CUTLASS 3.x "
            "GEMM's ClusterShape)",
            ins,
        )
    if b.cluster_ctas == 1:
        return [int(b.shared_base(t))]
    cluster = b.cta_cluster[b.cta[t]]
    ranks = [r for r in range(b.cluster_ctas) if mask >> r & 1]
    return [int(b.cluster_table[cluster, r]) * b.smem_stride for r in ranks]


@op("UTMASTG", "UTMAREDG")
def _utmastg(ins: Instruction, ctx: Context) -> Step:
    """``UTMASTG.nD [URa], [URb]``: the box from shared memory at URa written at the
    coordinates URa+1.. of the tensor map at URb; ``UTMAREDG.nD.OP`` combines it into the
    tensor instead (ADD, MIN, MAX, INC, DEC, AND, OR, XOR in the map's element type)."""
    if len(ins.operands) != 2:
        raise unsupported(ins)
    rank = tma.rank_of(ins)
    a = _mem_ureg(ins.operands[0], ins)
    m = _mem_ureg(ins.operands[1], ins)
    index = ctx.position(ins)
    how = _reduction_name(ins) if ins.opcode == "UTMAREDG" else None

    def step(b: Block, ix: Idx) -> None:
        for _, t in per_warp(b, ix):
            one = np.array([t], dtype=np.intp)
            src = int(shared_offsets(b, np.array([_ur(b, one, a)]), 1, ins, _TMA_SRC)[0])
            coords = tuple(_signed(_ur(b, one, a + 1 + k)) for k in range(rank))
            tm = tma.tensor_map(b, ur64(b, one, m), ins)
            if tm is None:
                _count(b, index, one)
                continue
            base = int(b.shared_base(t))
            if how is None:
                tma.store(b, tm, src, coords, ins, base)
                said = f"TMA store of {tm.box_bytes:,} B from shared 0x{src:x}: {describe(tm)}"
            else:
                combine = element_reduction(how, tm.dtype, ins)
                tma.reduce(b, tm, src, coords, combine, ins, base)
                said = (
                    f"TMA reduction ({how.lower()}) of {tm.box_bytes:,} B from shared "
                    f"0x{src:x}: {describe(tm)}"
                )
            _copied(b, index, ins, t, said)

    return step


def _signed(v: int) -> int:
    return v - (1 << 32) if v & 0x80000000 else v


def _bulk_copies(b: Block, ix: Idx, rsize: Any) -> Iterator[tuple[int, Any, int]]:
    """A bulk copy or reduction per warp: the thread issuing it (and it alone, as an index
    array) and the bytes it moves (its size operand counts 16-byte units)."""
    sizes, _ = rsize(b, ix)
    sizes = np.broadcast_to(sizes, (b.count(ix),))
    for k, t in per_warp(b, ix):
        yield t, np.array([t], dtype=np.intp), int(sizes[k]) * 16


@op("UBLKCP", moves=True)
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
        for t, one, size in _bulk_copies(b, ix, rsize):
            base = int(b.shared_base(t))
            if to_shared:
                off = int(shared_offsets(b, np.array([_ur(b, one, d)]), size, ins)[0])
                g = int(mem.offsets(np.array([ur64(b, one, s)]), size, ins)[0])
                b.smem[base + off : base + off + size] = mem.data[g : g + size]
                read = mem.read_taint(np.array([g]), size)
                b.tsmem[base + off : base + off + size] = int(
                    np.bitwise_or.reduce(np.atleast_1d(read))
                )
                bar = _bar_offset(b, _ur(b, one, d + 1), ins, t)
                b.mbarriers.complete_tx(bar, size, b.sched)
                _copied(b, index, ins, t, f"bulk copy of {size:,} B into shared 0x{off:x}")
            else:
                off = int(shared_offsets(b, np.array([_ur(b, one, s)]), size, ins)[0])
                g = int(mem.store_offsets(np.array([ur64(b, one, d)]), size, ins)[0])
                mem.data[g : g + size] = b.smem[base + off : base + off + size]
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
        for t, one, size in _bulk_copies(b, ix, rsize):
            off = int(shared_offsets(b, np.array([_ur(b, one, s)]), size, ins)[0])
            off += int(b.shared_base(t))
            g = int(mem.store_offsets(np.array([ur64(b, one, d)]), size, ins)[0])
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
