"""What the H200 counts in Nsight Compute's ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc``
(the per-op table's ``misc`` row): the rule, in one place (docs/hardware-model.md, 9e;
measured: tests/data/trace/miscops, warpops, globalops, sregs, barrules).

``op_misc`` counts no lane addresses: a warp's end costs 1 wavefront, a CTA barrier's
completion 1 for the CTA where a warp of it reached an instruction of the memory pipe
(:data:`STIRS`, its lanes on or off) since the CTA's previous completion (the first always:
barriers back to back, or with only arithmetic, branches, constant loads, special-register
reads but ``threadIdx.x``'s or mbarrier operations between, count once), a warpgroup arrive
(``WARPGROUP.ARRIVE``) the same where it completes, a GPU-scope memory barrier 2 a warp, a
CTA-scope one and a debug build's exit fence (``MEMBAR.SC.VC``) 1 a warp (a CTA-scope one
that every warp of the CTA runs together from a barrier 1 a pair of warps: :data:`TOGETHER`),
the async-proxy fence (``FENCE.VIEW.ASYNC.S``) 1 a warp but none right after a
GPU-scope memory barrier, a warp shuffle (``SHFL``) 1, reading ``threadIdx.y`` and a few
other special registers (:data:`SPECIAL_READS`) 1, ``threadIdx.x`` 1 after a warp's first
read, a shared-memory instruction, a global or generic store or a global load a warp reaches
with no lane on 1 (:data:`PREDICATED_OFF`); mbarrier operations, the cluster barrier's own
instructions and ``elect`` cost none. :func:`rules_of` says what one warp execution of each
instruction of a function costs and what each completion of a barrier does (None: it is none
of these; :func:`rule_for` the same of one instruction alone), :func:`stirs_barrier` whether
it makes the next completion cost. Warps that reach a CTA-scope memory barrier apart, or
after a memory-pipe instruction, may still share wavefronts on the GPU as their timing
allows: counted 1 a warp here. (The
``op_atom`` wavefronts of the generic atomics the CTA's own shared memory does not serve,
remote, on global memory or declined there: :mod:`.dsmem`.)
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cuda.sass import Instruction
from ..cuda.sass_operands import Operand, Special
from ..plumbing.frozen import frozen


@frozen
class MiscRule:
    """What one instruction costs in ``op_misc``: per warp execution, and per completion of
    the CTA barrier it waits at (``BAR.SYNC``: nothing per warp, 1 a CTA each time)."""

    opcode: str
    mods: frozenset[str]  # modifiers that must all be present
    per_warp: int
    per_completion: int = 0
    #: counted only for a warp that reaches the instruction with every lane's guard false
    #: (a global store kept off: no request, but this); a warp that runs it costs nothing
    when_off: bool = False
    #: the special registers it reads, where the rule is for those only (S2R)
    special: frozenset[str] = frozenset()
    #: a warp's first execution of an instruction of this rule costs none, each later one
    #: :attr:`per_warp` (``S2R SR_TID.X``: the read at a kernel's start is free)
    first_free: bool = False
    #: it completes where its warps run it, as a CTA barrier does where they wait
    #: (``WARPGROUP.ARRIVE``): :attr:`per_completion` for each CTA stirred since its last
    arrive: bool = False
    #: every warp of a CTA running it together from a barrier (:data:`TOGETHER`): two warps
    #: share one wavefront, each pair tallied as a completion of :attr:`per_completion` (-1)
    pairs: bool = False


#: op_misc wavefronts of one CTA barrier's completion (BAR.SYNC, BAR.RED: all its warps),
#: where a warp of the CTA reached an instruction of :data:`STIRS` since the CTA's previous
#: completion (the first completion always costs it); else none (:func:`stirs_barrier`)
BARRIER_DONE = 1
#: op_misc wavefronts of a pair of warps that run a CTA-scope memory barrier together, beside
#: their 1 each: every warp of the CTA reached it in step from the CTA's last barrier
#: completion (the emulator ran each of their instructions since in one step for all its
#: threads) with no instruction of :data:`STIRS` between, so a CTA of W warps pays W - W // 2.
#: Measured: tests/data/trace/fencemerge (an H100: `fence.sc.cta` by 4 and 8 warps right after
#: a barrier 2 and 4; set a thousand cycles apart by arithmetic, 1 a warp; the 4-warp
#: `fence.proxy.async.shared::cta`'s MEMBAR.ALL.CTA 2 in f_pair and its 10 wgmma launches, 8
#: warps' 5, one above this). Warps that reach it apart, or after a memory-pipe instruction,
#: are counted 1 each, though the GPU merges some of those too as their timing allows (the
#: Hopper lab's A-from-registers probes, tma_tile_32: 9e)
TOGETHER = -1
#: the instructions of the LSU's memory pipe that make a CTA's next barrier completion cost
#: :data:`BARRIER_DONE`, reached by a warp with its lanes on or off: shared, global, local
#: and generic loads, stores, atomics and reductions, ldmatrix/stmatrix, cp.async and its
#: commit, shuffles, memory barriers and fences, cache control, the space query. Every other
#: instruction leaves it free: arithmetic, branches, barriers, constant loads (LDC), special
#: register reads, mbarrier operations (SYNCS), votes. Measured: tests/data/trace/barrules
#: (two barriers back to back, or an LDC, thread 0's branch, one mbarrier init between: 1;
#: an STS, LDG or shuffle between: 2), barriers, sregs, genatom, genatom2 (barriers with
#: arithmetic, B2R or a taken branch between: 1; an STS, LDS or STG: 2), miscops (an S2R
#: SR_CgaCtaId and any mbarrier arrival, wait or inval between: 1; a guarded-off STG: 2),
#: everyday's branch_zeros (a guarded-off STS: 2), fa2style (LDGDEPBAR). A read of
#: threadIdx.x stirs it too (:data:`STIRRING_READS`)
STIRS: frozenset[str] = frozenset(
    ("LDS", "STS", "LDSM", "STSM", "ATOMS", "LDG", "STG", "LD", "ST", "LDL", "STL", "ATOM")
    + ("ATOMG", "RED", "REDG", "LDGSTS", "LDGDEPBAR", "ARRIVES", "SHFL", "MEMBAR", "FENCE")
    + ("ERRBAR", "CGAERRBAR", "CCTL", "QSPC")
)
#: the special registers whose ``S2R`` makes a CTA's next barrier completion cost, as
#: :data:`STIRS` do: barriers' b_bar2 (and b_bar4, _alu, _clock, _shfl: 10 launches), whose
#: second barrier costs 1 a CTA with only an LDC.64, a ULDC.64 and an S2R SR_TID.X between,
#: where r_bar2_ldc's LDC and miscops' S2R SR_CgaCtaId cost none (the other special
#: registers' reads were not measured between barriers)
STIRRING_READS: frozenset[str] = frozenset({"SR_TID.X"})
#: op_misc wavefronts of a shared-memory instruction (LDS, STS, LDSM, STSM, ATOMS; LDGSTS
#: too, not measured) that a warp reaches with every lane's guard false: no request, no
#: ld/st wavefront, but this (a global or generic store or a global load as well: the rules
#: ``when_off`` below)
PREDICATED_OFF = 1
#: the special registers whose S2R costs 1 a warp
SPECIAL_READS: tuple[str, ...] = ("SR_TID.Y", "SR_TID.Z", "SR_LANEID", "SR_VIRTID")
SPECIAL_READS += ("SR_LTMASK", "SR_LEMASK", "SR_GEMASK", "SR_GTMASK", "SR_EQMASK")
#: the instructions that cost op_misc wavefronts; the first rule whose opcode and modifiers
#: match decides
MISC_RULES: tuple[MiscRule, ...] = (
    MiscRule("EXIT", frozenset(), 1),
    # every shuffle form (measured: SHFL.BFLY, tests/data/trace/fa2style and tree_reduce)
    MiscRule("SHFL", frozenset(), 1),
    # the generic atomic's fall-back to shared memory: its space query (QSPC), 1 a warp
    # execution (tests/data/trace/genatom: f32, half2, bf16x2, f64 adds through a generic
    # pointer to shared memory; the same to global memory, which succeeds first, none)
    MiscRule("QSPC", frozenset(), 1),
    MiscRule("MEMBAR", frozenset({"GPU"}), 2),
    MiscRule("MEMBAR", frozenset({"SYS"}), 2),  # taken as GPU scope's: not measured
    # the fence a -G build runs before each EXIT (MEMBAR.SC.VC; ERRBAR; CGAERRBAR): at least
    # 1 a warp, exactly 1 in 9 of the 13 -G launches of tests/data/trace/debug_builds
    MiscRule("MEMBAR", frozenset({"VC"}), 1),
    # a CTA-scope memory barrier (MEMBAR.SC.CTA, MEMBAR.ALL.CTA): 1 a warp execution
    # (tests/data/trace/barrules and miscops, one warp), 1 a pair of warps where every warp of
    # the CTA runs it together (:data:`TOGETHER`); and the async-proxy fence
    # (FENCE.VIEW.ASYNC.S, ptxas's before mbarrier inits and fence.proxy.async.shared::cta's
    # second instruction) 1, but none right after a GPU-scope memory barrier
    # (fence.proxy.async: 2 a warp in all; :func:`rules_of`)
    MiscRule("MEMBAR", frozenset({"CTA"}), 1, TOGETHER, pairs=True),
    MiscRule("FENCE", frozenset({"VIEW", "ASYNC", "S"}), 1),
    MiscRule("BAR", frozenset({"SYNC"}), 0, BARRIER_DONE),
    MiscRule("BAR", frozenset({"RED"}), 0, BARRIER_DONE),
    # wgmma.fence (WARPGROUP.ARRIVE): the warpgroup's warps meet there, and that completes
    # as a CTA barrier's does, 1 where the CTA was stirred since its last completion (which it
    # then is; tests/data/trace/fencemerge: the attention loop without its barrier 1 an
    # iteration above its shuffles, w_ss and w_rs 1 after the fence pair)
    MiscRule("WARPGROUP", frozenset({"ARRIVE"}), 0, BARRIER_DONE, arrive=True),
    # a global or generic store that a warp reaches with no lane on (measured: tests/data/
    # trace/warpops, the `if (x == NEVER) out[i] = x` that keeps a value, and globalops: 1 an
    # execution; the `@!P LDC` beside it costs none), as a shared-memory instruction's
    # (PREDICATED_OFF).
    MiscRule("STG", frozenset(), PREDICATED_OFF, when_off=True),
    MiscRule("ST", frozenset(), PREDICATED_OFF, when_off=True),
    # a global load reached so: 1 as well (tests/data/triton/masked36: Triton's masked loads
    # stay guarded, where ptxas branches around one from CUDA C; with this row 8 more of
    # ops36's launches, 3 of mma36's, ldmatrix_mma's 4 and transpose_100x70 are exact)
    MiscRule("LDG", frozenset(), PREDICATED_OFF, when_off=True),
    # reading one of these special registers (measured: tests/data/trace/sregs and barriers,
    # 1 a warp each; SR_TID.X, SR_CTAID.*, SR_VIRTUALSMID, SR_CgaCtaId, the clocks cost
    # none): what the transposes and tiled matmuls of the earlier labs read beyond the rule
    MiscRule("S2R", frozenset(), 1, special=frozenset(SPECIAL_READS)),
    # reading threadIdx.x again: a warp's first S2R SR_TID.X costs none (sregs: one read at
    # the start, 0), each later one 1 (Triton's dots and -G builds read it again, in loops
    # and after barriers: tests/data/triton/mma36 28 -> 43 of 43 launches exact, tutorial36b
    # 19 -> 28 of 40, ops36 76 -> 86 of 106; debug_builds' transpose_g 388 -> 676, cub_block_g
    # and virtual_call_g as the H200 counted, measured.json's warp_compact)
    MiscRule("S2R", frozenset(), 1, special=frozenset({"SR_TID.X"}), first_free=True),
)


def stirs_barrier(opcode: str, operands: Sequence[Operand] = ()) -> bool:
    """Whether a warp that reaches ``opcode`` (its lanes on or off, reading ``operands``)
    makes its CTA's next barrier completion cost :data:`BARRIER_DONE` (:data:`STIRS`, and a
    read of :data:`STIRRING_READS`)."""
    if opcode == "S2R":
        return any(isinstance(o, Special) and o.name in STIRRING_READS for o in operands)
    return opcode in STIRS


def rule_for(opcode: str, mods: Sequence[str], operands: Sequence[Operand] = ()) -> MiscRule | None:
    """The rule of :data:`MISC_RULES` that ``opcode.mods`` (reading ``operands``) costs by;
    None for an instruction that costs no op_misc wavefront. (A rule ``when_off`` counts only
    the warps that reach it with every lane's guard false.)"""
    have = set(mods)
    reads = {o.name for o in operands if isinstance(o, Special)}
    return next(
        (
            r
            for r in MISC_RULES
            if r.opcode == opcode and r.mods <= have and (not r.special or r.special & reads)
        ),
        None,
    )


def rules_of(instructions: Sequence[Instruction]) -> list[MiscRule | None]:
    """Each instruction's rule (:func:`rule_for`), in program order: an async-proxy fence
    right after a GPU-scope memory barrier (``fence.proxy.async``) costs none beside it."""
    out: list[MiscRule | None] = []
    for i, ins in enumerate(instructions):
        rule = rule_for(ins.opcode, ins.mods, ins.operands)
        if rule is not None and rule.opcode == "FENCE" and i and _covers(out[-1]):
            rule = None
        out.append(rule)
    return out


def _covers(before: MiscRule | None) -> bool:
    return before is not None and before.opcode == "MEMBAR" and before.per_warp >= 2
