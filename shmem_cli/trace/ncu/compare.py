"""``shmem trace --compare NCU.csv``: the trace lined up with Nsight Compute's source counters.

Nsight Compute's per-instruction export (``ncu --section SourceCounters ...``, then ``ncu
-i REPORT --page source --csv --print-source sass``) has one table per profiled launch: a
``"Kernel Name",NAME`` line, a header row (``Address``, ``Source``, ..., ``Instructions
Executed``, ``L1 Wavefronts Shared``, ``L1 Wavefronts Shared Ideal``) and one row per SASS
instruction at its absolute address. The offset in the function (the address less the
table's first) is the trace's ``pc``.

First the binary: every instruction of the table must be the cubin's instruction at the same
offset (the SASS text, ``.reuse`` flags aside). If not, the CSV was measured on a different
binary (another compile, another Triton entry, other options) and nothing is compared.
Then each shared-memory instruction: executions (warp-level, predicated-off ones included),
wavefronts and ideal side by side, and a verdict. The traced ideal is the source page's
(``hardware.engine.source_ideal``: a plain load's or store's active bytes in 128-byte
wavefronts, at most its source-view wavefronts), which differs from shmem's own ideal only on
some pair-merged loads (docs/hardware-model.md 8):

* ``match``: all three equal;
* ``cp.async``: an ``LDGSTS`` whose executions agree and whose source-view wavefronts do not:
  Nsight Compute's source view counts cp.async by another counter than the raw per-op
  wavefronts shmem's rule is exact to (measured: tests/data/triton); not a disagreement;
* ``pair merge``: an 8- or 16-byte load whose lanes pair up and whose source-view wavefronts
  are the engine's per-op figure plus what the source counters count otherwise (a merged
  phase asking a bank for two words counted unmerged, an LDS.128's half-warp 0 too when
  lane 31 is on and its lanes come in full pairs at no distance the lanes pair up at, a
  one-address LDS.128 counted packed:
  :func:`shmem_cli.hardware.pairs.source_extra`, docs/hardware-model.md 3 and 10);
  executions and ideal agree; not a disagreement;
* ``arbitration``: same executions and ideal, more wavefronts on the GPU: bank arbitration or
  timing between warps (the l1tex arbitration counter), not a different address pattern;
* ``addresses``: same executions, another ideal or fewer wavefronts: other addresses than
  traced (other arguments, other data);
* ``launch``: other executions: another grid, other arguments or data-dependent control flow;
* ``sample``: other executions where the trace counted a sample of the grid's blocks (a grid
  past the budget or the time limit) and Nsight Compute every block: the cause is the
  sample, not the launch (a disagreement all the same: nothing is confirmed).

Any verdict but ``match``, ``cp.async`` and ``pair merge``, and a different binary, is a
disagreement (``shmem trace`` exits 1, as ``shmem verify`` does on a mismatch).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ...hardware.ops import ARBITRATION_COUNTER, SHARED_OPCODES, op_of_opcode
from ...plumbing.errors import ShmemError, shorten
from ...plumbing.frozen import frozen
from ..result import KernelTrace, TraceResult
from .exports import (
    EXECUTED,
    IDEAL,
    MAX_CSV_BYTES,
    WAVEFRONTS,
    NcuLaunch,
    NcuTable,
    read_ncu_csv,
    read_ncu_export,
)
from .names import matcher
from .ops import OpCompare, op_rows, pick_launch

__all__ = [
    "MAX_CSV_BYTES",
    "KernelCompare",
    "NcuTable",
    "compare_file",
    "compare_kernel",
    "compare_ops",
    "read_ncu_csv",
]
AGREEING = ("match", "cp.async", "pair merge")
VERDICTS = {
    "match": "executions, wavefronts and ideal agree",
    "cp.async": "Nsight Compute's source view counts cp.async (LDGSTS) by another counter than "
    "the per-op wavefronts shmem is exact to; executions agree",
    "pair merge": "an 8- or 16-byte load whose lanes pair up: Nsight Compute's source view "
    "counts a merged phase asking a bank for two words unmerged (and a one-address 16-byte "
    "load packed), shmem's per-op wavefronts plus that difference agree",
    "arbitration": "more wavefronts on the GPU with the same ideal: bank arbitration or timing "
    "between warps, not the addresses",
    "addresses": "other addresses than traced (another ideal, or fewer wavefronts): other "
    "arguments or data",
    "launch": "other executions: another grid, other arguments, or data-dependent control flow",
    "sample": "other executions: the trace counted a sample of the grid's blocks, Nsight "
    "Compute every block",
}


@frozen
class InstructionCompare:
    pc: int
    sass: str
    file: str | None
    line: int | None
    measured: tuple[int | None, int | None, int | None]  # executions, wavefronts, ideal
    traced: tuple[int, int, int]
    verdict: str

    def to_json(self) -> dict[str, Any]:
        keys = ("executions", "wavefronts", "ideal_wavefronts")
        return {
            "pc": self.pc,
            "sass": self.sass,
            "file": self.file,
            "line": self.line,
            "ncu": dict(zip(keys, self.measured, strict=True)),
            "shmem": dict(zip(keys, self.traced, strict=True)),
            "verdict": self.verdict,
        }


@frozen
class KernelCompare:
    """The verdict for one traced kernel against one table of the CSV."""

    csv: str
    kernel: str
    table: int  # 1-based among the CSV's tables of this kernel
    tables: int
    binary_differs: tuple[tuple[int, str, str], ...]  # (pc, in the CSV, in the cubin)
    instructions: tuple[InstructionCompare, ...]
    # a raw-page CSV: the launch's per-op counters beside shmem's totals (ncu.ops)
    ops: tuple[OpCompare, ...] = ()
    arbitration: int | None = None  # the raw page's bank-arbitration counter, where given
    page: str = "source"  # the CSV's page: "source" (per instruction) or "raw" (per launch)
    # the trace counted a sample of the grid's blocks: "983 of the 4,096 blocks"
    sample: str | None = None

    @property
    def agrees(self) -> bool:
        if self.binary_differs:
            return False
        return all(i.verdict in AGREEING for i in self.instructions) and all(
            o.agrees for o in self.ops
        )

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for i in self.instructions:
            out[i.verdict] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "csv": self.csv,
            "kernel": self.kernel,
            "table": self.table,
            "tables": self.tables,
            "page": self.page,
            "agrees": self.agrees,
            "sample": self.sample,
            "different_binary": bool(self.binary_differs),
            "binary_differences": [
                {"pc": pc, "ncu": a, "cubin": b} for pc, a, b in self.binary_differs
            ],
            "verdicts": self.counts(),
            "instructions": [i.to_json() for i in self.instructions],
            "ops": [o.to_json() for o in self.ops],
        }


_TARGET = re.compile(r"^(?:0x[0-9a-fA-F]{6,}|`\(.*\))$")
_LABEL = re.compile(r" `\(")


def normal_sass(text: str) -> str:
    """SASS text without layout, ``.reuse`` flags (ncu prints none) and a trailing
    annotation such as ``(*"SpillRefill"*)``, which the cubin's side drops too."""
    plain = " ".join(text.replace(".reuse", "").split()).rstrip(" ;")
    start = plain.rfind('(*"') if plain.endswith('"*)') else -1  # linear: a field is anyone's
    if start >= 0 and '"' not in plain[start + 3 : -3]:
        plain = plain[:start].rstrip(" ;")
    return plain


