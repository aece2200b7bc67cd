"""Memory instructions: constant, global, local and shared loads and stores, and cp.async
(LDGSTS, copied at once; a correct program waits before it reads the copy), with the
addressing every memory family shares (the byte-level reads and writes are
:mod:`..memory_bytes`'s). Every
shared-memory access is handed to the block's recorder. Loads from global memory set
taint bit 0 on what they load; a load's value also inherits its address's taint and,
for shared and local memory, the taint the stored bytes carry. Atomics are in
:mod:`.atomic`, ldmatrix/stmatrix in :mod:`.mma`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Const, Mem, Operand, Reg
from ....hardware.engine import AccessKind
from ...distinct_rows import spread
from ..access_kind import access_width, recorded_kind, shared_kind
from ..memory_bytes import gather, gather_taint, or_all, scatter, scatter_taint
from ..op_table import Context, Step, op, unsupported
from ..operands import const_read, read_pred, read_regs, read_u32, read_u64, write_pred, write_regs
from ..state import LOCAL_BYTES, LOCAL_WINDOW, SHARED_WINDOW_HI, Block, Idx, TraceError
from ..sync.calls import below_stack

_U = np.uint32


def address(mem: Operand, ins: Instruction) -> Any:
    """A reader of a memory operand's byte address (int64) and its taint."""
    if not isinstance(mem, Mem):
        raise TraceError(f"expected a memory operand, found '{mem}'", ins)
    parts: list[Any] = []  # readers of int64 terms, each a new array (never a register's)
    if mem.reg is not None:
        reg = mem.reg
        scale = next((int(s[1:]) for s in reg.sel if s in ("X4", "X8", "X16")), 1)
        parts.append(_term(Reg(reg.kind, reg.index), "64" in reg.sel, scale, ins))
    if mem.ureg is not None:
        ureg = Reg(mem.ureg.kind, mem.ureg.index)
        parts.append(_term(ureg, "64" in mem.ureg.sel, 1, ins))
    off = np.int64(mem.offset)

    def rd(b: Block, ix: Idx) -> tuple[Any, Any]:
        if not parts:
            return np.zeros(b.count(ix), dtype=np.int64) + off, 0
        total, taint = parts[0](b, ix)
        if total.ndim == 0:  # RZ: every thread's term is zero
            total = np.full(b.count(ix), total, dtype=np.int64)
        for p in parts[1:]:
            v, t = p(b, ix)
            total += v
            taint = taint | t
        if off:
            total += off
        return total, taint

    return rd


def _term(reg: Reg, wide: bool, scale: int, ins: Instruction) -> Any:
    """A reader of one register term of an address as a new int64 array."""
    if wide:
        r64 = read_u64(reg, ins)

        def rd64(b: Block, ix: Idx) -> tuple[Any, Any]:
            v, t = r64(b, ix)  # a register pair's: a new array (RZ's: a constant, copied)
            return (np.array(v, dtype=np.uint64) if reg.is_zero else v).view(np.int64), t

        return rd64
    r32 = read_u32(reg, "i", ins)

    def rd32(b: Block, ix: Idx) -> tuple[Any, Any]:
        v, t = r32(b, ix)
        total = np.array(v, dtype=np.int64)
        if scale != 1:
            total *= scale
        return total, t

    return rd32


def wide_address(mem: Operand, ins: Instruction) -> Operand:
    """A generic ``ATOM.E``, ``LD.E``, ``ST.E`` or a global ``ATOMG.E`` names a 64-bit address
    pair as ``[R4]`` (nvdisasm writes ``.64`` for LDG/STG/REDG addresses, not for these:
    ``LD.E R9, [R2]`` of a distributed shared memory load reads R2:R3)."""
    extended = ins.opcode in ("ATOM", "ATOMG", "LD", "ST") and "E" in ins.mods
    if extended and isinstance(mem, Mem) and mem.reg is not None and "64" not in mem.reg.sel:
        reg = mem.reg
        wide = Reg(reg.kind, reg.index, sel=(*reg.sel, "64"))
        return Mem(wide, mem.ureg, mem.offset, mem.desc)
    return mem


