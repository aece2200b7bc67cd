"""An access differs from what the compiled kernel does at its source line.

With a `kernel:` block (the kernel's `.cu` or `.cubin`, its name, grid and
arguments) and a `line:` on the access, `shmem lint` compiles the kernel
(`nvcc -cubin -lineinfo -O3`), traces it with the emulator of `shmem trace`
for the spec's block and compares every access with the shared-memory
instructions at its line: the op, the bytes per lane, the requests and the
wavefronts (the spec's numbers times the blocks traced). A difference means
the spec describes the source but not the code that runs, so every figure it
gives is wrong: this is an error.

The message has both sets of numbers and the fix, by case:

* vectorized: nvcc merged consecutive elements into one wider instruction
  (`As[ty][k]` in an unrolled loop became `LDS.128`): declare a `float4`
  (`float2`, `int4`, ...) view of the array at the same offset and index it
  so that each lane moves 16 (8) bytes, with 4x (2x) fewer iterations;
* split: the compiled code moves fewer bytes per lane (an address nvcc cannot
  prove aligned);
* fewer requests: the access was hoisted out of a loop, or the loop was
  unrolled and a loaded value reused; more requests: the loop runs more often
  than the spec says. Make the loop ranges match;
* same requests, other wavefronts: the compiled addresses differ from the
  spec's index or layout (pad, swizzle, offset);
* another op at the line: correct the op or the line.

Several accesses may share a line (`acc += As[ty][k] * Bs[k][tx]`); the
instructions of one op and width there are matched to the accesses whose
totals they equal. An access whose line has no shared-memory instruction at
all, and instructions no access describes, are compiled-coverage (SH008).
With a traced kernel, loop-invariant-access (SH006) is not run: the compiled
code shows what nvcc hoisted.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...checks.report import Severity
from ..compiled_compare import WRONG
from ._base import AccessCheck, Hit

CODE = "SH007"
NAME = "compiled-mismatch"
SEVERITY = Severity.ERROR
SCOPE = "access"


def check(item: AccessCheck) -> Iterator[Hit]:
    v, r = item.compiled, item.result
    if v is None or v.status != WRONG:
        return
    spec_side = (
        f"{r.cost.op} {r.cost.width} B per lane, {v.requests} requests, {v.wavefronts} wavefronts"
    )
    compiled = "; ".join(g.describe() for g in v.groups) or "nothing left"
    message = (
        f"{r.site.name!r} at {v.where}: the spec says {spec_side}; the compiled kernel has "
        f"{compiled}. {v.fix[0].upper()}{v.fix[1:]}"
    )
    facts: list[tuple[str, int | str]] = [
        ("source_line", v.where),
        ("spec_bytes_per_lane", r.cost.width),
        ("spec_requests", v.requests),
        ("spec_wavefronts", v.wavefronts),
    ]
    if v.groups:
        facts += [
            ("compiled_sass", "/".join(dict.fromkeys(o for g in v.groups for o in g.opcodes))),
            ("compiled_bytes_per_lane", v.groups[0].width),
            ("compiled_requests", sum(g.requests for g in v.groups)),
            ("compiled_wavefronts", sum(g.wavefronts for g in v.groups)),
        ]
    yield Hit(message, tuple(facts))
