"""``shmem sweep KERNEL.cu --define NAME=VALUES``: compile every combination, trace each.

Every combination of the ``--define`` values is one variant: the kernel compiled with
``-DNAME=VALUE`` for each name (beside the ``--nvcc-arg`` arguments), checked and built as
``shmem trace`` builds a ``.cu`` (:mod:`shmem_cli.cuda.cu_inputs`,
:func:`shmem_cli.cuda.build.compile_checked`), several at once, each combination built
once, into a temporary folder removed when the sweep ends; only with a build cache named
(``--build-cache DIR``, ``[tool.shmem] build-cache``: :mod:`shmem_cli.cuda.build_cache`)
is a build kept, there, and nothing else is written. Each variant is traced with the same
launch; the variants are ranked by total wavefronts, then by shared memory, then by sweep order.
A variant that fails to compile or trace is kept with its error; the others still run.
Where a variant's shared-memory instructions differ from the first variant's (the
compiler split an ``LDS.128``), its note says how.

A ``--define`` may change the work, not only the layout (a tile size, a trip count), and
the compiler may add or drop shared-memory loads with it: where the variants move different
numbers of shared-memory bytes (per op, lanes times their width), fewer wavefronts may only
mean less work. Each such variant's note says what it moves beside the first variant's, and
``rank="per-ideal"`` (``--rank per-ideal``) ranks by wavefronts per ideal wavefront (how many
times its conflict-free cost each variant pays) instead of by wavefronts.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...analysis.sweep.report import RANKS, RankedVariant, sweep_json
from ...cuda import toolchain
from ...cuda.build import Build, compile_checked
from ...cuda.cu_inputs import CuInputs
from ...cuda.nvcc_messages import (
    compiler_messages,
    kernel_front,
    kernel_warnings,
    source_warnings,
)
from ...cuda.sources import SourceTree
from ...hardware.arch import DEFAULT_ARCH, rules_for
from ...hardware.ops import OP_NAMES as TRACE_OPS
from ...model import Totals
from ...plumbing.errors import ShmemError, shorten
from ...plumbing.frozen import frozen
from ...plumbing.tool_threads import map_tools
from ..kernel.cubin import read_cubin
from ..kernel.line_table import kernel_spans
from ..pipeline import TraceRequest, trace_file
from ..result import OP_TOTALS_KEYS, KernelTrace

if TYPE_CHECKING:
    from ..emulator.budget import Budget

_NAME = re.compile(r"[A-Za-z_]\w*\Z")
#: compiles are seconds each: a sweep of more variants (the counts of the --define values
#: multiplied, counted before any combination is listed) is refused
MAX_VARIANTS = 256
#: the compile and trace time of a sweep's variants in all, at the limits each has
MAX_SWEEP_SECONDS = 86_400.0


@frozen
class Define:
    """One ``--define NAME=VALUES`` axis."""

    name: str
    values: tuple[int, ...]

    def describe(self) -> str:
        return f"define {self.name}={','.join(str(v) for v in self.values)}"


def parse_define(text: str) -> Define:
    """``NAME=VALUES`` with VALUES as the spec sweep takes them (``0..4``, ``0,1,2,4,8``);
    ValueError in words otherwise."""
    from ...analysis.sweep.options import parse_values

    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not _NAME.match(name):
        raise ValueError("expects NAME=VALUES with NAME a C identifier (--define PAD=0..8)")
    return Define(name, parse_values(values.strip(), limit=MAX_VARIANTS))


@frozen
class Variant:
    """One combination: what it set, and what its trace gave (or why it has none)."""

    index: int
    defines: tuple[tuple[str, int], ...]
    kernel: KernelTrace | None = None
    error: ShmemError | None = None
    note: str = ""

    @property
    def valid(self) -> bool:
        return self.kernel is not None

    @property
    def totals(self) -> Totals:
        """Every op's totals added up."""
        assert self.kernel is not None
        total = Totals()
        for t in self.kernel.totals.values():
            total += t
        return total

    @property
    def smem_bytes(self) -> int:
        assert self.kernel is not None
        return self.kernel.launch.static_smem + self.kernel.launch.dynamic_smem

    @functools.cached_property
    def bytes_moved(self) -> dict[str, int]:
        """Shared-memory bytes its accesses moved, per op (lanes times their width): the
        same for any layout of the same work (added up once)."""
        assert self.kernel is not None
        moved: Counter[str] = Counter()
        for a in self.kernel.accesses:
            moved[a.cost.op] += a.cost.lane_accesses * a.cost.width
        return dict(sorted((op, n) for op, n in moved.items() if n))

    @property
    def conflict_factor(self) -> float:
        """Wavefronts per ideal wavefront (1.0: conflict-free; 1.0 too with no traffic)."""
        t = self.totals
        return t.wavefronts / t.ideal_wavefronts if t.ideal_wavefronts else 1.0

    def opcodes(self) -> Counter[str]:
        """How many shared-memory SASS instructions of each opcode the variant executed."""
        assert self.kernel is not None
        return Counter(a.site.opcode for a in self.kernel.accesses)


