"""What the H200 counts in Nsight Compute's ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc``
(the per-op table's ``misc`` row): the rule, in one place (docs/hardware-model.md, 9e;
measured: tests/data/trace/miscops).

``op_misc`` counts no lane addresses: a warp's end costs 1 wavefront, a CTA barrier's
completion 1 for the CTA, a GPU-scope memory barrier 2 a warp, a shared-memory instruction a
warp reaches with no lane on 1 (:data:`PREDICATED_OFF`); mbarrier operations, the
cluster barrier's own instructions, ``elect`` and the async-proxy fence cost none.
:func:`wavefronts` says what one warp execution of an instruction costs (None: it is none of
these), :func:`barrier_wavefronts` what each completion of a barrier does. CTA-scope memory
barriers, shared values a warp waits on and cp.async's waits add more on the GPU, by amounts
that vary with timing: not counted here. (The remote atomics' ``op_atom`` wavefronts:
:mod:`.dsmem`.)
"""

from __future__ import annotations

from collections.abc import Sequence

#: op_misc wavefronts of one CTA barrier's completion (BAR.SYNC, BAR.RED: all its warps)
BARRIER_DONE = 1
#: (opcode, modifiers that must all be present, op_misc wavefronts per warp execution, per
#: completion of the CTA barrier it waits at); the first entry whose opcode and modifiers
#: match decides. ``BAR.SYNC`` costs nothing per warp but :data:`BARRIER_DONE` a CTA each
#: time the barrier completes.
MISC_RULES: tuple[tuple[str, frozenset[str], int, int], ...] = (
    ("EXIT", frozenset(), 1, 0),
    ("MEMBAR", frozenset({"GPU"}), 2, 0),
    ("MEMBAR", frozenset({"SYS"}), 2, 0),  # taken as GPU scope's: not measured
    ("BAR", frozenset({"SYNC"}), 0, BARRIER_DONE),
    ("BAR", frozenset({"RED"}), 0, BARRIER_DONE),
)
#: op_misc wavefronts of a shared-memory instruction (LDS, STS, LDSM, STSM, ATOMS; LDGSTS
#: too, not measured) that a warp reaches with every lane's guard false: no request, no
#: ld/st wavefront, but this
PREDICATED_OFF = 1


def _rule(opcode: str, mods: Sequence[str]) -> tuple[str, frozenset[str], int, int] | None:
    """The first entry of :data:`MISC_RULES` that ``opcode.mods`` matches, if any."""
    have = set(mods)
    for rule in MISC_RULES:
        if rule[0] == opcode and rule[1] <= have:
            return rule
    return None


def wavefronts(opcode: str, mods: Sequence[str]) -> int | None:
    """The ``op_misc`` wavefronts one warp execution of ``opcode.mods`` costs (a CTA barrier:
    0, :func:`barrier_wavefronts` says its completions'); None for an instruction that no
    rule names."""
    rule = _rule(opcode, mods)
    return None if rule is None else rule[2]


def barrier_wavefronts(opcode: str, mods: Sequence[str]) -> int:
    """The ``op_misc`` wavefronts each completion of a CTA barrier at ``opcode.mods`` costs
    (0 for any other instruction)."""
    rule = _rule(opcode, mods)
    return 0 if rule is None else rule[3]
