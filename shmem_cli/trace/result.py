"""The result of ``shmem trace``: per SASS instruction, per source line, per op, as JSON.

Each shared-memory instruction becomes a :class:`TraceAccess`: its site (a
:class:`SassSite`: pc, SASS text, opcode, source file and line) and its
:class:`~shmem_cli.model.Cost` (the same totals, worst request, bank table and heat
map as ``shmem analyze``, from the same door, so the same renderers draw it), plus
what only a trace knows: whether its addresses depend on global-memory data, and
whether its wavefront figure is provisional.

The JSON document (``--format json``; docs/trace.md describes every key)::

    {"schema_version": 1, "files": [{"path", "kernels": [{"name", "mangled", "arch", "rules",
      "block", "grid", "accesses": [{"file", "line", "sass", "op", "bytes_per_lane",
      "requests", "wavefronts", "ideal_wavefronts", "max_ways", ...}],
      "lines": [...], "totals": {"load": {"requests", "wavefronts", ...}, ...},
      "not_modelled": [...], ...}]}]}
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from ..hardware.ops import OP_NAMES
from ..model import CONTENDED, Cost, Totals
from ..plumbing.frozen import frozen
from .side_totals import DsmemTotals, GenericAtomRow, MiscRow, MiscTotals, NotModelled

# the launch's classes, importable from here too (as before traced_launch.py held them)
from .traced_launch import GridCoverage as GridCoverage
from .traced_launch import LaunchInfo as LaunchInfo

# cp.async (LDGSTS) is costed by the measured rule (shmem_cli/hardware/async_copy.py) from
# both of its sides; where the global side is missing its wavefronts are those of a store of
# its width, and every figure that includes them says so
CP_ASYNC_NOTE = (
    "cp.async (LDGSTS) wavefronts counted like a store of the same width (the global side "
    "of the copy was not recorded): provisional"
)


@frozen
class SassSite:
    """One SASS instruction of a kernel: where it is and what it says."""

    pc: int
    sass: str  # the instruction as nvdisasm prints it
    opcode: str  # with modifiers: LDS.128, ATOMS.POPC.INC.32, LDSM.16.M88.4
    file: str | None
    line: int | None
    #: the innermost location (a library's line, e.g. copy_sm80.hpp:64) where the reported
    #: line is the user's own call further out; None when they are the same
    inner: tuple[str, int] | None = None
    #: the user's other lines the library code may have been inlined from, where the line
    #: table cannot tell (inlining through shared library lines): the line is ptxas's pick
    also: tuple[tuple[str, int], ...] = ()
    #: the user's line that called the reported line's code through inlining (a helper of
    #: the user's own, ``ldsm_x4(...)`` at line 63 reaching its ``asm`` at line 31); None
    #: where the reported line is not reached from another line of the user's
    caller: tuple[str, int] | None = None

    @property
    def name(self) -> str:
        return self.sass

    @property
    def loops(self) -> tuple[str, ...]:
        return ()

    def label(self, op: str) -> str:
        return f"{op} pc 0x{self.pc:04x} ({self.opcode})"


@frozen
class TraceAccess:
    """One shared-memory SASS instruction (its :class:`SassSite`) and its :class:`Cost` over
    every warp that ran it, with what only a trace knows."""

    site: SassSite
    cost: Cost
    # requests whose address, or whose lanes, global-memory data decided
    data_dependent_requests: int
    inexact_requests: int = 0  # requests with an address the emulator could not compute
    provisional: bool = False  # wavefronts not from the measured rule (see CP_ASYNC_NOTE)
    predicated_off: int = 0  # warp executions with every lane off: no request
    reads: str | None = None  # wgmma: its decoded descriptors and the core matrices read
    # compare-and-swap lanes that failed and went round their loop again (contention)
    cas_retries: int = 0
    # part of a compare-and-swap loop that went round again: the swap with cas_retries, or
    # the read that starts the loop (it runs once more with every failed attempt)
    contended: bool = False
    # global data decided which lanes run it or how often (a guard, a branch, a loop),
    # whether or not any request came of it
    data_decided: bool = False
    # the buffers (parameter labels) whose data went into its addresses or those decisions
    data_from: tuple[str, ...] = ()

    @property
    def data_dependent(self) -> bool:
        """Whether global-memory data decides its addresses, its lanes or its count."""
        return self.data_dependent_requests > 0 or self.data_decided

    @property
    def verdict(self) -> str:
        """The row's verdict, the text's first column and JSON's ``"verdict"``: ``contended``
        for a part of a retried compare-and-swap loop (its counts are the GPU's timing, never
        ``ok``), else its cost's (:attr:`~shmem_cli.model.Totals.verdict`)."""
        return CONTENDED if self.contended else self.cost.verdict

    def __repr__(self) -> str:
        """One line (the dataclass's held every bank table and heat map: 7 KB a row)."""
        t, site = self.cost, self.site
        where = _short(site.file, site.line)
        called = f", caller={_short(*site.caller)!r}" if site.caller else ""
        return (
            f"TraceAccess(pc=0x{site.pc:04x}, line={where!r}{called}, sass={site.sass!r}, "
            f"op={t.op!r}, requests={t.requests}, wavefronts={t.wavefronts}, "
            f"ideal={t.ideal_wavefronts}, max_ways={t.max_ways}, verdict={self.verdict!r})"
        )

    # --- the Python API's names for them (docs/python.md), nothing more -----------------

    @property
    def pc(self) -> int:
        return self.site.pc

    @property
    def sass(self) -> str:
        return self.site.sass

    @property
    def opcode(self) -> str:
        return self.site.opcode

    @property
    def file(self) -> str | None:
        return self.site.file

    @property
    def line(self) -> int | None:
        return self.site.line

    @property
    def op(self) -> str:
        return self.cost.op

    @property
    def result(self) -> Cost:
        """Its cost: requests, wavefronts, ideal, worst request, bank table, heat map."""
        return self.cost

    def to_json(self) -> dict[str, Any]:
        site, t = self.site, self.cost
        out: dict[str, Any] = {
            "file": site.file,
            "line": site.line,
            "inner": None if site.inner is None else {"file": site.inner[0], "line": site.inner[1]},
            "also": [{"file": f, "line": n} for f, n in site.also],
            "caller": _location(site.caller),
            "pc": site.pc,
            "sass": site.sass,
            "opcode": site.opcode,
            "op": t.op,
            "bytes_per_lane": t.width,
            "requests": t.requests,
            "predicated_off": self.predicated_off,
            **t.json(
                "wavefronts",
                "ideal_wavefronts",
                "excess_wavefronts",
                "max_ways",
                "conflicted_requests",
                "verdict",
                "bandwidth_efficiency",
                "cycles",
            ),
            "data_dependent": self.data_dependent,
            "data_dependent_requests": self.data_dependent_requests,
            "data_from": list(self.data_from),
            "inexact_requests": self.inexact_requests,
            "provisional": self.provisional,
            "cas_retries": self.cas_retries,
            "contended": self.contended,
        }
        out["verdict"] = self.verdict
        if t.source_extra:  # a pair-merged load Nsight's Source page counts otherwise
            out["source_wavefronts"] = t.wavefronts + t.source_extra
        if t.source_ideal_extra:  # its ideal there too (hardware.engine.source_ideal)
            out["source_ideal"] = t.ideal_wavefronts + t.source_ideal_extra
        if self.reads is not None:
            out["reads"] = self.reads
        worst = self.cost.worst_json()
        if worst is not None:
            loop = worst.pop("loop", {})
            worst.pop("iteration", None)
            worst["occurrence"] = loop.get("occurrence", 0)
            if "block" in loop:
                worst["block"] = loop["block"]
            out["worst_request"] = worst
        return out