@frozen
class CompiledSweep:
    path: str
    kernel: str | None
    axes: tuple[Define, ...]
    variants: tuple[Variant, ...]
    smem_limit: int
    #: why the variants were built for the ``a`` target, when shmem chose it (``shmem
    #: trace``'s words, said once for the sweep)
    arch_note: str | None = None
    rank: str = "wavefronts"  # one of RANKS

    @property
    def reference(self) -> Variant | None:
        """The variant extra bytes and instruction changes are measured from: the first valid."""
        return next((v for v in self.variants if v.valid), None)

    def extra_bytes(self, v: Variant) -> int:
        ref = self.reference
        return 0 if ref is None else v.smem_bytes - ref.smem_bytes

    def fits(self, v: Variant) -> bool:
        return v.valid and v.smem_bytes <= self.smem_limit

    @functools.cached_property
    def same_work(self) -> bool:
        """Whether every traced variant moves the first one's shared-memory bytes, op by op."""
        ref = self.reference
        if ref is None:
            return True
        first = ref.bytes_moved
        return all(v.bytes_moved == first for v in self.variants if v.valid)

    @property
    def best(self) -> Variant | None:
        """Fewest wavefronts (``per-ideal``: fewest per ideal wavefront, then fewest), then
        fewest shared bytes, then sweep order (valid and fitting)."""
        ok = [v for v in self.variants if self.fits(v)]
        if not ok:
            return None
        if self.rank == "wavefronts":
            return min(ok, key=lambda v: (v.totals.wavefronts, v.smem_bytes, v.index))
        return min(
            ok, key=lambda v: (v.conflict_factor, v.totals.wavefronts, v.smem_bytes, v.index)
        )

    def work_note(self, v: Variant) -> str:
        """The ops whose bytes ``v`` moves are not the first variant's (``moves load 512 B
        (READS=1: 128 B)``), else ""."""
        ref = self.reference
        if ref is None or not v.valid or v is ref:
            return ""
        mine, first = v.bytes_moved, ref.bytes_moved
        ops = [op for op in sorted({*mine, *first}) if mine.get(op, 0) != first.get(op, 0)]
        if not ops:
            return ""
        who = ", ".join(f"{n}={x}" for n, x in ref.defines)
        said = [f"{op} {mine.get(op, 0):,} B ({who}: {first.get(op, 0):,} B)" for op in ops]
        return "moves " + ", ".join(said)

    def to_json(self) -> dict[str, Any]:
        best = self.best
        doc = sweep_json(
            file=self.path,
            name=next((v.kernel.name for v in self.variants if v.kernel is not None), None),
            sweep=[a.describe() for a in self.axes],
            smem_limit=self.smem_limit,
            variants=[self._ranked(v) for v in self.variants],
            best=None if best is None else self._ranked(best),
        )
        return {
            **doc,
            "arch_note": self.arch_note,
            "rank": self.rank,
            "same_work": self.same_work,
        }

    def _ranked(self, v: Variant) -> RankedVariant:
        k = v.kernel
        return RankedVariant(
            index=v.index,
            settings={"defines": {name: str(x) for name, x in v.defines}},
            totals=None if k is None else v.totals,
            smem_bytes=None if k is None else v.smem_bytes,
            extra_bytes=None if k is None else self.extra_bytes(v),
            fits=self.fits(v),
            error=v.error,
            details={
                "note": v.note or None,
                "compiler_warnings": None if k is None else list(k.compiler_warnings),
                "work_note": self.work_note(v) or None,
                "bytes": None if k is None else v.bytes_moved,
                "totals": None
                if k is None
                else {op: k.totals[op].json(*OP_TOTALS_KEYS) for op in TRACE_OPS},
                "instructions": None if k is None else dict(sorted(v.opcodes().items())),
            },
        )


