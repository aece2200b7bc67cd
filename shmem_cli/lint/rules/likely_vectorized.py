"""nvcc is likely to merge this access's iterations into one wider instruction.

The access reads (or writes) consecutive elements over its innermost loop:
every lane's address advances by exactly one element per iteration, the loop
has a constant trip count that is a multiple of the merged width, and the
first address of each group is aligned to 8 or 16 bytes. Over an unrolled
loop (`#pragma unroll`, or a constant trip count nvcc unrolls by itself)
nvcc then emits one `LDS.64`/`LDS.128` (`STS.64`/`STS.128`) per group
instead of 2 or 4 scalar instructions, and the costs change: fewer requests,
and a 16-byte access is served in quarter-warp phases, so its wavefronts
per request differ. tiled_matmul<16> and <32> (tests/data/trace) show it:
`As[ty][j]` over the unrolled `j` loop became `LDS.128`; `Bs[j][tx]`, a row
apart per iteration, stayed scalar.

The finding shows the scalar cost the spec counts beside the cost of the
vector form (requests and wavefronts), the way loop-invariant-access (SH006)
shows the hoisted cost. What to do:

* attach the kernel (`kernel:` and `line:`): the compiled code decides, and
  compiled-mismatch (SH007) reports a real difference; this rule is then not
  run;
* if the kernel does vectorize, describe the vector form: a `float4` (or
  `float2`, `int4` ...) view of the array at the same offset, with the loop
  stepping over vectors;
* if it cannot (the trip count or a stride is known only at run time), mark
  that param `runtime: true` (`params: {K: {value: 64, runtime: true}}`); an
  access whose index or inner loop range uses such a param is not reported.

A warning: whether nvcc merges is its decision (it also needs the loop
unrolled and no aliasing store in between), so the default `--fail-on
error` does not fail on it. Only loads and stores are checked (ldmatrix and
atomics are never merged), and accesses of more than 2^22 lane-accesses are
skipped.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...checks.report import Severity
from ...hardware import ops
from ._base import AccessCheck, Hit, plural

CODE = "SH009"
NAME = "likely-vectorized"
SEVERITY = Severity.WARNING
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    r, space = item.result, item.space
    if space is None or item.kernel_traced or r.cost.requests == 0:
        return
    from ...analysis.vectorize import vector_form

    form = vector_form(space.spec, space.layout, space.access, space.spec.runtime_params)
    if form is None:
        return
    op = ops.get(r.cost.op)
    verb = op.verb
    sass = f"{op.sass[0]}.{form.width * 8}"
    message = (
        f"{r.site.name!r} {verb} consecutive {r.cost.width}-byte elements over loop {form.loop}, "
        f"aligned to {form.width} bytes: nvcc is likely to merge {form.factor} iterations "
        f"into one {sass} ({form.width} bytes per lane). Counted here as scalar: "
        f"{plural(r.cost.requests, 'request')}, {plural(r.cost.wavefronts, 'wavefront')}; "
        f"as {sass}: {plural(form.totals.requests, 'request')}, "
        f"{plural(form.totals.wavefronts, 'wavefront')}. "
        f"Attach the kernel (kernel:, line:) to let the compiled code decide, describe the "
        f"vector form, or mark a param runtime: true if the compiler cannot know it"
    )
    yield Hit(
        message,
        (
            ("loop", form.loop),
            ("vector_bytes_per_lane", form.width),
            ("requests", r.cost.requests),
            ("wavefronts", r.cost.wavefronts),
            ("vector_requests", form.totals.requests),
            ("vector_wavefronts", form.totals.wavefronts),
        ),
    )
