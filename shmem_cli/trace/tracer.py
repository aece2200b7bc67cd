"""Tracing one kernel: from a cubin and a launch plan to a :class:`KernelTrace`.

The steps, each in its own module: the kernel's metadata (:mod:`.cubin`), its SASS
(nvdisasm through :mod:`shmem_cli.cuda.toolchain`, read by :mod:`shmem_cli.cuda.sass`), the launch
(:mod:`.launch`), the functional run of every block (:mod:`.emulator`) and the
per-instruction totals through the engine (:mod:`.aggregate`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..cuda.named_sources import locate_source
from ..hardware.arch import rules_for, rules_note
from ..plumbing.errors import ShmemError, shorten
from .aggregate import (
    HeatRoom,
    cas_loop_reads,
    generic_atom_rows,
    line_totals,
    misc_rows,
    not_modelled,
    op_totals,
    predicated_off_rows,
    records_costs,
    trace_access,
)
from .emulator.access_kind import shared_op_of
from .emulator.budget import DEFAULT as DEFAULT_BUDGET
from .emulator.budget import Budget
from .emulator.sync.clock import FIRST_JUMP
from .emulator.trace_error import NotModelled
from .kernel.constants import Constants
from .kernel.cubin import CubinInfo, Kernel
from .kernel.externals import link_globals
from .kernel.launch import LaunchPlan, name_defaults, read_defaults
from .kernel.params import unnamed_note
from .result import KernelTrace
from .traced_launch import GridCoverage, LaunchInfo, describe_arguments, zero_map_note

if TYPE_CHECKING:
    from ..cuda.sources import SourceTree


def outside_not_quoted(exc: ShmemError, path: str, tree: SourceTree) -> ShmemError:
    """An error placed (by the cubin's line table) in a file outside the source tree is
    moved to the kernel file ``path``, its place said in words: its lines are never quoted."""
    if exc.path is None or exc.path == path or tree.inside(exc.path):
        return exc
    roots = [Path(path).resolve().parent, Path.cwd()]
    moved = locate_source(exc.path, roots, tree.inside)  # the same file, in this tree
    if moved is not None:
        exc.path = str(moved)
        return exc
    where = f"{shorten(exc.path, 200)}:{exc.pos.line}" if exc.pos else shorten(exc.path, 200)
    said = f" (at {where}, outside the kernel's source tree"
    if os.path.isfile(exc.path):  # here (a Triton kernel's .py is never in its cache folder)
        folder = shorten(str(Path(exc.path).parent), 200)
        said += f": --source-root {folder} lets shmem read it and quote the line"
    exc.message += said + ")"
    exc.path, exc.pos = None, None
    return exc


class NamedFiles(Protocol):
    """What a build names besides its line table: the source files given, the files the
    compile read (resolved; none but a ``.cu``'s), the library folders it may read."""

    @property
    def sources(self) -> Sequence[Path]: ...
    @property
    def files(self) -> Sequence[str]: ...
    @property
    def libraries(self) -> Sequence[str]: ...


def source_texts(
    cubin: CubinInfo,
    disassembly: str,
    named: NamedFiles,
    path: Path,
    tree: SourceTree,
    outputs: Sequence[str] = (),
) -> list[str]:
    """The texts of the source files given or named by the line table (inside the tree),
    then of the files it or the compile's list names in a library folder or the tree, as
    much as :func:`.kernel.signature.naming_text` keeps for the cubin's kernels (a
    library's ``__global__`` declaration, the macros it uses); none of them may be one of
    the ``outputs`` (a report over the source it names)."""
    from ..cuda.named_sources import library_texts, read_sources
    from ..cuda.sass import line_table_files
    from ..plumbing.fsutil import check_outputs
    from .kernel.signature import base_name, naming_text

    in_table = line_table_files(disassembly)
    given = [*named.sources, *(Path(f) for f in in_table)]
    roots = [path.resolve().parent, Path(cubin.path).resolve().parent]
    read: list[Path] = []
    texts = read_sources(given, roots, allowed=tree.inside, read=read)
    bases = {base_name(k.name) for k in cubin.kernels} - {""}
    keep = functools.partial(naming_text, names=bases)
    texts += library_texts([*in_table, *named.files], named.libraries, tree.inside, keep, read)
    check_outputs(outputs, read)
    return texts


def find_function(disassembly: str, kernel: Kernel, path: str, also: Sequence[str] = ()) -> Any:
    """The parsed SASS function of ``kernel`` (only its section of the text is parsed, and
    only up to :data:`~shmem_cli.cuda.sass.MAX_FUNCTION_TEXT`), linked with the device
    functions of the text it calls (a ``-G`` build's: :mod:`~shmem_cli.cuda.sass_link`)."""
    from ..cuda.sass import MAX_FUNCTION_TEXT, function_section, parse
    from ..cuda.sass_link import in_text, link

    text = function_section(disassembly, kernel.mangled)
    if text is not None and len(text) > MAX_FUNCTION_TEXT:
        raise ShmemError(
            f"the SASS of {shorten(kernel.name)} is {len(text) >> 20} MiB (about "
            f"{text.count(chr(10)) // 2:,} instructions); shmem traces kernels of at most "
            f"{MAX_FUNCTION_TEXT >> 20} MiB of SASS",
            path=path,
            code="invalid-kernel",
        )
    for function in parse(text or ""):
        if function.name == kernel.mangled:
            return link(function, in_text(disassembly), also)
    raise ShmemError(
        f"nvdisasm printed no code for {shorten(kernel.name)} ({shorten(kernel.mangled)})",
        path=path,
    )


def data_sources(plan: LaunchPlan, memory: Any) -> Callable[[int], tuple[str, ...]]:
    """Names, as the report labels parameters, of the buffers whose bits a taint byte
    holds (:meth:`.emulator.state.GlobalMemory.taint_sources`); past the fifth buffer the
    kernel reads from they share a bit and are named together (never one only written)."""
    labels = {b.param.name or f"param{b.param.ordinal}": b.param.label for b in plan.buffers}
    labels.update({f"tensormap{k}": tm.param.label for k, tm in enumerate(plan.tensor_maps)})
    labels.update({f.buffer_name: f"{f.param.label}+{f.offset}" for f in plan.fields})

    def names(taint: int) -> tuple[str, ...]:
        out = []
        for group in memory.taint_sources(taint):
            named = list(dict.fromkeys(labels.get(n, n) for n in group))
            out.append(named[0] if len(named) == 1 else "one of " + ", ".join(named))
        return tuple(out)

    return names


def trace_kernel(
    function: Any,
    kernel: Kernel,
    arch: str,
    plan: LaunchPlan,
    *,
    progress: Callable[[int, int], None] | None = None,
    lines: dict[int, tuple[str, int]] | None = None,
    memory: Any = None,
    budget: Budget = DEFAULT_BUDGET,
    constants: Constants | None = None,
) -> KernelTrace:
    """Run every block of the plan (one when the grid is 1x1x1) and total the requests.

    ``lines`` (pc -> file, line; :func:`shmem_cli.cuda.sass.source_lines`) overrides the
    instructions' own source locations in the report; ``memory`` (a
    :class:`.state.GlobalMemory`) receives the buffers, to be read after the run (so every
    block of the grid runs: none stands for others); ``budget`` bounds the run
    (:mod:`.emulator.budget`); ``constants`` are the ``__constant__`` banks
    (:mod:`.kernel.constants`)."""
    from ..cuda.sass_link import place_data
    from .emulator.execute import run
    from .emulator.state import GlobalMemory, Launch

    every_block = memory is not None  # the caller reads what every block wrote
    memory = GlobalMemory() if memory is None else memory
    params = plan.param_bytes(memory)
    banks = dict(constants.banks) if constants else {}
    if constants and constants.global_sections:  # the module's __device__ data, as loaded
        sections = dict(constants.global_sections)
        tables: dict[str, bytearray] = {}  # each section copied once: a copy a slot was hours
        for sec, offset, name, add in constants.function_slots:  # virtual tables: addresses
            body = sections[sec]
            if name in function.labels and isinstance(body, bytes) and offset + 8 <= len(body):
                value = ((function.labels[name] + add) % (1 << 64)).to_bytes(8, "little")
                if sec not in tables:
                    tables[sec] = bytearray(body)
                tables[sec][offset : offset + 8] = value
        sections.update((sec, bytes(table)) for sec, table in tables.items())
        at = link_globals(banks, constants.global_slots, sections, memory.add_buffer)
        data = {name: at[sec] + value for name, (sec, value) in constants.code_symbols.items()}
        function = place_data(function, data)  # addresses the code takes (-G)
    for given in plan.memory:  # what the host wrote before the launch, at its real addresses
        # handed over: the arena's copy is the only one left for the trace
        memory.preload(given.address, given.held, f"--memory 0x{given.address:x}")
    profile = rules_for(arch)  # the default's rules for an unmeasured arch, said below
    launch = Launch(
        block=plan.block,
        grid=plan.grid,
        params=params,
        param_base=kernel.param_base,
        static_smem=kernel.static_shared_bytes,
        dynamic_smem=plan.dynamic_smem,
        shared_base=kernel.reserved_shared_bytes,
        memory=memory,
        warp_size=profile.warp_size,
        const_banks=banks,
        const_unset=constants.unset_spans() if constants else {},
        externals=dict(constants.externals) if constants else {},
        cluster=plan.cluster,
    )
    launch.resident = at_once(function, profile, launch)
    whole_grid = plan.grid != (1, 1, 1)
    threads = plan.block[0] * plan.block[1] * plan.block[2]
    warps_per_block = -(-threads // profile.warp_size)
    blocks = plan.grid[0] * plan.grid[1] * plan.grid[2]

    def coster(rec: Any, ranges: Any) -> Any:  # as trace_access costs requests
        # no heat map, so no count of warps: the report's (the grid's, or the traced blocks'
        # where they stand for the grid, decided once the run ends) is taken when merged
        per_block = warps_per_block
        return records_costs(
            rec, profile, ranges, warps=None, warps_per_block=per_block, blocks=blocks
        )

    try:
        trace = run(
            function,
            launch,
            grid=whole_grid,
            progress=progress,
            budget=budget,
            every_block=every_block,
            fold=coster,
        )
    except ShmemError as exc:  # the emulator cannot go on: zeros not given may be why
        if not isinstance(exc, NotModelled):  # an instruction beyond it: no value would help
            name_defaults(exc, read_defaults(plan, function.instructions, launch.param_base))
        raise
    coverage = trace.coverage
    grid_blocks = coverage.blocks if coverage is not None else int(trace.blocks)
    weight = coverage.weight if coverage is not None else 1
    sources = data_sources(plan, memory)
    loop_reads = cas_loop_reads(trace.records, [i for i, n in trace.cas_failed.items() if n])
    room = HeatRoom()  # the launch's heat maps, made in turn while they fit
    accesses = tuple(
        trace_access(
            rec,
            profile,
            warps=warps_per_block * (int(trace.blocks) if weight > 1 else grid_blocks),
            warps_per_block=warps_per_block,
            blocks=grid_blocks,
            location=(lines or {}).get(rec.instruction.pc),
            cas_retries=trace.cas_failed.get(rec.index, 0),
            contended=rec.index in loop_reads,
            sources=sources,
            weight=weight,
            room=room,
        )
        for rec in trace.records
    )
    skipped = [(ins, n * weight) for ins, n in trace.not_modelled]
    atoms = generic_atom_rows(function.instructions, trace.generic_atoms, weight)
    return KernelTrace(
        name=kernel.name,
        mangled=kernel.mangled,
        arch=arch,
        rules=profile.name,
        rules_note=rules_note(arch),
        launch=LaunchInfo(
            block=plan.block,
            grid=plan.grid,
            blocks_traced=coverage.counted if coverage is not None else int(trace.blocks),
            coverage=grid_coverage(coverage),
            dynamic_smem=plan.dynamic_smem,
            static_smem=kernel.static_shared_bytes,
            arguments=describe_arguments(plan),
            zero_filled=plan.zero_filled,
            defaulted=read_defaults(plan, function.instructions, launch.param_base),
            constants=constants.given if constants else (),
            unset_constants=tuple(sorted(launch.unset_reads)),
            memory=tuple((r.address, r.size, r.source) for r in plan.memory),
            undescribed=memory.shadow_summary(),
            undescribed_reads=memory.untouched_reads,
            cluster=plan.cluster,
            unnamed=unnamed_note(plan.params),
        ),
        accesses=accesses,
        lines=line_totals(accesses),
        totals=op_totals(accesses, atoms),
        generic_atoms=atoms,
        not_modelled=not_modelled(
            skipped,
            {pc: n * weight for pc, n in trace.dsmem_sectors.items()},
            trace.callees,
            {pc: n * weight for pc, n in trace.dsmem_atoms.items()},
            trace.dsmem_taint,
            sources,
        ),
        instructions_executed=int(trace.thread_instructions) * weight,
        misc_rows=tuple(
            sorted(
                misc_rows(
                    function.instructions,
                    {pc: n * weight for pc, n in trace.misc.items()},
                    {pc: n * weight for pc, n in trace.misc_done.items()},
                )
                + predicated_off_rows(accesses),
                key=lambda r: r.pc,
            )
        ),
        records=tuple(trace.records),
        records_note=_folded_note(trace.records, budget),
        clock_note=clock_note(trace.clock_spins),
        wait_note=trace.wait_note,
        tensor_map_note=zero_map_note(plan, skipped),
        shared_code=any(shared_op_of(ins) is not None for ins in function.instructions),
        fills=trace.fills,
        # nothing ran through the shared-memory pipe: no contention for it to note
        fills_gpu=fills_gpu(profile, launch, grid_blocks) if accesses else None,
    )


def _folded_note(records: Any, budget: Budget) -> str | None:
    """What a trace whose records were folded (:meth:`.recorder.Recorder.fold`) lacks."""
    if not any(rec.folded.cost is not None for rec in records):
        return None
    return (
        f"the requests passed the records' bound ({budget.recorded_bytes >> 20} MiB) and were "
        "costed in parts as they came: every total is exact, but no heat map is kept and "
        "--suggest re-costs only the last part's requests"
    )


def clock_note(spins: int) -> str | None:
    """The note of a trace whose delay loops on the clock were fast-forwarded
    (:mod:`.emulator.sync.clock`), else None."""
    if not spins:
        return None
    return (
        f"a loop waited on the clock ({spins:,} re-read(s) at one instruction with no memory "
        "access since): the clock was fast-forwarded, in jumps doubling from "
        f"{FIRST_JUMP:,} cycles, so the wait ended in a few iterations; the instruction "
        "counts are the shortened wait's, and values read from the clock are inexact"
    )


def grid_coverage(coverage: Any) -> GridCoverage | None:
    """How the trace covered a grid (:class:`.emulator.grid.Coverage`), for the report."""
    if coverage is None or coverage.mode == "block":
        return None
    return GridCoverage(
        mode=coverage.mode,
        blocks=coverage.blocks,
        run=coverage.run,
        proof=coverage.proof.text() if coverage.proof is not None else None,
        differs=(
            coverage.differs.text(sampled=coverage.mode == "sample")
            if coverage.differs is not None
            else None
        ),
        sampled=coverage.why_sampled,
    )


def _registers(function: Any) -> int:
    """The registers a thread of ``function`` holds, about: its highest R register (a wide
    access's last) plus the two nvcc keeps, rounded up to 8."""
    top = -1
    for ins in function.instructions:
        for o in ins.operands:
            reg = getattr(o, "reg", o)
            if getattr(reg, "kind", None) == "R" and reg.index != 255:
                top = max(top, reg.index + 3)
    return min(255, -(-(top + 3) // 8) * 8)


def at_once(function: Any, profile: Any, launch: Any) -> int:
    """The blocks of ``launch`` the GPU holds at once: the profile's SMs times the blocks one
    SM holds (its threads, shared memory and registers; 0 where one holds none)."""
    smem = launch.shared_base + launch.static_smem + launch.dynamic_smem
    return int(profile.sms * profile.resident_blocks(launch.threads, smem, _registers(function)))


def fills_gpu(profile: Any, launch: Any, blocks: int) -> str | None:
    """The note for a launch with more blocks than the GPU holds at once
    (``launch.resident``: the profile's SMs times the blocks an SM holds of this kernel),
    else None."""
    resident = launch.resident // profile.sms
    if resident == 0 or blocks <= profile.sms * resident:
        return None
    return (
        f"the launch fills the GPU ({blocks:,} blocks; the {profile.measured_on}'s "
        f"{profile.sms} SMs hold {resident} at a time each): Nsight Compute's whole-grid "
        "per-op shared wavefront counters run a few percent above the per-instruction "
        "figures here (1-4.5% measured: warps of many blocks arbitrate for the shared-memory "
        "pipe at full occupancy); its per-instruction source counters give these figures "
        "(docs/hardware-model.md, whole grids)"
    )