def compile_variant(
    source: Path,
    arch: str | None,
    args: Sequence[str],
    folder: Path,
    *,
    inputs: CuInputs,
    explain: Callable[[str], str] = toolchain.tail,
    build_cache: str | None = None,
    seconds: float = toolchain.COMPILE_SECONDS,
) -> Build:
    """The build (:class:`~shmem_cli.cuda.build.Build`: its cubin, ptxas's warnings, why its
    ``a`` target was chosen as ``note``, None where shmem did not choose it) of ``source``
    built with ``args`` for ``arch`` (None: the default, or its ``a`` variant where the code
    needs it, as ``shmem trace`` builds) in a new folder under ``folder``; what the
    compile read is checked against ``inputs``. ``explain``: what of nvcc's messages a
    failure shows; ``build_cache``: the build cache folder the build goes through
    (``--build-cache``), None for none; ``seconds``: the compile's wall time."""
    work = Path(tempfile.mkdtemp(prefix="variant-", dir=folder))
    build = compile_checked(
        source,
        arch,
        DEFAULT_ARCH,
        work,
        args,
        allowed=inputs.allowed,
        explain=explain,
        cache=build_cache,
        seconds=seconds,
    )
    return build


def _checked_build(request: TraceRequest, tree: SourceTree) -> CuInputs:
    """The sweep's nvcc arguments and sources checked as ``shmem trace`` checks a .cu
    (:mod:`shmem_cli.cuda.cu_inputs`): the allowlist, ``-I`` folders in the tree or an
    include root (or anywhere, typed by the user), nothing read outside them, no output
    over a file the build reads."""
    try:
        return request.cu_inputs(tree)
    except ShmemError as exc:
        raise exc.located(str(request.path)) from None


def _instruction_note(first: Counter[str], now: Counter[str]) -> str:
    """``LDS.128 x48 -> LDS.128 x44 + LDS.64 x8 + LDS x8`` for the ops whose opcodes changed."""
    notes = []
    stems = sorted({k.split(".")[0] for k in (*first, *now)})
    for stem in stems:
        a = {k: n for k, n in first.items() if k.split(".")[0] == stem}
        b = {k: n for k, n in now.items() if k.split(".")[0] == stem}
        if a != b:

            def said(c: dict[str, int]) -> str:
                def width(op: str) -> int:
                    tail = op.rsplit(".", 1)[-1]
                    return -int(tail) if tail.isdigit() else -32

                return (
                    " + ".join(
                        f"{k} x{n}" for k, n in sorted(c.items(), key=lambda i: (width(i[0]), i[0]))
                    )
                    or "none"
                )

            notes.append(f"{said(a)} -> {said(b)}")
    return "; ".join(notes)


def check_size(axes: Sequence[Define], budget: Budget) -> None:
    """Refuse a sweep of more than :data:`MAX_VARIANTS` variants, counted from the values of
    each ``--define`` before any combination is listed (256 ``--define``s of two values each
    are 2^256 of them: listing them ran until memory ran out, deaf to Ctrl-C), or whose
    variants may take more than :data:`MAX_SWEEP_SECONDS` to compile and trace at the limits
    of each (``budget``: ``--compile-time-limit``, ``--time-limit``; ``--jobs`` shortens the
    wait, not the work)."""
    count = math.prod(len(a.values) for a in axes)
    if count > MAX_VARIANTS:
        said = f"{count:,}" if count < 10**15 else f"about 10^{len(str(count)) - 1}"
        factors = " x ".join(f"{len(a.values)} ({a.name})" for a in axes)
        raise ShmemError(
            f"--define: the sweep has {said} variants, each a compile (the counts of the "
            f"--define values multiplied: {shorten(factors, 200)}); the limit is "
            f"{MAX_VARIANTS}: sweep fewer values at once (a range with a step: --define "
            "PAD=0..32:8), or give a macro one value for every variant with "
            "--nvcc-arg=-DNAME=VALUE"
        )
    compile_s, trace_s = budget.compile_seconds, budget.seconds
    if count * (compile_s + trace_s) > MAX_SWEEP_SECONDS:
        hours = count * (compile_s + trace_s) / 3600
        raise ShmemError(
            f"--define: the sweep's {count} variants may take {count} x ({compile_s:g} s to "
            f"compile + {trace_s:g} s to trace) = {hours:.1f} hours at the limits each has "
            f"(--compile-time-limit, --time-limit); the limit is {MAX_SWEEP_SECONDS / 3600:g} "
            "hours in all: lower them (--compile-time-limit 60 --time-limit 60: a kernel "
            "compiles and traces in seconds), or sweep fewer values at once"
        )


