"""Atomic instructions on shared and global memory: ATOMS, ATOMG, ATOM and the
reductions RED/REDG, 32- and 64-bit, integer, float, double and half2, and the 128-bit
shared exchange and compare-and-swap (``ATOMS.EXCH.128``, ``ATOMS.CAS.128``).

Order: the warps at the instruction are served one after the other, rotating which warp
goes first from one execution of the instruction to the next (round robin, as the H200
serves the retries of contending compare-and-swap loops, docs/hardware-model.md section
5); the lanes of a warp in lane order. Every other atomic applies lane by lane in that
order, a compare-and-swap comparing with memory as the lanes before it left it.

``ATOMS.CAST.SPIN`` (the compare-and-swap of the loops nvcc emits for float, double,
half2 and 64-bit atomics) writes its destination with 1 where the swap happened and 0
where not (a 64-bit one: the pair 1, 0), never the old value; it serves one wavefront
per phase (:func:`served`): a lane whose word is not the first its bank holds in the
phase fails, and per phase and address only the first lane whose compare value matches
the word swaps; the others fail and retry. Phases are served in order, each comparing
with the word as the phases before it left it: a 32-bit warp is one phase (one winner
per address), a 64-bit one two half-warps, so where lanes 0-15's winner swapped a value
for itself (an add of 0), lanes 16-31's first lane on that word swaps too
(docs/hardware-model.md section 5a).

A generic ``ATOM`` whose address falls in the shared window: ``ATOM ... P0, Rd, ...`` (the
fast path of float, half2 and bf16x2 atomics, ``Rd`` = ``RZ`` or the old value's register)
is not performed there and writes P0 false (``Rd`` untouched), so that the kernel takes its
shared-memory path; so is a 64-bit fast path whose operation the architecture's
``generic_shared_atomics_64`` leaves out (``ATOM.E.MIN.S64 P0``, ``ATOM.E.XOR.64 P0``), on
the CTA's own shared memory a request of the ``declined`` class (one wavefront per phase,
nothing applied); a declined 32-bit one and a generic atomic on global memory make no
request, but cost ``op_atom`` wavefronts that no row carries (the rule of
``hardware.dsmem``: 1 a warp, 2 a 64-bit one on global memory; docs/hardware-model.md
section 9e). The 64-bit fast paths it names (``ATOM.E.ADD.64 P0, ...``) and every other
generic atomic are applied to shared memory: on the CTA's own, a request of its ``ATOMS``
form with that form's wavefronts (the op vocabulary's rule, ``hardware.ops.op_of_generic``);
on another CTA's, listed with their DSMEM sectors. An instruction with lanes on both records
the own CTA's lanes as the ``ATOMS`` form and lists the others (docs/hardware-model.md
section 9d, tests/data/trace/clusterhist).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Operand, Reg
from ....hardware import dsmem
from ....hardware import ops as ops_vocabulary
from ....hardware.arch import SM90
from ....hardware.engine import AccessKind
from ...distinct_rows import spread
from ..access_kind import access_width, atomic_op, recorded_kind, shared_kind
from ..memory_bytes import gather_taint, or_all, scatter_taint
from ..op_table import Context, Step, op, unsupported
from ..operands import read_regs, read_u32, read_u64, write_pred, write_regs
from ..state import SHARED_WINDOW_HI, TAINT_GLOBAL, Block, Idx
from ..sync.atomic_words import serve
from .memory import (
    address,
    ambient,
    check_align,
    record_shared,
    record_window,
    shared_offsets,
    wide_address,
    window_offsets,
)

_U = np.uint32


def spin_phase(ids: Any, width: int, warp_size: int) -> Any:
    """Per lane, its phase of a compare-and-swap as the engine cuts phases: a warp for
    4-byte lanes, a half-warp for 8-byte ones (a number unique in the launch)."""
    return ids // min(warp_size, SM90.lanes_per_phase(width))


def served(ids: Any, off: Any, width: int, warp_size: int) -> Any:
    """Per lane, whether one wavefront per phase reaches it: its word is the first word its
    bank holds in its phase (lanes in lane order)."""
    word = off // SM90.bank_bytes
    group = spin_phase(ids, width, warp_size) * SM90.banks + word % SM90.banks  # (phase, bank)
    order = np.lexsort((ids, group))
    first = np.empty(len(ids), dtype=np.int64)
    g, w = group[order], word[order]
    starts = np.r_[True, g[1:] != g[:-1]]
    first[order] = w[np.maximum.accumulate(np.where(starts, np.arange(len(g)), 0))]
    return word == first


def warp_order(b: Block, index: int, ids: Any) -> Any:
    """Positions of ``ids`` in serving order: CTA by CTA, the warps of each rotated by the
    instruction's executions in that CTA (round robin over its warps at it), lanes of a
    warp in order."""
    warps, lanes = np.divmod(ids, b.warp_size)
    present, row = np.unique(warps, return_inverse=True)
    cta = present // b.n_warps
    turns = b.atomic_turns.get(index)
    if turns is None:
        turns = b.atomic_turns[index] = np.zeros(b.ctas, dtype=np.int64)
    ctas, first, count = np.unique(cta, return_index=True, return_counts=True)
    # each CTA's warps at the instruction, rotated to start at its turn's warp
    start = np.repeat(first, count)
    size = np.repeat(count, count)
    pos = np.arange(len(present)) - start
    rank = start + (pos - np.repeat(turns[ctas] % count, count)) % size
    turns[ctas] += 1
    keys = rank[row] * b.warp_size + lanes
    return np.argsort(keys, kind="stable")


@op("ATOMS", "ATOMG", "ATOM", "RED", "REDG")
def _atomic(ins: Instruction, ctx: Context) -> Step:
    opname = atomic_op(ins)
    ops = list(ins.operands)
    # destinations come first: an optional predicate (ATOMG PT, ATOM P0), then a register
    wpred: Operand | None = None
    if ops and isinstance(ops[0], Reg) and ops[0].kind == "P":
        wpred = ops.pop(0)
    dest: Operand | None = None
    if ins.opcode not in ("RED", "REDG"):
        dest = ops.pop(0)
        if isinstance(dest, Reg) and dest.kind == "P":
            wpred, dest = dest, ops.pop(0)
    mem = wide_address(ops.pop(0), ins)
    srcs = ops
    width, _ = access_width(ins)
    if "F16x2" in ins.mods or "BF16x2" in ins.mods:
        width = 4
    if width == 16 and ins.opcode == "ATOMS" and dest is not None and wpred is None:
        return _atomic128(ins, ctx, opname, dest, mem, srcs)
    if width not in (4, 8):
        raise unsupported(ins, f"{width}-byte atomics")
    bits = 8 * width
    words = width // 4
    spin = opname == "CAST"
    ra = address(mem, ins)
    readers = [read_u32(s, "i", ins) if width == 4 else read_u64(s, ins) for s in srcs]
    w = write_regs(dest, words, ins) if dest is not None else None
    keeps = isinstance(wpred, Reg) and not wpred.is_true
    wp = write_pred(wpred, ins) if wpred is not None and keeps else None
    index = ctx.position(ins)
    kind = recorded_kind(ins, width)
    shared = ops_vocabulary.op_of_opcode(ins.opcode) is not None  # ATOMS
    generic = ins.opcode == "ATOM"
    # a fast path that shared memory does not do: half2, and 64-bit operations the
    # architecture leaves out, a double's add among them (measured: tests/data/trace/
    # everyday, debug_builds, probes2, genatom)
    declined = generic and (
        width != 8 or opname not in SM90.generic_shared_atomics_64 or "F64" in ins.mods
    )
    refused = AccessKind(kind.op, width, "declined")
    pair = 2 if opname in ("CAS", "CAST") else 1  # a compare and a new value

    def step(b: Block, ix: Idx) -> None:
        a, ta = ra(b, ix)
        n = b.count(ix)
        in_window = ((a >> 32) == SHARED_WINDOW_HI) if generic else np.zeros(n, dtype=bool)
        elsewhere: Any = None  # the lanes on another CTA's shared memory (the cluster's)
        if wp is not None and declined and _decline(b, ins, index, refused, ix, a, in_window, ta):
            wp(b, ix, ~in_window, ta)
            return
        check_align(a, width, ins)
        vals = [spread(r(b, ix)[0], n) for r in readers]
        tv = or_all([r(b, ix)[1] for r in readers])
        if shared:
            off = shared_offsets(b, a, width, ins)
            record_shared(b, index, ins, kind, ix, off, ta)
            off = off + b.shared_base(ix)
            data, taint = b.smem, b.tsmem
        elif in_window.all() and generic:
            # the CTA's own lanes as its ATOMS form, another CTA's listed with their sectors
            ids = b.ids(ix)
            window, off, remote = window_offsets(b, ids, a, width, ins)
            lanes_ta = np.broadcast_to(np.asarray(ta, dtype=np.uint8), ids.shape)
            record_window(b, index, ins, kind, ids, window, lanes_ta, remote, off, "atom", pair)
            if remote is not None and remote.any():
                elsewhere = remote
            data, taint = b.smem, b.tsmem
        elif generic and in_window.any():
            raise unsupported(ins, "a generic atomic on global and shared lanes at once")
        else:
            if generic:  # on global memory: op_atom wavefronts no row carries
                _unserved(b, index, b.ids(ix), width, pair)
            mem_ = b.launch.memory
            fresh = mem_.read_taint(mem_.offsets(a, width, ins, ta), width)
            off = mem_.store_offsets(a, width, ins, counted=False)
            data, taint = mem_.data, None
        if taint is not None:
            fresh = 0
        cells = data.view(np.uint32 if width == 4 else np.uint64)
        cell = off // width
        old = np.zeros(n, dtype=np.uint64)
        ok = np.zeros(n, dtype=bool)
        if opname in ("CAS", "CAST"):
            cmp_v, new_v = vals[0], vals[1]
        else:
            zero = np.zeros(n, np.uint64)
            cmp_v = new_v = vals[0] if vals else zero
        ids = b.ids(ix)
        reached = served(ids, off, width, b.warp_size) if spin else None
        phase = spin_phase(ids, width, b.warp_size)
        order = warp_order(b, index, ids)
        changed = serve(cells, cell, order, (new_v, cmp_v), (opname, ins.mods, bits), reached,
                        phase, old, ok)  # fmt: skip
        if changed:
            b.atomic_changes += 1
            if data is not b.smem:
                b.launch.memory.epoch += 1
        if opname in ("CAS", "CAST") and not ok.all():  # those lanes go round their loop again
            b.cas_failed[index] = b.cas_failed.get(index, 0) + int(np.count_nonzero(~ok))
        if taint is not None:
            scatter_taint(taint, off, width, np.asarray(tv, dtype=np.uint8) | ta | ambient(b, ix))
        t_old = (gather_taint(taint, off, width) if taint is not None else TAINT_GLOBAL) | ta
        t_old = t_old | fresh
        if w is not None:
            result = ok.astype(np.uint64) if spin else old
            lo = (result & np.uint64(0xFFFFFFFF)).astype(_U)
            hi = (result >> np.uint64(32)).astype(_U)
            w(b, ix, (lo, hi)[:words], t_old)
        if wp is not None:  # a remote compare-and-swap's predicate: done at once (9d)
            done = ok if opname in ("CAS", "CAST") else np.ones(n, dtype=bool)
            wp(b, ix, done if elsewhere is None else done | elsewhere, t_old)

    return step


def _unserved(b: Block, index: int, ids: Any, width: int, operands: int = 1) -> None:
    """Count the ``op_atom`` wavefronts of generic atomic ``index`` whose lanes ``ids`` shared
    memory did not serve (on global memory, or declined there): Nsight's per-op counter has
    them, no source-counter row does (:func:`shmem_cli.hardware.dsmem.generic_atom_wavefronts`);
    per CTA too where classes' blocks run together (:attr:`..state.Block.by_cta`)."""
    warps, lanes = np.divmod(ids, b.warp_size)
    n = dsmem.generic_atom_wavefronts(warps, lanes, width, operands)
    b.generic_atoms[index] = b.generic_atoms.get(index, 0) + n
    if b.by_cta is None:
        return
    ctas = warps // b.n_warps
    for c in np.unique(ctas):
        key, mine = ("generic_atoms", int(c), index), ctas == c
        n = dsmem.generic_atom_wavefronts(warps[mine], lanes[mine], width, operands)
        b.by_cta[key] = b.by_cta.get(key, 0) + n


