"""A warp vote's predicate in every candidate block (:class:`.forms.Forms`).

``VOTE.ANY P1, P0`` and ``VOTE.ALL`` (``VOTEU`` into a uniform predicate) combine a predicate
over the threads of a warp that run it: in candidate block ``b`` a warp's result is the OR
(the AND) of its threads' values of the predicate there. Where each thread's predicate has
a form (its value per block, or one value in every block), so has the result: one vector per
warp. The shadow cannot evaluate a vote (its lanes are blocks, not a warp's threads), so it
is evaluated here. CUTLASS 3.x's cooperative GEMMs in clusters vote on a flag made from the
CTA's place in the grid (``VOTEU.ANY UP0, P0``) and guard values on the result.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Reg
from .vectors import Unknown, Vectors

MODES = ("ANY", "ALL")


def operands(ins: Instruction) -> tuple[str, Reg, Reg] | None:
    """(the mode, the predicate written, the predicate read) of a vote into a predicate;
    None for any other form (a ballot into a register, a vote into PT)."""
    ops = ins.operands
    mode = next((m for m in ins.mods if m in MODES), None)
    dest, src = (ops[0], ops[1]) if len(ops) == 2 else (None, None)
    if mode is None or not isinstance(dest, Reg) or not isinstance(src, Reg) or dest.is_true:
        return None
    return mode, dest, src


def vote(vec: Vectors, mode: str, negated: bool, k: Any, vids: Any, warps: Any) -> Any:
    """(per warp of the threads, the id of its result's vector; each thread's warp among
    them), or None where a vector cannot be evaluated or kept. ``k``: each thread's value
    where ``vids`` is -1 (the predicate free of the block index), ``vids`` each thread's
    value vector; ``warps`` each thread's warp."""
    every = mode == "ALL"
    order, group = np.unique(warps, return_inverse=True)
    n = vec.n
    values = [np.full(n, every, dtype=bool) for _ in order]
    for g in range(len(order)):
        mine = group == g
        fixed = np.asarray(k)[mine & (np.asarray(vids) < 0)].astype(bool) ^ negated
        if len(fixed) and (not fixed.all() if every else fixed.any()):
            values[g][:] = not every  # a thread decides the warp in every block
    wanted = sorted({int(v) for v in np.unique(vids) if v >= 0})
    try:
        for lo, hi, got in vec.windows(wanted):
            for g in range(len(order)):
                for v in np.unique(np.asarray(vids)[group == g]):
                    if v < 0:
                        continue
                    part = np.asarray(got[int(v)], dtype=bool) ^ negated
                    if every:
                        values[g][lo:hi] &= part
                    else:
                        values[g][lo:hi] |= part
    except Unknown:
        return None
    made = [vec.intern(v) for v in values]
    if min(made) < 0:
        return None
    return made, group.reshape(-1)
