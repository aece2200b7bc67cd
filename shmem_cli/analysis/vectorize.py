"""Would nvcc vectorize this access? The pattern it merges, and what the merged form costs.

nvcc merges the loads (or stores) of consecutive iterations of a loop into one wider
shared-memory instruction (``LDS.64``, ``LDS.128``) when it can see all of them at
once and prove the alignment: the loop has a constant trip count and is unrolled
(or the values are an explicit list), every lane's address advances by exactly one
element per iteration, and the first address of each group of iterations is aligned
to the wider size. tiled_matmul<16>/<32> of tests/data/trace/kernels/gemm.cu show
it: ``As[ty][j]`` over the unrolled ``j`` loop became ``LDS.128``; ``Bs[j][tx]``
(a row apart per iteration) stayed scalar.

:func:`vector_form` checks that pattern on the spec's addresses (not its index text),
so the answer is exact for the spec; whether nvcc really merges is its decision,
hence a lint warning (SH009). A param marked ``runtime: true`` in the index or in
the inner loop's range rules the pattern out: the compiler cannot see its value.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from ..hardware import ops
from ..hardware.engine import AccessKind
from ..model import Totals
from ..plumbing.frozen import frozen
from .cost import rows_stats, stats_totals

if TYPE_CHECKING:
    from ..spec.compile import AccessDecl, SpecFile
    from ..spec.layout import Layout
    from ..spec.space import Space

#: vector widths nvcc emits for shared memory, widest first
WIDTHS = (16, 8)
#: accesses larger than this many lane-accesses are not checked (the check reads them all)
MAX_LANE_ACCESSES = 1 << 22


@frozen
class VectorForm:
    """The merged instruction: its width, how many elements it covers, and its totals."""

    width: int
    factor: int
    loop: str
    totals: Totals


def uses_name(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


def depends_on_runtime(spec: SpecFile, access: AccessDecl, runtime: frozenset[str]) -> bool:
    """Whether the index, the predicate or the inner loop's range uses a run-time param."""
    if not runtime:
        return False
    texts = [loc.text for loc in access.index]
    if access.when is not None:
        texts.append(access.when.text)
    if any(uses_name(t, p) for t in texts for p in runtime):
        return True
    inner = access.loops[-1]
    if inner.bounds is None:
        return False
    for p in runtime:
        changed = dict(spec.params)
        changed[p] = changed.get(p, 0) + 1
        try:
            if inner.resolved(changed) != inner.resolved(spec.params):
                return True
        except Exception:  # a bound that faults for another value depends on it too
            return True
    return False


def consecutive_steps(space: Space) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(addresses, active) as (outer, count, requests-per-iteration, 32) and the element size,
    when every active lane moves by exactly one element per inner iteration; else None."""
    access = space.access
    if not access.loops or access.loops[-1].count < 2 or access.is_matrix:
        return None
    if space.lane_accesses > MAX_LANE_ACCESSES:
        return None
    esize = space.array.esize
    if not _steps_at_start(space, esize):
        return None
    batches = list(space.batches())
    addr = np.concatenate([b.addr for b in batches])
    active = np.concatenate([b.active for b in batches])
    count = access.loops[-1].count
    rows = addr.shape[0] // space.iterations
    addr = addr.reshape(-1, count, rows, addr.shape[-1])
    active = active.reshape(addr.shape)
    if not (active == active[:, :1]).all() or not active.any():
        return None
    step = np.diff(addr, axis=1)
    if not (step[active[:, 1:]] == esize).all():
        return None
    return addr, active, esize


def _steps_at_start(space: Space, esize: int) -> bool:
    """False when the first two inner iterations already break the rule of
    :func:`consecutive_steps` (most accesses do): then no other batch is computed."""
    space.check_size()  # (as space.batches() does first)
    first = space.batch(space.thread_env(), 0, 2)
    addr = first.addr.reshape(2, -1, first.addr.shape[-1])
    active = first.active.reshape(addr.shape)
    if not active.any():
        return True  # nothing to judge by here
    if not (active[0] == active[1]).all():
        return False
    return bool((addr[1][active[1]] - addr[0][active[1]] == esize).all())


def vector_form(
    spec: SpecFile, layout: Layout, access: AccessDecl, runtime: frozenset[str] = frozenset()
) -> VectorForm | None:
    """The wider instruction nvcc is likely to make of ``access``, or None."""
    from ..spec.space import Space

    op = ops.get(access.op)
    if op.matrix or op.atomic or not access.loops:
        return None
    access = access.with_params(layout.params)
    if access.loops[-1].count < 2 or depends_on_runtime(spec, access, runtime):
        return None
    space = Space(spec, layout, access)
    found = consecutive_steps(space)
    if found is None:
        return None
    addr, active, esize = found
    count = access.loops[-1].count
    for width in WIDTHS:
        factor = width // esize
        if width <= esize or width % esize or count % factor:
            continue
        first = addr[:, ::factor]
        on = active[:, ::factor]
        if not (first[on] % width == 0).all():
            continue
        flat_addr = first.reshape(-1, first.shape[-1])
        flat_on = on.reshape(flat_addr.shape)
        used = flat_on.any(axis=1)
        kind = AccessKind(op=access.op, size=width)
        stats = rows_stats(flat_addr[used], flat_on[used], kind, spec.arch)
        return VectorForm(width, factor, access.loops[-1].var, stats_totals(stats))
    return None