def sass_key(text: str) -> tuple[str, ...]:
    """What two printings of one instruction share: guard and opcode, then the operands in
    any order (ncu prints LDGSTS's global operand first) with branch and return targets left
    out (ncu prints an address, nvdisasm a label)."""
    words = normal_sass(text).split(" ", 2 if text.lstrip().startswith("@") else 1)
    head, rest = words[:-1] if len(words) > 1 else words, words[-1] if len(words) > 1 else ""
    # nvdisasm writes a return's label after its register without a comma (RET.REL.NODEC R4
    # `(kernel)), ncu the address after a comma
    rest = _LABEL.sub(", `(", rest)
    operands = ("<target>" if _TARGET.match(o) else o for o in (p.strip() for p in rest.split(",")))
    return (*head, *sorted(o for o in operands if o))


def function_text(disassembly: str, mangled: str) -> dict[int, str]:
    """pc -> SASS text of one function in nvdisasm's output."""
    from ...cuda.sass import function_section, parse

    return {
        ins.pc: ins.text
        for fn in parse(function_section(disassembly, mangled) or "")
        if fn.name == mangled
        for ins in fn.instructions
    }


def wanted(kernels: tuple[KernelTrace, ...]) -> Callable[[str], bool]:
    """The ``keep`` of :func:`read_ncu_csv` for the tables of ``kernels``."""
    each = [_matcher(k) for k in kernels]
    return lambda name: any(match(name) for match in each)


def _matcher(kernel: KernelTrace) -> Callable[[str], bool]:
    """Nsight Compute's spelling of the name (casts, ``void``, parameters): ncu.names."""
    return matcher((kernel.name, kernel.mangled))


def _binary_differences(
    table: NcuTable, code: Mapping[int, str]
) -> tuple[tuple[int, str, str], ...]:
    out = []
    for pc, sass_text, _ in table.rows:
        mine = code.get(pc)
        if mine is None or sass_key(sass_text) != sass_key(mine):
            out.append((pc, normal_sass(sass_text), normal_sass(mine or "(no instruction here)")))
    if len(table.rows) != len(code) and not out:
        out.append((-1, f"{len(table.rows)} instructions", f"{len(code)} instructions"))
    return tuple(out)


def sampled(kernel: KernelTrace) -> str | None:
    """``983 of the 4,096 blocks`` where the trace counted a sample of the grid, else None."""
    cov = kernel.launch.coverage
    if cov is None or cov.mode != "sample":
        return None
    return f"{cov.run:,} of the {cov.blocks:,} blocks"


