"""An access repeats the very same request in every iteration of a loop.

Every lane has the same address in every iteration of the loop, and the same
lanes take part: the loop replays one request, and shmem counts it once per
iteration because the spec says so. The compiled kernel may not do that.
When nothing inside the loop forces the access to happen again (no store to
shared memory in between, no `__syncthreads()`, no `volatile`), nvcc treats
it as loop-invariant code and moves it out of the loop, so the hardware runs
it once. Measured on an H200 (tests/data/h200_probe3_*): 25 of the 29
looped probes with such an access ran it once, the other 4 once per
iteration; nvcc decides, not the spec.

Either the loop does not belong in the spec (drop it, or give it one
iteration), or the kernel has a barrier or a shared-memory store in the loop
that keeps the access there, and the count is right. Telling which needs the
kernel source, so this is a warning: the default `--fail-on error` does not
fail on it. With `--fail-on warning`, accept a checked case with a baseline
(`shmem lint ... --write-baseline FILE`, then `--baseline FILE`).
`shmem verify` will not reveal the difference: its kernels keep every access
in its loop.

The finding names every loop the access is invariant in. Those measurements
had one loop each; whether nvcc also hoists an access out of an outer loop
(it would have to unroll the inner ones) depends on the kernel. Invariance
is decided from the addresses, not from the index expressions: `i ^ i`,
`i/2` with `i` in `0..1`, `i & 8` with `i` in `0..4` and `i % 1` are all
invariant, and one lane whose address or activity changes in a single
iteration is enough to make an access variant. Not reported: atomics (every
read-modify-write counts, so the compiler keeps them; the one measured case
ran every iteration), an access that makes no request at all (that is
SH005), loops of one iteration, and an access of more than 2^24 (about 16
million) lane-accesses that agrees over its first two iterations: the exact
check is skipped there.
"""

from __future__ import annotations

from collections.abc import Iterator
from math import prod

from ..findings import Hit, Severity
from ._base import AccessCheck, plural

CODE = "SH006"
NAME = "loop-invariant-access"
SEVERITY = Severity.WARNING
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    r, space = item.result, item.space
    if space is None or r.requests == 0 or r.op == "atomic" or r.iterations < 2:
        return
    from ...invariance import invariant_loops

    loops = invariant_loops(space.spec, space.layout, space.access)
    if not loops:
        return
    factor = prod(lp.count for lp in loops)
    names = ", ".join(lp.var for lp in loops)
    where = "loop" if len(loops) == 1 else "loops"
    described = "; ".join(lp.describe() for lp in loops)
    once = r.wavefronts // factor
    message = (
        f"{r.name!r} makes the same request in every iteration of {where} {names} "
        f"({described}): the same lanes, the same addresses. nvcc may hoist it out of "
        f"{'that loop' if len(loops) == 1 else 'those loops'} and run it {factor}x less "
        f"often than counted here ({plural(r.wavefronts, 'wavefront')}; "
        f"{plural(once, 'wavefront')} if hoisted). Drop the "
        f"{where} from the spec unless the kernel keeps the access in "
        f"{'it' if len(loops) == 1 else 'them'} (a __syncthreads() or a shared-memory "
        f"store in between)"
    )
    yield Hit(
        message,
        (
            ("invariant_loops", names),
            ("iterations", r.iterations),
            ("requests", r.requests),
            ("wavefronts", r.wavefronts),
            ("requests_if_hoisted", r.requests // factor),
            ("wavefronts_if_hoisted", once),
        ),
    )