def _generic_spaces(addr: Any, ins: Instruction) -> tuple[Any, Any]:
    """(lanes in the shared window, lanes in the local window) of a generic (LD/ST) access,
    each None where no lane is (the windows are :mod:`..state`'s); the rest are global."""
    if ins.opcode not in ("LD", "ST"):
        return None, None
    sh = (addr >> 32) == SHARED_WINDOW_HI
    lo = (addr >> 32) == LOCAL_WINDOW >> 32
    return (sh if np.count_nonzero(sh) else None), (lo if np.count_nonzero(lo) else None)


# --- memory spaces: byte arrays, their taint, and offsets --------------------------------


def shared_offsets(b: Block, addr: Any, width: int, ins: Instruction, what: str = "") -> Any:
    """Window addresses (offsets in the CTA's shared memory) of shared addresses, checked;
    ``+ b.shared_base(ix)`` places them in the batch's :attr:`~.state.Block.smem`.
    ``what``: the access as the error names it (default: its width)."""
    a = addr & 0xFFFFFFFF
    if b.cluster_ctas > 1:  # bits 24-31 hold the CTA's rank in its cluster (window_offsets)
        a = a & 0xFFFFFF
    size = b.smem_size
    if a.size and (int(np.maximum.reduce(a)) + width > size):  # (a.max() costs more)
        bad = int(a[a + width > size][0])
        said = what or f"shared access of {width} byte{'s' if width > 1 else ''}"
        raise TraceError(
            f"{said} at 0x{bad:x} is outside the block's shared "
            f"memory (0x{size:x} bytes incl. the 0x{b.launch.shared_base:x}-byte reserved area; "
            "give --dynamic-smem if the kernel uses extern __shared__)",
            ins,
        )
    return a


def window_offsets(b: Block, ids: Any, addr: Any, width: int, ins: Instruction) -> Any:
    """(window offsets, offsets in the batch's :attr:`~.state.Block.smem`, remote lanes or
    None) of the shared-window addresses ``addr`` of the threads ``ids``. In a cluster
    launch bits 24-31 of a window address name a CTA of the cluster by its rank (what
    ``mapa`` writes): a lane naming another CTA than its own reaches that CTA's shared
    memory (distributed shared memory), a remote lane."""
    a32 = addr & 0xFFFFFFFF
    off = shared_offsets(b, a32, width, ins)
    if b.cluster_ctas == 1:
        return off, off + b.shared_base(ids), None
    rank = a32 >> 24
    if rank.size and int(rank.max()) >= b.cluster_ctas:
        bad = int(a32[rank >= b.cluster_ctas][0])
        raise TraceError(
            f"shared::cluster address 0x{bad:x} names CTA rank {bad >> 24}; the cluster has "
            f"{b.cluster_ctas} CTAs",
            ins,
        )
    own = b.cta[ids]
    target = b.cluster_table[b.cta_cluster[own], rank]
    return off, off + target * b.smem_stride, target != own


def local_offsets(b: Block, tids: Any, addr: Any, width: int, ins: Instruction) -> Any:
    a = addr & 0xFFFFFFFF
    if a.size and (int(a.max()) + width > LOCAL_BYTES):
        bad = int(a.max())
        if bad < 1 << 31:
            raise TraceError(f"local access at 0x{bad:x} beyond {LOCAL_BYTES} bytes", ins)
        low = tids[a >= 1 << 31] if np.shape(a) == np.shape(tids) else np.asarray(tids)
        why = below_stack(bool(np.count_nonzero(b.call_frame[low])))
        raise TraceError(f"local access at 0x{bad:x}, below the stack: {why}", ins)
    if a.size:  # the lowest byte touched: the state below it is zeros (Block.machine_arrays)
        b.local_low = min(b.local_low, int(a.min()))
    return tids.astype(np.int64) * LOCAL_BYTES + a


def check_align(addr: Any, width: int, ins: Instruction) -> None:
    if width > 1 and addr.size and np.count_nonzero(addr & (width - 1)):
        bad = int(addr[(addr & (width - 1)) != 0][0]) & ((1 << 64) - 1)  # an int64 view: unsigned
        raise TraceError(f"misaligned {width}-byte access at address 0x{bad:x}", ins)