def _short(file: str | None, line: int | None) -> str:
    """``fa2.cu:31``: a file by its name, for a repr."""
    if line is None:
        return "?"
    name = (file or "?").replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{line}"


def _location(where: tuple[str, int] | None) -> dict[str, Any] | None:
    return None if where is None else {"file": where[0], "line": where[1]}


@frozen
class LineTotals:
    """Every shared-memory instruction of one source line (and one call of it: ``caller``,
    the user's line that reached it through a helper of the user's own), added up."""

    file: str | None
    line: int | None
    ops: tuple[str, ...]
    instructions: int
    totals: Totals
    caller: tuple[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "caller": _location(self.caller),
            "ops": list(self.ops),
            "instructions": self.instructions,
            **self.totals.json("requests", "wavefronts", "ideal_wavefronts", "max_ways", "cycles"),
        }


#: the figures of each op's totals in the JSON
OP_TOTALS_KEYS = ("requests", "wavefronts", "ideal_wavefronts")


@frozen
class KernelTrace:
    """One kernel traced: its launch, its shared-memory instructions and their totals per
    source line and per op."""

    name: str
    mangled: str
    arch: str
    rules: str  # the architecture profile whose rules costed it
    rules_note: str | None  # said where those are not the arch's own: never costed silently
    launch: LaunchInfo
    accesses: tuple[TraceAccess, ...]
    lines: tuple[LineTotals, ...]
    totals: dict[str, Totals]  # per op name, every op of hardware.ops (zero when unused)
    not_modelled: tuple[NotModelled, ...] = ()
    instructions_executed: int = 0  # warp-level instructions the emulator ran
    # the emulator's per-instruction requests (requests.InstructionRecords) for --suggest
    records: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    # shared memory that TMA copies wrote (requests.TmaFill): what fixes an array's layout
    fills: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    # ``--suggest``: per array with conflicts, its layout suggestions
    # (trace.fixes.layout_search.ArraySuggestions); None when not asked for
    suggestions: tuple[Any, ...] | None = None
    # more blocks than the GPU holds at once: why Nsight's per-op totals run above (words)
    fills_gpu: str | None = None
    target: str | None = None  # the cubin's target when it is not arch (sm_90a)
    arch_note: str | None = None  # why a .cu was built for that target
    cached: str | None = None  # the build cache folder its .cu's cubin came from (--build-cache)
    compiler_warnings: tuple[str, ...] = ()  # ptxas's about it of its .cu's build ("ptxas: ...")
    # the instructions that cost op_misc wavefronts, in program order (hardware.misc)
    misc_rows: tuple[MiscRow, ...] = ()
    # the generic atomics whose op_atom wavefronts ``totals["atomic"]`` holds beside its rows'
    # (on global memory, declined by shared memory: hardware.dsmem), in program order
    generic_atoms: tuple[GenericAtomRow, ...] = ()
    # what a trace whose records passed their bound and were folded lacks (in words), else None
    records_note: str | None = None
    clock_note: str | None = None  # a delay loop on the clock fast-forwarded (in words), else None
    wait_note: str | None = None  # spins that yielded, blocks run out of order (words), else None
    # TMA copies through zero-byte maps of a --params block (in words: how to encode them)
    tensor_map_note: str | None = None
    # whether its code has a shared-memory instruction (LDS, STS, ATOMS, LDSM, ...): a kernel
    # without one, launched without shared memory, can touch none whatever its parameters
    shared_code: bool = True

    def __repr__(self) -> str:
        """One line: the launch, the instructions and the busy ops' totals."""
        worst = sum(1 for a in self.accesses if a.verdict == "conflict")
        ops = ", ".join(
            f"{op}: {t.requests}/{t.wavefronts}/{t.ideal_wavefronts}"
            for op, t in self.totals.items()
            if t.requests
        )
        return (
            f"KernelTrace(name={self.name!r}, arch={self.arch!r}, block={self.launch.block}, "
            f"grid={self.launch.grid}, accesses={len(self.accesses)} ({worst} with bank "
            f"conflicts), totals={{{ops}}} (requests/wavefronts/ideal))"
        )

    @property
    def data_dependent(self) -> bool:
        """Whether global data decided an access's addresses, lanes or count (a remote one's
        addresses too)."""
        remote = any(n.data_dependent for n in self.not_modelled)
        return remote or any(a.data_dependent for a in self.accesses)

    @property
    def dsmem(self) -> DsmemTotals:
        """The remote (distributed shared memory) accesses, summed: the totals' ``dsmem``."""
        remote = [n for n in self.not_modelled if n.dsmem_sectors is not None]
        return DsmemTotals(
            sum(n.executions for n in remote),
            sum(n.dsmem_sectors or 0 for n in remote),
            sum(n.atom_wavefronts for n in remote),
        )

    @property
    def misc(self) -> MiscTotals:
        """The ``op_misc`` instructions, summed: the totals' ``misc``."""
        rows = self.misc_rows
        return MiscTotals(sum(r.executions for r in rows), sum(r.wavefronts for r in rows))

    @property
    def data_from(self) -> tuple[str, ...]:
        """The buffers whose data decided an address, a lane set or a count, in order."""
        rows = [a.data_from for a in self.accesses] + [n.data_from for n in self.not_modelled]
        return tuple(dict.fromkeys(b for names in rows for b in names))

    def accesses_at(self, line: int, file: str | None = None) -> tuple[TraceAccess, ...]:
        """The shared-memory instructions of a source line (what a spec's ``line:`` names).

        ``file`` None matches the line in any file; otherwise the access's file must end
        with ``file`` at a path boundary (``matmul.cu`` or ``src/matmul.cu`` both match
        ``/home/me/src/matmul.cu``).
        """

        def same_file(path: str | None) -> bool:
            if file is None:
                return True
            if path is None:
                return False
            a, b = path.replace("\\", "/"), file.replace("\\", "/").lstrip("./")
            return a == b or a.endswith("/" + b)

        return tuple(a for a in self.accesses if a.site.line == line and same_file(a.site.file))

    @property
    def provisional(self) -> bool:
        return any(a.provisional and a.cost.requests for a in self.accesses)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "mangled": self.mangled,
            "arch": self.arch,
            "rules": self.rules,
            "rules_note": self.rules_note,
            "target": self.target or self.arch,
            "arch_note": self.arch_note,
            "build_cached": self.cached is not None,
            "compiler_warnings": list(self.compiler_warnings),
            "records_note": self.records_note,
            "clock_note": self.clock_note,
            "wait_note": self.wait_note,
            "tensor_map_note": self.tensor_map_note,
            **self.launch.to_json(),
            "instructions_executed": self.instructions_executed,
            "accesses": [a.to_json() for a in self.accesses],
            "lines": [line.to_json() for line in self.lines],
            "totals": {
                **{op: self.totals[op].json(*OP_TOTALS_KEYS) for op in OP_NAMES},
                "dsmem": self.dsmem.to_json(),
                "misc": self.misc.to_json(),
            },
            "not_modelled": [n.to_json() for n in self.not_modelled],
            "misc": [r.to_json() for r in self.misc_rows],
            "generic_atoms": [r.to_json() for r in self.generic_atoms],
            "data_dependent": self.data_dependent,
            "data_from": list(self.data_from),
            "fills_gpu": self.fills_gpu,
            "provisional": [CP_ASYNC_NOTE] if self.provisional else [],
            **(
                {}
                if self.suggestions is None
                else {"suggestions": [s.to_json() for a in self.suggestions for s in a.suggestions]}
            ),
        }