def run_compiled_sweep(
    request: TraceRequest,
    axes: Sequence[Define],
    *,
    jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
    rank: str = "wavefronts",
) -> CompiledSweep:
    """Compile and trace every combination of ``axes`` (``request`` gives the file and the
    launch; its ``nvcc_args`` go to every compile), ranked by ``rank`` (one of RANKS)."""
    if rank not in RANKS:
        raise ValueError(f"rank is one of {RANKS}, not {rank!r}")
    names = [a.name for a in axes]
    if len(set(names)) != len(names):
        raise ShmemError("a --define names the same macro twice; give its values once")
    check_size(axes, request.budget)
    points = list(itertools.product(*(a.values for a in axes)))
    source = Path(request.path)
    arch = request.arch or DEFAULT_ARCH
    tree = request.tree()
    inputs = _checked_build(request, tree)
    unique = list(dict.fromkeys(points))  # PAD=0,0: one build for both
    workers = max(1, min(len(unique), jobs or os.cpu_count() or 1))
    variants: list[Variant] = []
    with tempfile.TemporaryDirectory(prefix="shmem-sweep-") as tmp:
        folder = Path(tmp)

        def build(point: tuple[int, ...]) -> Build | ShmemError:
            args = [*inputs.args, *(f"-D{n}={v}" for n, v in zip(names, point, strict=True))]
            try:
                return compile_variant(
                    source,
                    request.arch,
                    args,
                    folder,
                    inputs=inputs,
                    explain=lambda text: compiler_messages(
                        text, tree, inputs.typed, inputs.libraries
                    ),
                    build_cache=request.build_cache,
                    seconds=request.budget.compile_seconds,
                )
            except toolchain.ToolError as exc:
                code = "tool-missing" if isinstance(exc, toolchain.ToolMissing) else "tool-failed"
                return ShmemError(str(exc), path=str(source), code=code)

        # Ctrl-C ends every compile at once
        built = dict(zip(unique, map_tools(build, unique, workers), strict=True))
        notes: dict[str, None] = {}  # each reason once, in sweep order
        for index, point in enumerate(points):
            made = built[point]
            defines = tuple(zip(names, point, strict=True))
            if progress is not None:
                progress(", ".join(f"{n}={v}" for n, v in defines))
            if isinstance(made, ShmemError):
                variants.append(Variant(index, defines, error=made))
                continue
            cubin, note = made.cubin, made.note
            if note:
                notes[note] = None
            one = dataclasses.replace(
                request,
                path=cubin,
                nvcc_args=(),
                arch=None,
                tree_anchor=str(source),
                include_roots=inputs.libraries,  # rows at the user's lines, not the library's
            )
            try:
                kernel = trace_file(one).kernels[0]
            except ShmemError as exc:
                if exc.path == str(cubin):  # the build's file: say the source instead
                    exc.path = str(source)
                variants.append(Variant(index, defines, error=exc.located(str(source))))
                continue
            if made.warnings:  # nvcc's of this variant's build, ptxas's about the kernel
                others = [k.mangled for k in read_cubin(cubin).kernels]
                shown = source_warnings(made.warnings, tree, inputs.typed)
                spans = kernel_spans([(cubin, m) for m in others], kernel.mangled)
                front = kernel_front(shown, *spans)  # those in the kernel's lines, or the file's
                said = (*front, *kernel_warnings(made.warnings, kernel.mangled, others))
                kernel = dataclasses.replace(kernel, compiler_warnings=said)
            variants.append(Variant(index, defines, kernel=kernel))
    first = next((v for v in variants if v.valid), None)
    if first is not None:
        base = first.opcodes()
        variants = [
            dataclasses.replace(v, note=_instruction_note(base, v.opcodes())) if v.valid else v
            for v in variants
        ]
    limit = rules_for(arch).smem_per_block
    return CompiledSweep(
        str(request.path),
        request.kernel,
        tuple(axes),
        tuple(variants),
        limit,
        arch_note="; ".join(notes) or None,
        rank=rank,
    )
