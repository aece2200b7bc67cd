"""A load repeats the very same request in every iteration of a loop that cannot keep it there.

Every lane has the same address in every iteration of the loop, and the same
lanes take part: the loop replays one request, and shmem counts it once per
iteration because the spec says so. The compiled kernel may not do that.
When nothing inside the loop forces the load to happen again (no
`__syncthreads()`, no store to the array, no `volatile`), nvcc treats it as
loop-invariant code and moves it out of the loop, so the hardware runs it
once. Measured on an H200 (tests/data/h200_probe3_*): of the 18 looped probes
with such a load, 17 ran it once, one once per iteration; nvcc decides, not
the spec.

What keeps an access in its loop, and so is never reported:

* a loop marked `barrier: true` (`loop: {t: {values: "0..3", barrier: true}}`):
  the kernel's loop holds a `__syncthreads()`, and no shared-memory access
  moves across a barrier. One access marking a loop variable marks the loop of
  that name in every access of the spec;
* a load whose array is also written (a store, an atomic or stmatrix access)
  in a loop of the same name in this spec: the value may change between
  iterations;
* stores, atomics and stmatrix: a store is hoisted or merged only when the
  value stored is loop-invariant too, which a spec cannot know (8 of the 10
  invariant store probes stored an invariant value and were stored once;
  real kernels store what the loop computes);
* a spec with a `kernel:` block: the compiled code decides, and the
  compiled-code rules (SH007, SH008) report a count that differs.

Either the loop does not belong in the spec (drop it, or give it one
iteration), or the kernel has a barrier or a store in the loop that keeps the
access there: say so with `barrier: true`, or attach the kernel (`kernel:`).
This is a warning: the default `--fail-on error` does not fail on it.
`shmem verify` will not reveal the difference: its kernels keep every access
in its loop.

The finding names every loop the access is invariant in. Invariance is
decided from the addresses, not from the index expressions: `i ^ i`, `i/2`
with `i` in `0..1`, `i & 8` with `i` in `0..4` and `i % 1` are all
invariant, and one lane whose address or activity changes in a single
iteration is enough to make an access variant. Also not reported: an access
that makes no request at all (that is SH005), loops of one iteration, and an
access of more than 2^24 (about 16 million) lane-accesses that agrees over
its first two iterations: the exact check is skipped there.
"""

from __future__ import annotations

from collections.abc import Iterator
from math import prod

from ...analysis.invariance import writes
from ...checks.report import Severity
from ._base import AccessCheck, Hit, plural

CODE = "SH006"
NAME = "loop-invariant-access"
SEVERITY = Severity.WARNING
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    r, space = item.result, item.space
    if space is None or r.cost.requests == 0 or writes(r.cost.op) or r.cost.iterations < 2:
        return
    if item.kernel_traced:  # the compiled code decides (SH007/SH008)
        return
    from ...analysis.invariance import hoistable_loops

    loops = hoistable_loops(space.spec, space.layout, space.access)
    if not loops:
        return
    factor = prod(lp.count for lp in loops)
    names = ", ".join(lp.var for lp in loops)
    where = "loop" if len(loops) == 1 else "loops"
    described = "; ".join(lp.describe() for lp in loops)
    once = r.cost.wavefronts // factor
    message = (
        f"{r.site.name!r} makes the same request in every iteration of {where} {names} "
        f"({described}): the same lanes, the same addresses. nvcc may hoist it out of "
        f"{'that loop' if len(loops) == 1 else 'those loops'} and run it {factor}x less "
        f"often than counted here ({plural(r.cost.wavefronts, 'wavefront')}; "
        f"{plural(once, 'wavefront')} if hoisted). Drop the "
        f"{where} from the spec unless the kernel keeps the access in "
        f"{'it' if len(loops) == 1 else 'them'}: a __syncthreads() in the loop "
        f"(say barrier: true) or a store to {space.access.array} in it (describe the store)"
    )
    yield Hit(
        message,
        (
            ("invariant_loops", names),
            ("iterations", r.cost.iterations),
            ("requests", r.cost.requests),
            ("wavefronts", r.cost.wavefronts),
            ("requests_if_hoisted", r.cost.requests // factor),
            ("wavefronts_if_hoisted", once),
        ),
    )
