"""What the H200 counts in Nsight Compute's ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc``
(the per-op table's ``misc`` row) and the remote atomics' own ``op_atom`` wavefronts: the
rule, in one place (docs/hardware-model.md, 9e; measured: tests/data/trace/miscops).

``op_misc`` counts no lane addresses: each warp execution of certain synchronising
instructions (mbarrier operations, fences, cluster barriers) costs a fixed number of
wavefronts, whatever its lanes, operands or memory. :func:`wavefronts` says how many for one
SASS instruction (None: it counts none).

A remote atomic (``atom``/``red.shared::cluster`` on another CTA, a generic ``ATOM.E``)
costs, besides its crossbar sectors (:mod:`.dsmem`), one ``op_atom`` wavefront per warp
execution per 4 bytes of operands a lane sends: 1 for a 32-bit add or reduction, 2 for a
64-bit add or a 32-bit compare-and-swap, 4 for a 64-bit compare-and-swap
(:func:`remote_atom_wavefronts`; tests/data/trace/dsmrule and cluster).
"""

from __future__ import annotations

from collections.abc import Sequence

#: per warp execution: (opcode, modifiers that must all be present) -> op_misc wavefronts;
#: the first entry whose opcode and modifiers match decides (more specific entries first)
MISC_RULES: tuple[tuple[str, frozenset[str], int], ...] = ()


def wavefronts(opcode: str, mods: Sequence[str]) -> int | None:
    """The ``op_misc`` wavefronts one warp execution of ``opcode.mods`` costs; None for an
    instruction that counts none."""
    have = set(mods)
    for name, needed, cost in MISC_RULES:
        if name == opcode and needed <= have:
            return cost
    return None


def remote_atom_wavefronts(opcode: str, mods: Sequence[str]) -> int:
    """The ``op_atom`` wavefronts of one warp execution of a remote (distributed shared
    memory) atomic or reduction: a lane's operand bytes over 4 (a compare-and-swap sends
    two operands)."""
    width = 8 if "64" in mods else 16 if "128" in mods else 4
    operands = 2 if "CAS" in mods else 1
    return width * operands // 4