def _decline(
    b: Block, ins: Instruction, index: int, kind: AccessKind, ix: Idx, a: Any, win: Any, ta: Any
) -> bool:
    """Whether a generic fast path is declined (lanes ``win`` in the shared window; the
    code's fallback does the work): on shared lanes a 32-bit one (float, half2, bf16x2)
    always, no request, only the op_atom wavefronts no row carries (:func:`_unserved`: its
    source-counter row reads 0); a 64-bit one on the CTA's own shared memory,
    recorded as a request of ``kind`` (the H200 counts 1 wavefront per half-warp in its
    per-op counters). A 64-bit one on another CTA's shared memory is applied there, as the
    measured ``ADD.64`` is (section 9d; the others were not measured there)."""
    if not win.any():
        return False
    if not win.all():
        raise unsupported(ins, "a generic atomic on global and shared lanes at once")
    if kind.size != 8:  # op_atom wavefronts no row carries, the fall-back's aside
        _unserved(b, index, b.ids(ix), kind.size)
        return True
    check_align(a, 8, ins)
    window, _, remote = window_offsets(b, b.ids(ix), a, 8, ins)
    if remote is not None and remote.any():
        return False
    record_shared(b, index, ins, kind, ix, window, ta)
    return True


def _atomic128(
    ins: Instruction, ctx: Context, opname: str, dest: Operand, mem: Any, srcs: list[Operand]
) -> Step:
    """``ATOMS.EXCH.128 Rd, [a], Rv`` and ``ATOMS.CAS.128 Rd, [a], Rc, Rv``: four registers
    each, applied lane by lane in serving order; Rd gets the 16 bytes found."""
    if opname not in ("EXCH", "CAS"):
        raise unsupported(ins, f"16-byte {opname} atomics")
    ra = address(mem, ins)
    readers = [read_regs(s, 4, ins) for s in srcs]
    w = write_regs(dest, 4, ins)
    index = ctx.position(ins)
    kind = shared_kind(ins)

    def step(b: Block, ix: Idx) -> None:
        a, ta = ra(b, ix)
        check_align(a, 16, ins)
        got = [r(b, ix) for r in readers]
        tv = or_all([t for _, ts in got for t in ts])
        off = shared_offsets(b, a, 16, ins)
        record_shared(b, index, ins, kind, ix, off, ta)
        off = off + b.shared_base(ix)
        cells = b.smem.view(np.uint32)
        first = off // 4
        n = len(first)
        old = np.zeros((4, n), dtype=_U)
        new, cmp = got[-1][0], got[0][0]
        ok = np.zeros(n, dtype=bool)
        for k in warp_order(b, index, b.ids(ix)):
            c = int(first[k])
            old[:, k] = cells[c : c + 4]
            ok[k] = opname == "EXCH" or bool((old[:, k] == cmp[:, k]).all())
            if ok[k] and (old[:, k] != new[:, k]).any():
                cells[c : c + 4] = new[:, k]
                b.atomic_changes += 1
        if opname == "CAS" and not ok.all():
            b.cas_failed[index] = b.cas_failed.get(index, 0) + int(np.count_nonzero(~ok))
        scatter_taint(b.tsmem, off, 16, np.asarray(tv, dtype=np.uint8) | ta | ambient(b, ix))
        w(b, ix, tuple(old), gather_taint(b.tsmem, off, 16) | ta)

    return step