def ambient(b: Block, ix: Idx) -> Any:
    """The taint of the decisions that made the threads of ``ix`` run the step (a tainted
    guard or branch, :mod:`..taint_flow`): what they write to memory takes it too."""
    return 0 if b.ambient is None else b.ambient[b.ids(ix)]


def record_shared(
    b: Block,
    ctx_index: int,
    ins: Instruction,
    kind: AccessKind,
    ix: Idx,
    a: Any,
    t: Any,
    src: Any = None,
    copies: Any = None,
) -> None:
    tids = b.ids(ix)
    b.rec.record(ctx_index, ins, kind, tids, a, t, b.warp_ids, src, copies)


def record_window(
    b: Block, index: int, ins: Instruction, kind: AccessKind, ids: Any, off: Any, ta: Any,
    remote: Any, at: Any = None, op: str = "", operands: int = 1,
) -> None:  # fmt: skip
    """Record a generic access's shared lanes: its own CTA's as requests, remote ones listed
    (``at``: each lane's offset in the batch's shared memory; ``op``: ld, st (by default the
    load's or store's) or atom, of ``operands`` a lane) with the warps that have own lanes."""
    if remote is None or not remote.any():
        record_shared(b, index, ins, kind, ids, off, ta)
        return
    here = ~remote
    if here.any():
        record_shared(b, index, ins, kind, ids[here], off[here], ta[here])
    op = op or ("ld" if ins.opcode == "LD" else "st")
    own = np.unique(ids[here] // b.warp_size)
    taint = np.asarray(ta)[remote]
    b.listed(index, ids[remote], at[remote], kind.size, op, operands, taint, own)


# --- loads and stores ---------------------------------------------------------------------


@op("LDS", "LDG", "LDL", "LD")
def _load(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) != 2:
        raise unsupported(ins)
    width, signed = access_width(ins)
    words = max(1, width // 4)
    w = write_regs(ops[0], words, ins)
    ra = address(wide_address(ops[1], ins), ins)
    space = {"LDS": "shared", "LDG": "global", "LDL": "local", "LD": "global"}[ins.opcode]
    index = ctx.position(ins)
    kind = recorded_kind(ins, width)

    def step(b: Block, ix: Idx) -> None:
        a, ta = ra(b, ix)
        check_align(a, width, ins)
        if space == "shared":
            off = shared_offsets(b, a, width, ins)
            record_shared(b, index, ins, kind, ix, off, ta)
            at = off if b.ctas == 1 else off + b.shared_base(ix)  # (CTAs 1 KiB apart)
            vals = gather(b.smem, at, width, signed, aligned=True)
            t = gather_taint(b.tsmem, at, width, aligned=True) | ta
        elif space == "local":
            data, taint = b.local()
            off = local_offsets(b, b.ids(ix), a, width, ins)
            vals = gather(data, off, width, signed)
            t = gather_taint(taint, off, width) | ta
        else:
            sh, lo = _generic_spaces(a, ins)
            mem = b.launch.memory
            if sh is None and lo is None:
                off = mem.offsets(a, width, ins, ta)
                vals = gather(mem.data, off, width, signed)
                t = np.asarray(ta, dtype=np.uint8) | mem.read_taint(off, width)
            else:  # a generic pointer into a window: those lanes read shared or local memory
                ids, ta = b.ids(ix), np.broadcast_to(np.asarray(ta, dtype=np.uint8), a.shape)
                vals = np.zeros((words, len(a)), dtype=np.uint32)
                t, rest = ta.copy(), np.ones(len(a), dtype=bool)
                if sh is not None:
                    off, at, remote = window_offsets(b, ids[sh], a[sh], width, ins)
                    record_window(b, index, ins, kind, ids[sh], off, ta[sh], remote, at)
                    vals[:, sh] = gather(b.smem, at, width, signed)
                    t[sh] |= gather_taint(b.tsmem, at, width)
                    rest &= ~sh
                if lo is not None:
                    data, taint = b.local()
                    at = local_offsets(b, ids[lo], a[lo] - LOCAL_WINDOW, width, ins)
                    vals[:, lo] = gather(data, at, width, signed)
                    t[lo] |= gather_taint(taint, at, width)
                    rest &= ~lo
                if rest.any():
                    goff = mem.offsets(a[rest], width, ins, ta[rest])
                    vals[:, rest] = gather(mem.data, goff, width, signed)
                    t[rest] |= mem.read_taint(goff, width)
        w(b, ix, vals, t)

    return step


@op("STS", "STG", "STL", "ST")
def _store(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) != 2:
        raise unsupported(ins)
    width, _ = access_width(ins)
    words = max(1, width // 4)
    ra = address(wide_address(ops[0], ins), ins)
    rv = read_regs(ops[1], words, ins)
    space = {"STS": "shared", "STG": "global", "STL": "local", "ST": "global"}[ins.opcode]
    index = ctx.position(ins)
    kind = recorded_kind(ins, width)

    def step(b: Block, ix: Idx) -> None:
        a, ta = ra(b, ix)
        check_align(a, width, ins)
        vals, tv = rv(b, ix)
        t = or_all(tv) | ambient(b, ix)
        if space == "shared":
            off = shared_offsets(b, a, width, ins)
            record_shared(b, index, ins, kind, ix, off, ta)
            at = off if b.ctas == 1 else off + b.shared_base(ix)
            scatter(b.smem, at, width, vals)
            scatter_taint(b.tsmem, at, width, t | ta)
        elif space == "local":
            data, taint = b.local()
            off = local_offsets(b, b.ids(ix), a, width, ins)
            scatter(data, off, width, vals)
            scatter_taint(taint, off, width, t | ta)
        else:
            sh, lo = _generic_spaces(a, ins)
            mem = b.launch.memory
            if sh is None and lo is None:
                off = mem.store_offsets(a, width, ins, taint=ta)  # first: it may grow the arena
                scatter(mem.data, off, width, vals)
                return
            # a generic pointer into a window: those lanes write shared or local memory
            ids, ta = b.ids(ix), np.broadcast_to(np.asarray(ta, dtype=np.uint8), a.shape)
            vals, rest = np.asarray(vals), np.ones(len(a), dtype=bool)
            tt = np.broadcast_to(np.asarray(t, dtype=np.uint8), a.shape)
            if lo is not None:
                data, taint = b.local()
                at = local_offsets(b, ids[lo], a[lo] - LOCAL_WINDOW, width, ins)
                scatter(data, at, width, vals[:, lo])
                scatter_taint(taint, at, width, tt[lo] | ta[lo])
                rest &= ~lo
            if sh is not None:
                off, at, remote = window_offsets(b, ids[sh], a[sh], width, ins)
                record_window(b, index, ins, kind, ids[sh], off, ta[sh], remote, at)
                mine, taint = vals[:, sh], tt[sh] | ta[sh]
                if remote is not None and remote.any():
                    # lanes on one place of another CTA: the lowest lane's value lands there
                    # (tests/data/trace/dsmrule), so those lanes are written last-first
                    order = np.concatenate([np.flatnonzero(~remote), np.flatnonzero(remote)[::-1]])
                    at, mine, taint = at[order], mine[:, order], taint[order]
                scatter(b.smem, at, width, mine)
                scatter_taint(b.tsmem, at, width, taint)
                rest &= ~sh
            if rest.any():
                off = mem.store_offsets(a[rest], width, ins, taint=ta[rest])
                scatter(mem.data, off, width, vals[:, rest])

    def skipped(b: Block, ids: npt.NDArray[np.intp], taint: npt.NDArray[np.uint8]) -> None:
        """Threads ``ids`` that a decision on global data kept off: the bytes they would
        have written hold what that decision chose, and take its taint (addresses outside
        the window or misaligned, which the guard may be there to avoid, are left out)."""
        a, _ = ra(b, ids)
        a = np.broadcast_to(np.asarray(a, dtype=np.int64) & 0xFFFFFFFF, ids.shape)
        inside = (a % width == 0) & (a + width <= b.smem_size)
        at = a[inside] + b.shared_base(ids[inside])
        for k in range(width):
            np.bitwise_or.at(b.tsmem, at + k, taint[inside])

    if space == "shared":
        ctx.skipped[index] = skipped
    return step


@op("LDC", "ULDC")
def _ldc(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) != 2 or not isinstance(ops[1], Const):
        raise unsupported(ins)
    c = ops[1]
    width, signed = access_width(ins)
    words = max(1, width // 4)
    w = write_regs(ops[0], words, ins)
    roff = read_u32(c.reg, "i", ins) if c.reg is not None else None

    def step(b: Block, ix: Idx) -> None:
        n = b.count(ix)
        if roff is None:  # one address: read once, the same in every thread
            raw, tc = const_read(b, c.bank, np.array([c.offset], dtype=np.int64), width, ins)
            flat = np.ascontiguousarray(raw).reshape(-1)
            one = gather(flat, np.zeros(1, np.int64), width, signed)
            w(b, ix, one, spread(tc, n))  # (words, 1): each row broadcast as it is written
            return
        v, t = roff(b, ix)
        off = v.astype(np.int64) + c.offset
        raw, tc = const_read(b, c.bank, off, width, ins)
        data = np.ascontiguousarray(raw).reshape(-1)
        local = np.arange(n, dtype=np.int64) * width
        w(b, ix, gather(data, local, width, signed), t | tc)

    return step


# --- cp.async -----------------------------------------------------------------------------


@op("LDGSTS")
def _ldgsts(ins: Instruction, ctx: Context) -> Step:
    ops = ins.operands
    if len(ops) not in (2, 3):
        raise unsupported(ins)
    width, _ = access_width(ins)
    rdst, rsrc = address(ops[0], ins), address(ops[1], ins)
    # the trailing predicate says whether any source byte is read (src-size > 0); with
    # .ZFILL the low bits of the source address hold how many bytes are zero-filled
    rfill = read_pred(ops[2], ins) if len(ops) == 3 else None
    zfill = "ZFILL" in ins.mods
    index = ctx.position(ins)
    kind = shared_kind(ins)

    def step(b: Block, ix: Idx) -> None:
        d, td = rdst(b, ix)
        check_align(d, width, ins)
        off = shared_offsets(b, d, width, ins)
        n = b.count(ix)
        s, ts = rsrc(b, ix)
        nbytes = np.full(n, width, dtype=np.int64)
        if zfill:
            nbytes = width - (s & (width - 1))
            s = s & ~np.int64(width - 1)
        if rfill is not None:
            nbytes = np.where(spread(rfill(b, ix)[0], n), nbytes, 0)
        check_align(s, width, ins)
        record_shared(b, index, ins, kind, ix, off, td, s, nbytes)
        raw = np.zeros((n, width), dtype=np.uint8)
        reads = nbytes > 0
        fresh = np.zeros(n, dtype=np.uint8)
        if reads.any():
            mem = b.launch.memory
            src = mem.offsets(s[reads], width, ins, np.broadcast_to(ts, (n,))[reads])
            raw[reads] = mem.data[src[:, None] + np.arange(width)]
            raw[np.arange(width)[None, :] >= nbytes[:, None]] = 0
            fresh[reads] = mem.read_taint(src, width)
        at = off + b.shared_base(ix)
        b.smem[at[:, None] + np.arange(width)] = raw
        taint = fresh | ts | td | ambient(b, ix)
        scatter_taint(b.tsmem, at, width, taint)

    return step


@op("QSPC")
def _qspc(ins: Instruction, ctx: Context) -> Step:
    """``QSPC.E.S P0, RZ, [R4]``: whether a generic address lies in the shared window
    (``.S``), in global memory (``.G``) or in the local window (``.L``); the 64-bit address
    pair is printed as ``[R4]``."""
    ops = ins.operands
    space = next((m for m in ins.mods if m in ("S", "G", "L")), None)
    if len(ops) != 3 or space is None or not isinstance(ops[2], Mem) or ops[2].reg is None:
        raise unsupported(ins)
    mem = ops[2]
    assert mem.reg is not None
    wide = Mem(Reg(mem.reg.kind, mem.reg.index, sel=("64",)), mem.ureg, mem.offset, mem.desc)
    ra = address(wide, ins)
    wp = write_pred(ops[0], ins)

    def step(b: Block, ix: Idx) -> None:
        a, t = ra(b, ix)
        shared, local = (a >> 32) == SHARED_WINDOW_HI, (a >> 32) == LOCAL_WINDOW >> 32
        wp(b, ix, {"S": shared, "L": local, "G": ~(shared | local)}[space], t)

    return step