@frozen
class FileTrace:
    """The kernels traced from one kernel file (a ``.cu``, cubin, executable or Triton
    entry) and where its code came from."""

    path: str
    kernels: tuple[KernelTrace, ...] = field(default=())
    origin: str = ""  # "compiled with nvcc ...", "cubin", "extracted from ..."

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kernels": [k.to_json() for k in self.kernels]}

    def __repr__(self) -> str:
        return f"FileTrace(path={self.path!r}, kernels=[{', '.join(map(repr, self.kernels))}])"


@frozen
class TraceResult:
    """What one ``shmem trace`` run or one ``shmem_cli.trace(...)`` call traced: its files,
    written as one JSON document (``--format json``)."""

    files: tuple[FileTrace, ...]

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": 1, "files": [f.to_json() for f in self.files]}

    def __repr__(self) -> str:
        """A line per kernel (the dataclass's held every record: 350 KB for a small kernel)."""
        return f"TraceResult(files=[{', '.join(map(repr, self.files))}])"

    # --- a report of one kernel, as the Python API returns it (docs/python.md) -----------

    @property
    def kernel(self) -> KernelTrace:
        """The kernel traced (a report of exactly one kernel)."""
        kernels = [k for f in self.files for k in f.kernels]
        if len(kernels) != 1:
            raise ValueError(f"the report holds {len(kernels)} kernels, not one")
        return kernels[0]

    @property
    def accesses(self) -> tuple[TraceAccess, ...]:
        """One record per shared-memory SASS instruction, in program order."""
        return self.kernel.accesses

    @property
    def totals(self) -> dict[str, Totals]:
        """Per op: load, store, atomic, ldmatrix, stmatrix, cp_async, wgmma, tma."""
        return self.kernel.totals

    @property
    def dsmem(self) -> DsmemTotals:
        """The remote (distributed shared memory) requests, their crossbar sectors and the
        remote atomics' ``op_atom`` wavefronts."""
        return self.kernel.dsmem

    @property
    def misc(self) -> MiscTotals:
        """The ``op_misc`` wavefronts: warps' ends, CTA barriers, GPU-scope memory barriers
        and shared instructions warps reached with no lane on (:mod:`shmem_cli.hardware.misc`)."""
        return self.kernel.misc