def _verdict(
    opcode: str,
    measured: tuple[int | None, int | None, int | None],
    traced: tuple[int, int, int],
    source_extra: int = 0,
    sample: bool = False,
) -> str:
    if measured == traced:
        return "match"
    if measured[0] != traced[0]:
        return "sample" if sample else "launch"
    if source_extra and measured == (traced[0], traced[1] + source_extra, traced[2]):
        return "pair merge"
    found = op_of_opcode(opcode.split(".")[0])
    if found is not None and found.copy:
        return "cp.async"
    if measured[2] == traced[2] and (measured[1] or 0) > traced[1]:
        return "arbitration"
    return "addresses"


def compare_kernel(
    kernel: KernelTrace, code: Mapping[int, str], tables: list[NcuTable], csv_path: str
) -> KernelCompare:
    """The trace against the first table of this kernel measured on this very binary."""
    match = _matcher(kernel)
    mine = [t for t in tables if match(t.kernel)]
    if not mine:
        names = ", ".join(shorten(n) for n in list(dict.fromkeys(t.kernel for t in tables))[:20])
        raise ShmemError(
            f"the CSV has no table of {shorten(kernel.name)}; it has: {shorten(names, 400)}",
            path=csv_path,
            code="input",
        )
    differences = [_binary_differences(t, code) for t in mine]
    pick = next((k for k, d in enumerate(differences) if not d), 0)
    table = mine[pick]
    if differences[pick]:
        return KernelCompare(csv_path, kernel.name, pick + 1, len(mine), differences[pick], ())
    rows = {pc: counters for pc, _, counters in table.rows}
    sample = sampled(kernel)
    unreached = "sample" if sample else "launch"  # another block may have run it
    out = []
    for access in kernel.accesses:
        c = rows.get(access.site.pc, {})
        r = access
        measured = (c.get(EXECUTED), c.get(WAVEFRONTS), c.get(IDEAL))
        traced = (
            r.cost.requests + access.predicated_off,
            r.cost.wavefronts,
            r.cost.ideal_wavefronts + r.cost.source_ideal_extra,  # the source page's ideal
        )
        verdict = _verdict(
            access.site.opcode, measured, traced, r.cost.source_extra, sample is not None
        )
        out.append(
            InstructionCompare(
                access.site.pc,
                access.site.sass,
                access.site.file,
                access.site.line,
                measured,
                traced,
                verdict,
            )
        )
    traced_pcs = {a.site.pc for a in kernel.accesses}
    for pc, sass_text, c in table.rows:
        words = normal_sass(sass_text).split()
        opcode = words[1] if words and words[0].startswith("@") and len(words) > 1 else words[0]
        executed = c.get(EXECUTED) or 0
        if pc not in traced_pcs and opcode.split(".")[0] in SHARED_OPCODES and executed:
            # the GPU ran a shared-memory instruction that the trace never reached
            measured = (c.get(EXECUTED), c.get(WAVEFRONTS), c.get(IDEAL))
            out.append(
                InstructionCompare(
                    pc, normal_sass(sass_text), None, None, measured, (0, 0, 0), unreached
                )
            )
    out.sort(key=lambda i: i.pc)
    return KernelCompare(csv_path, kernel.name, pick + 1, len(mine), (), tuple(out), sample=sample)


def compare_ops(kernel: KernelTrace, launches: list[NcuLaunch], csv_path: str) -> KernelCompare:
    """The trace's per-op totals against this kernel's launch in a raw-page CSV with the
    traced grid and block, else its first (no binary to check: the raw page has no SASS)."""
    index, place, count = pick_launch(kernel, launches, csv_path)
    counters = launches[index].counters
    rows = op_rows(kernel, counters)
    return KernelCompare(
        csv_path,
        kernel.name,
        place,
        count,
        (),
        (),
        rows,
        counters.get(ARBITRATION_COUNTER),
        page="raw",
        sample=sampled(kernel),
    )


def compare_file(
    kernels: tuple[KernelTrace, ...], code: Mapping[int, str], csv_path: str
) -> list[KernelCompare]:
    """Each kernel against the CSV: per instruction (the source page, on the binary ``code``)
    or per op (the raw page's per-launch counters)."""
    export = read_ncu_export(csv_path, wanted(kernels))
    if export.launches is not None:
        return [compare_ops(k, export.launches, csv_path) for k in kernels]
    return [compare_kernel(k, code, export.tables, csv_path) for k in kernels]


@frozen
class ComparedTrace:
    """``shmem trace --compare``'s report: the trace, and each kernel's comparison with the
    CSV (its JSON is the trace's with a ``compare`` list)."""

    trace: TraceResult
    compares: tuple[KernelCompare, ...]

    @property
    def agrees(self) -> bool:
        return all(c.agrees for c in self.compares)

    def to_json(self) -> dict[str, Any]:
        return {**self.trace.to_json(), "compare": [c.to_json() for c in self.compares]}
