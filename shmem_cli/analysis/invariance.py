"""Loop invariance: does an access touch the same words in every iteration of a loop?

An access is *invariant* with respect to a loop variable ``i`` when changing
``i`` alone (every other loop variable held fixed) changes nothing the
hardware sees: every lane of every warp has the same address, and the same
lanes run the instruction. This is decided from the addresses themselves, not
from the index expressions, so ``i ^ i``, ``i / 2`` with ``i`` in ``0..1`` and
``i & 8`` with ``i`` in ``0..4`` all count as invariant.

What is compared, per (warp, lane): the byte address where the lane is active,
and "inactive" otherwise (an inactive lane's address does not matter). For
``ldmatrix``/``stmatrix`` only the address lanes (``lane < 8 * matrices``)
count: the iteration space marks only those active.

The check is exact over the whole loop range. For each loop variable with more
than one value, the loops are reordered so that it is innermost (the iteration
space is a box: no loop range depends on another loop), and every iteration is
compared with the one where that variable takes its first value. The first two
iterations are compared before anything else, so an access that changes from
one iteration to the next (the usual case) costs two iterations' worth of
address arithmetic. Only an access that passes that test is streamed in full,
and only up to :data:`MAX_CHECKED_LANE_ACCESSES` lane-accesses; above that the
loop is not reported invariant (the check is skipped, never guessed).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..hardware import ops
from ..spec.compile import AccessDecl, Loop, SpecFile
from ..spec.layout import Layout
from ..spec.space import Batch, Space

if TYPE_CHECKING:
    import numpy.typing as npt

#: Above this many lane-accesses (iterations x threads) an access that looks invariant
#: over its first two iterations is not checked further (about 16 million).
MAX_CHECKED_LANE_ACCESSES = 1 << 24


def writes(op: str) -> bool:
    """Whether every execution of ``op`` has an effect a spec cannot see through (a store, an
    atomic): never hoisted."""
    return ops.get(op).verb != "reads"


def kept_in_loop(spec: SpecFile, access: AccessDecl) -> frozenset[str]:
    """Loop variables of ``access`` whose loop keeps it there: a loop marked ``barrier:
    true`` (it holds a __syncthreads()), or one in which the spec stores to its array
    (an access that writes the array with a loop variable of the same name)."""
    kept = {lp.var for lp in access.loops if lp.barrier}
    for other in spec.accesses:
        if writes(other.op) and other.array == access.array:
            kept |= {lp.var for lp in other.loops}
    return frozenset(kept)


def hoistable_loops(spec: SpecFile, layout: Layout, access: AccessDecl) -> tuple[Loop, ...]:
    """The invariant loops of a load that nothing in the spec keeps it in (SH006's test)."""
    if writes(access.op):
        return ()
    kept = kept_in_loop(spec, access)
    if all(lp.var in kept for lp in access.loops if lp.count > 1):
        return ()
    return tuple(lp for lp in invariant_loops(spec, layout, access) if lp.var not in kept)


def invariant_loops(
    spec: SpecFile,
    layout: Layout,
    access: AccessDecl,
    *,
    limit: int = MAX_CHECKED_LANE_ACCESSES,
) -> tuple[Loop, ...]:
    """The loops (with more than one iteration) in which ``access`` is the same every time.

    In spec order. Empty when the access has no such loop, and also for a loop
    that passes the two-iteration test on an access of more than ``limit``
    lane-accesses (see the module docstring). An empty loop is never reported.
    """
    loops = access.with_params(layout.params).loops
    if any(lp.count == 0 for lp in loops):
        return ()
    found = []
    for k, loop in enumerate(loops):
        if loop.count < 2:
            continue
        inner_last = (*loops[:k], *loops[k + 1 :], loop)
        space = Space(spec, layout, replace(access, loops=inner_last))
        if _invariant_innermost(space, limit):
            found.append(loop)
    return tuple(found)


def _invariant_innermost(space: Space, limit: int) -> bool:
    """Whether the innermost loop of ``space`` leaves every request unchanged."""
    count = space.access.loops[-1].count
    first_two = space.batch(space.thread_env(), 0, 2)
    key = _lane_keys(space, first_two)
    if not np.array_equal(key[0], key[1]):
        return False
    if count == 2 and len(space.access.loops) == 1:
        return True
    if space.lane_accesses > limit:
        return False
    # Each run of ``count`` iterations (the innermost loop from its first value to its
    # last) must repeat its first row. A run may start in an earlier chunk: ``carried``
    # keeps the first row of the run that is still open at the end of a chunk.
    carried: npt.NDArray[np.int64] | None = None
    for batch in space.batches():
        key = _lane_keys(space, batch)
        flat = np.arange(batch.first_iteration, batch.first_iteration + batch.iterations)
        ref = flat - flat % count - batch.first_iteration  # row of the run's first iteration
        here = ref >= 0
        if not here.all() and (carried is None or not (key[~here] == carried).all()):
            return False
        if not (key[here] == key[ref[here]]).all():
            return False
        carried = key[ref[-1]] if ref[-1] >= 0 else carried
    return True


def _lane_keys(space: Space, batch: Batch) -> npt.NDArray[np.int64]:
    """One row per iteration: each lane's address where it takes part, -1 where it does not."""
    keys: npt.NDArray[np.int64] = np.where(batch.active, batch.addr, -1)
    return keys.reshape(batch.iterations, -1)
