"""The spec and its compiled kernel do not cover each other.

With a `kernel:` block, `shmem lint` traces the compiled kernel (see
compiled-mismatch, SH007) and reports:

* every shared-memory instruction group (one op and width at one source
  line) that no access describes, with its SASS, requests and wavefronts:
  add an access with that `line:`, or correct the `line:` of the access
  meant to describe it; where accesses of that op at that line match part
  of its instructions (one copy of an unrolled loop), the rest is said at
  the first of them as the loop the spec leaves out: make its loop ranges
  match the compiled trip counts;
* every access whose line has no shared-memory instruction at all in the
  compiled code: nvcc removed it (the value stays in a register, or the
  access was merged into another line's instruction), or the `line:` is
  wrong;
* a kernel that could not be traced, once per spec, with the reason: no
  `nvcc` for a `.cu` source (install the CUDA toolkit, point `kernel.source`
  at a `.cubin` built with `-lineinfo`, or run `shmem lint --no-compile`,
  which skips the compiled-code checks of `.cu` kernels), no `nvdisasm`
  (`pip install 'shmem[cuda]'`), a failed compile, an unknown kernel name, an
  argument the kernel does not have (by name or position) or a value that does
  not fit its parameter's type, or an instruction the emulator cannot run. A
  `kernel.args`, `kernel.const` or `kernel.memory` value that no kernel could
  take (not a number, `1e400`, `zeros:-5`) is the spec's error instead
  (invalid-spec, SH100), found before any trace.

Accesses without `line:` are not compared. A spec that describes only part
of a kernel (its hot loop) can accept the rest with a baseline
(`--write-baseline`) or `--ignore SH008`. This is a warning: the default
`--fail-on error` does not fail on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...checks.report import Severity
from ...plumbing.errors import shorten
from ..compiled_compare import NO_INSTRUCTION, Comparison
from ..kernel_trace import KernelUnavailable
from ._base import FileCheck, Hit

if TYPE_CHECKING:
    from ...spec.compile import AccessDecl

CODE = "SH008"
NAME = "compiled-coverage"
SEVERITY = Severity.WARNING
SCOPE = "file"


def check(item: FileCheck) -> Iterator[Hit]:
    spec, compiled = item.spec, item.compiled
    if spec is None or spec.kernel is None or compiled is None:
        return
    kpos = spec.kernel.pos
    kline, kcol = (kpos.line, kpos.column) if kpos else (None, None)
    if isinstance(compiled, KernelUnavailable):
        at = compiled.pos or kpos  # the argument or constant the reason names, else kernel:
        yield Hit(
            f"kernel {shorten(spec.kernel.name or spec.kernel.source)!r} was not traced, so the "
            f"accesses were not checked against the compiled code: {compiled.reason}",
            (("kernel_source", spec.kernel.source),),
            at.line if at else None,
            at.column if at else None,
        )
        return
    assert isinstance(compiled, Comparison)
    for decl, verdict in zip(spec.accesses, compiled.verdicts, strict=True):
        if verdict is None or verdict.status != NO_INSTRUCTION:
            continue
        pos = decl.line.pos if decl.line is not None and decl.line.pos else decl.pos
        yield Hit(
            f"{decl.name!r} at {verdict.where}: {verdict.fix}",
            (("source_line", verdict.where), ("spec_requests", verdict.requests)),
            pos.line if pos else None,
            pos.column if pos else None,
            access=decl.name,
        )
    # the accesses of each (line, op): an unrolled loop's copies past what they account for
    # are the loop the spec left out, not an access to add (said at the first such access)
    named: dict[tuple[str, str], list[AccessDecl]] = {}
    for decl, verdict in zip(spec.accesses, compiled.verdicts, strict=True):
        if verdict is not None and verdict.status != NO_INSTRUCTION:
            named.setdefault((verdict.where, decl.op), []).append(decl)
    for g in compiled.undescribed:
        beside = named.get((g.where, g.op))
        line, col = kline, kcol
        if beside:
            names = ", ".join(repr(d.name) for d in beside)
            said = (
                f"the compiled kernel {compiled.kernel} has {g.op} {g.describe()} at {g.where} "
                f"besides what {names} there account(s) for: it runs that line more often "
                "than the spec says (copies of an unrolled loop, or a loop the spec leaves "
                "out): make the spec's loop ranges match the compiled trip counts, or "
                f"describe the rest with another access at line: {g.line}"
            )
            first = beside[0]
            pos = first.line.pos if first.line is not None and first.line.pos else first.pos
            if pos is not None:
                line, col = pos.line, pos.column
        else:
            said = (
                f"the compiled kernel {compiled.kernel} has {g.op} {g.describe()} at {g.where} "
                f"that no access describes: add an access with line: {g.line} (or correct the "
                f"line: of the access meant for it)"
            )
        yield Hit(
            said,
            (
                ("source_line", g.where),
                ("compiled_sass", "/".join(g.opcodes)),
                ("compiled_bytes_per_lane", g.width),
                ("compiled_requests", g.requests),
                ("compiled_wavefronts", g.wavefronts),
            ),
            line,
            col,
        )
