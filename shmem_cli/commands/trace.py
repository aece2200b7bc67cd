"""``shmem trace``: a compiled kernel's shared-memory traffic, instruction by instruction.

Argument handling, progress and output only; the work is in
:mod:`shmem_cli.trace.pipeline` (compile, pick, disassemble, launch, trace).
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..hardware.arch import DEFAULT_ARCH
from .analyze import parse_rows
from .common import (
    CONTEXT,
    ExitCode,
    ShmemCommand,
    emit,
    fail_input,
    fail_usage,
    kernel_inputs,
    output_options,
    picture_options,
    pictures,
    report_format_names,
    report_options,
    require_file,
    table_options,
)
from .environment import current_environment
from .trace_budget import budget_options
from .trace_options import trace_options
from .trace_report import output as output_report
from .trace_report import params_json, print_params, progress_line
from .trace_sizes import parse_cluster, parse_launch_sizes

if TYPE_CHECKING:
    from ..lint.config import LintConfig
    from ..trace.ncu.compare import KernelCompare
    from ..trace.trace_request import TraceRequest
    from ..trace.triton.cache import TritonEntry

ARCH = re.compile(r"^sm_\d{2,3}[a-z]?\Z")


@click.command(
    cls=ShmemCommand,
    context_settings=CONTEXT,
    short_help="Shared-memory traffic of a compiled kernel, per SASS instruction (no GPU).",
)
@trace_options
@budget_options
@output_options(report_format_names)
@picture_options
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Bank tables of every instruction (default: of those with bank conflicts).",
)
@table_options("instruction", "occurrence")
def trace(
    kernel_path: str,
    kernel_name: str | None,
    block: str | None,
    grid: str,
    args: tuple[str, ...],
    params_file: str | None,
    consts: tuple[str, ...],
    memory: tuple[str, ...],
    cluster: str | None,
    dynamic_smem: int | None,
    buffer_size: int,
    arch: str | None,
    nvcc_args: tuple[str, ...],
    source_roots: tuple[str, ...],
    build_cache: str | None,
    suggest: bool,
    arrays: tuple[str, ...],
    list_params: bool,
    compare_csv: str | None,
    max_instructions: int | None,
    max_launch_instructions: int | None,
    time_limit: float | None,
    compile_time_limit: float | None,
    fmt: str,
    output: str | None,
    no_color: bool,
    every: bool,
    no_tables: bool,
    rows: str,
    words: bool,
    heatmap: bool | None,
    width: int | None,
) -> None:
    """Trace the shared-memory accesses of a compiled CUDA kernel, without a GPU.

    KERNEL is a .cu file (compiled here with nvcc -cubin -lineinfo -O3
    -arch=sm_XX), a .cubin, an executable or shared library with embedded
    cubins (the one for --arch is extracted with cuobjdump), or a Triton cache
    entry (its folder, .json or .cubin; or a cache root with --kernel NAME): its
    block, dynamic shared memory and parameter names come from the entry, so
    only --grid (the program grid) and the scalar --arg's are needed. The SASS,
    disassembled with nvdisasm, is run by a functional emulator for every thread
    of the block, and each shared-memory instruction's warp-level requests go
    through the same engine as `shmem analyze`: the wavefront rules measured on
    an H200. Every block of --grid is counted: blocks proven to behave alike are
    traced once per class, the others run.

    The report has one row per SASS instruction that touched shared memory (its
    verdict as in shmem analyze: ok, the worst conflict, or ok* for no bank conflict
    but an excess; its source line, op, bytes per lane, requests, wavefronts, ideal,
    excess, worst conflict, efficiency, cycles), the totals per source line and per op (load,
    store, atomic, ldmatrix, stmatrix, cp_async, wgmma: its operand reads by the
    measured rule, tma: TMA and bulk copies, one request per copy and no LSU
    wavefronts; misc: what Nsight counts in op_misc, warps' ends, CTA barriers,
    GPU-scope fences; dsmem: a cluster's remote accesses), the decoded wgmma
    descriptors, the instructions whose traffic is not modelled (a TMA through a
    tensor map not given, remote accesses, calls outside the cubin), and, for
    each instruction with bank conflicts, the bank table of its worst request and
    a warp x occurrence heat map. A row is placed at the innermost line of your own
    sources through inlining (k.cu:21 < copy_sm80.hpp:64: the library's line
    after '<'; k.cu:31 (from 63): a line of your own helper, called at line 63).
    Flag 'data': global-memory contents decided the instruction's
    addresses, lanes or count (zero-filled buffers unless given with @FILE); flag
    'contention': compare-and-swap loops retried (lanes contending for one address).

    \b
    The launch:
      --block/--grid     sizes as X[,Y[,Z]]
      --arg 3=64         the parameter at 0-based position 3 (by value)
      --arg wA=64        by its name in the .cu source, where it is found
      --arg 0=128,128,1  a struct by value, field by field
      --arg in=@x.npy    a pointer's buffer from a file (.bin: raw bytes)
      --const tab=1,2,3  a __constant__ variable (cudaMemcpyToSymbol), or =@FILE
      --params @p.bin    the whole parameter block a host program passed
      --memory 0x7f12a4000000=@problems.bin
                         device memory it wrote before the launch, at its address
    Pointer parameters not given point to zero-filled buffers of --buffer-size
    bytes; other parameters not given are 0 (with --params: the block's bytes,
    whose pointers point into memory the launch did not describe, which reads as
    untouched device memory: what the kernel wrote, else zeros, flagged; --memory
    gives its bytes, read as exact values).
    --list-params shows them all (of every kernel of the file, without --kernel; of
    each entry of a Triton cache root).

    --suggest: for each shared array with bank conflicts (static __shared__ arrays
    by name; dynamic shared memory as one region, or its parts named with --array
    NAME=OFFSET:BYTES), row paddings, CuTe Swizzle<B,M,S>, the TMA swizzles and
    the XOR swizzle synthesized for the array are tried on the traced addresses,
    applied to every instruction of the array; a
    change that misaligns an LDS.64/LDS.128 is costed as the split accesses ptxas
    emits instead (and marked). The changes are ranked by the kernel's wavefronts,
    then extra bytes, and said in the kernel's terms (the padded declaration, the XOR
    of the index, the macro to sweep with shmem sweep KERNEL.cu --define).

    nvdisasm and cuobjdump come with `pip install 'shmem[cuda]'` (or the CUDA
    toolkit); nvcc is needed only for .cu files. The guide to tracing is
    trace.md in the docs folder of shmem's source repository.

    --compare NCU.csv lines the trace up with Nsight Compute's per-instruction
    export (ncu --section SourceCounters, then ncu -i REP --page source --csv
    --print-source sass) by SASS offset: executions, wavefronts and ideal side by
    side, each difference named; a different binary is detected. Given the raw
    page (ncu -i REP --page raw --csv) it compares the per-op totals with the
    launch's counters instead (requests and wavefronts per op, the remote
    accesses' dshared requests and crossbar sectors; op_misc shown as an
    estimate, never a disagreement).

    Exit status: 0 when the kernel was traced (or its parameters listed), 1 when
    --compare found a disagreement, 2 for
    bad arguments, a missing tool, a failed compile or an instruction the
    emulator cannot run (reported with its source line).

    \b
    Examples (shmem's example kernels; nvcc compiles them):
      shmem examples --copy access_specs    # the kernels used below, in ./access_specs/kernels/
      shmem trace access_specs/kernels/transpose.cu -k transpose_naive --block 32,8 --arg n=32
      shmem trace access_specs/kernels/matmul.cu --kernel 'matmul<32>' --block 32,32 \\
          --arg wA=64 --arg wB=32
      shmem trace access_specs/kernels/matmul.cu --list-params
      shmem trace access_specs/kernels/transpose.cu -k transpose_padded -b 32,8 -a n=64 \\
          --grid 2,2 --no-tables
      shmem trace access_specs/kernels/transpose.cu -k transpose_naive -b 32,8 -a n=32 \\
          --format json -o trace.json
      shmem trace access_specs/kernels/matmul.cu -k 'matmul<16>' -b 16,16 -a wA=16 -a wB=16 \\
          --svg trace.svg
      shmem trace tests/data/triton/cache -k layernorm_rows --grid 2 -a n_cols=768
          # a Triton cache entry (here shmem's own, in its source repository)
      shmem trace access_specs/kernels/warp_sgemm.cu -b 256 -a M=64 -a N=128 -a K=64 \\
          --suggest --no-tables
    """
    from ..plumbing.errors import ShmemError
    from ..trace.emulator.budget import Budget
    from ..trace.kernel.params import param_table, unnamed_note
    from ..trace.ncu.compare import compare_file
    from ..trace.pipeline import TraceRequest, kernel_parameters, trace_file, trace_with_code
    from ..trace.result import TraceResult

    env = current_environment()
    path = Path(kernel_path)
    from ..trace.triton.cache import ENTRY_FILES, copied_out, is_triton_input

    require_file(kernel_path, folder=True)
    from ..plumbing.errors import shorten

    if arch is not None and not ARCH.match(arch):
        fail_usage(f"--arch expects sm_XX (e.g. {DEFAULT_ARCH}), got {shorten(arch)!r}")
    if arrays and not suggest:
        fail_usage("--array names parts of shared memory for --suggest; add --suggest")
    from ..lint.config import strings_problem

    problem = strings_problem("--source-root", source_roots)  # each file is checked against each
    if problem is not None:
        fail_usage(problem)
    from ..trace.fixes.arrays import parse_array_option

    for text in arrays:  # checked before any work
        try:
            parse_array_option(text)
        except ShmemError as exc:
            fail_usage(exc.message)
    from ..plumbing.fsutil import check_outputs

    outputs = (output, *pictures().values())
    block_file = params_file[1:] if params_file and params_file.startswith("@") else params_file
    read = kernel_inputs(kernel_path, (*args, *consts, *memory), compare_csv, block_file)
    check_outputs(outputs, read, ENTRY_FILES)
    triton = is_triton_input(path)
    if block is None and not list_params and not triton:
        copied = None if dynamic_smem is not None else copied_out(path)
        if copied is not None:  # a Triton cubin without its entry: say where its launch is
            fail_input(ShmemError(copied, path=str(path), code="invalid-launch"))
        if path.suffix.lower() in (".cu", ".cuh"):  # a binary's .reqntid may give the block
            fail_usage("--block is required to trace (e.g. --block 256 or --block 32,8)")
    block_dims, grid_dims = parse_launch_sizes("1" if block is None else block, grid)
    max_rows = parse_rows(rows)
    request = TraceRequest(
        path=path,
        kernel=kernel_name,
        block=block_dims if block is not None else None,
        grid=grid_dims,
        args=args,
        cluster=parse_cluster(cluster),
        dynamic_smem=dynamic_smem,
        buffer_size=buffer_size,
        arch=arch,
        nvcc_args=nvcc_args,
        source_roots=source_roots,
        budget=Budget.of(max_instructions, max_launch_instructions, time_limit, compile_time_limit),
        outputs=tuple(o for o in outputs if o),
        consts=consts,
        params_file=params_file,
        memory=memory,
        include_roots=include_roots(),
        nvcc_trusted=True,
        build_cache=build_cache_folder(build_cache),
    )
    try:
        if list_params:
            entries = _triton_entries(request) if triton else None
            folders = [e.folder for e in entries] if entries else [None]
            listed = [p for f in folders for p in kernel_parameters(_entry(request, f))]
            if fmt == "json":
                emit(params_json(listed, [str(f) for f in folders if f]), output)
                return
            if entries:
                env.out(f"{len(listed)} Triton cache entries (trace one by its folder, or with "
                        "--kernel HASH, the start of its folder's name):\n")  # fmt: skip
            elif len(listed) > 1:
                env.out(f"{len(listed)} kernels (trace one with --kernel NAME):\n")
            heads = [e.describe() for e in entries] if entries else [""] * len(listed)
            notes: list[str] = []  # a file's kernels': each said once, after their tables
            for n, (head, (kernel, params)) in enumerate(zip(heads, listed, strict=True)):
                if n:
                    env.out("")
                if head:
                    env.out(head)
                print_params(env, kernel, param_table(params))
                said = unnamed_note(params)  # no names (arg0, ...): why the source gave none
                if said and entries:  # each Triton entry's own
                    env.out(f"note: {said}")
                elif said and said not in notes:
                    notes.append(said)
            for said in notes:
                env.out(f"note: {said}")
            return
        blocks = grid_dims[0] * grid_dims[1] * grid_dims[2]
        compares: list[KernelCompare] | None = None
        with progress_line(env, blocks) as progress:
            if suggest and compare_csv is not None:
                fail_usage("--suggest and --compare-csv are separate runs: give one of them")
            if suggest:
                from ..trace.fixes.suggest_kernel import trace_with_suggestions

                launch = _launch_words(block, grid, args, dynamic_smem, kernel_name)
                launch += _build_words(arch, nvcc_args, cluster, consts, params_file, memory)
                launch += ["--build-cache", build_cache] if build_cache else []
                traced = trace_with_suggestions(
                    request, arrays=arrays, launch=launch, progress=progress
                )
                report = TraceResult((traced,))
            elif compare_csv is None:
                report = TraceResult((trace_file(request, progress=progress),))
            else:
                traced, code = trace_with_code(request, progress=progress)
                report = TraceResult((traced,))
                compares = compare_file(traced.kernels, code, compare_csv)
    except ShmemError as exc:
        fail_input(exc)
    options = report_options(
        env,
        fmt=fmt,
        no_color=no_color,
        output=output,
        width=width,
        words=words,
        no_tables=no_tables,
        heatmap=heatmap,
        rows=max_rows,
    )
    agrees = output_report(
        report,
        options,
        fmt=fmt,
        output=output,
        every=every,
        width=width,
        title=f"shmem trace {kernel_path}",
        compares=compares,
    )
    if not agrees:
        sys.exit(ExitCode.FINDINGS)


def _triton_entries(request: TraceRequest) -> list[TritonEntry] | None:
    """The entries of a Triton cache root whose parameters ``--list-params`` lists, where
    it names several (None: one entry, or an error saying which to choose)."""
    from ..trace.triton.roots import listed_entries

    return listed_entries(Path(request.path), request.kernel, request.tree().inside)


def _entry(request: TraceRequest, folder: Path | None) -> TraceRequest:
    """The request for one entry folder of a cache root (itself where ``folder`` is None)."""
    return request if folder is None else dataclasses.replace(request, path=folder, kernel=None)


def _project() -> LintConfig | None:
    """``[tool.shmem]`` of the project shmem runs in (None without one)."""
    from ..lint.config import find_pyproject, load_config
    from ..plumbing.errors import ShmemError

    found = find_pyproject(Path.cwd())
    if found is None:
        return None
    try:
        return load_config(found)
    except ShmemError as exc:
        fail_input(exc)


def include_roots() -> tuple[str, ...]:
    """``[tool.shmem] include-roots`` of the project shmem runs in (none without one)."""
    config = _project()
    return () if config is None else config.include_roots


def build_cache_folder(given: str | None) -> str | None:
    """The build cache: ``--build-cache`` (``given``), else ``[tool.shmem] build-cache``, else
    None; checked now (not made: the first build kept makes it), a usage error when it
    cannot be one."""
    from ..cuda.build_cache import open_cache
    from ..plumbing.errors import ShmemError

    if given is None:
        config = _project()
        given = None if config is None else config.build_cache
    if given is None:
        return None
    try:
        return str(open_cache(given).folder)
    except ShmemError as exc:
        fail_usage(exc.message)


def _launch_words(
    block: str | None,
    grid: str,
    args: tuple[str, ...],
    dynamic_smem: int | None,
    kernel: str | None,
) -> list[str]:
    """The launch options again, for the ``shmem sweep`` command a suggestion names (no
    ``-b`` where none was given: a Triton entry's or a ``.reqntid`` kernel's own block)."""
    words = [*(["-k", kernel] if kernel else []), *(["-b", block] if block else [])]
    if grid != "1":
        words += ["-g", grid]
    for a in args:
        words += ["-a", a]
    if dynamic_smem:
        words += ["--dynamic-smem", str(dynamic_smem)]
    return words


def _build_words(
    arch: str | None,
    nvcc_args: tuple[str, ...],
    cluster: str | None,
    consts: tuple[str, ...],
    params_file: str | None,
    memory: tuple[str, ...],
) -> list[str]:
    """The build and launch options ``shmem sweep`` takes as ``shmem trace`` does, for the
    command a suggestion names (without them a CuTe kernel's sweep finds no headers)."""
    from ..trace.fixes.kernel_terms import NVCC_ARG  # the spelling the suggestion's words drop

    words = ["--arch", arch] if arch else []
    words += [f"{NVCC_ARG}{a}" for a in nvcc_args]
    words += ["--cluster", cluster] if cluster else []
    for c in consts:
        words += ["--const", c]
    words += ["--params", params_file] if params_file else []
    for m in memory:
        words += ["--memory", m]
    return words
