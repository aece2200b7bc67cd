"""``shmem verify``: measure every access of the specs on this machine's GPU.

Argument handling, file I/O and exit codes only; code generation, the tools,
the SASS and CSV readers and the comparison live in :mod:`shmem_cli.verify`.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..cuda.toolchain import COMPILE_SECONDS
from ..hardware.arch import DEFAULT_ARCH
from ..render.checks.formats import FORMATS as CHECK_FORMATS
from ..render.snippet import with_source
from ..spec.source import error_sources
from ..verify.runner import PROFILE_SECONDS
from .common import (
    CONTEXT,
    ExitCode,
    ShmemCommand,
    check_format_names,
    emit,
    fail_input,
    fail_usage,
    output_options,
    require_specs,
)
from .environment import current_environment
from .trace_budget import seconds_option

if TYPE_CHECKING:
    from ..plumbing.errors import ShmemError
    from ..verify.codegen import Target
    from ..verify.compare import VerifyReport

ARCH = re.compile(r"^sm_\d{2,3}[a-z]?\Z")


def _say(message: str) -> None:
    current_environment().err(f"shmem verify: {message}")


def _plan(paths: tuple[str, ...]) -> tuple[list[Target], list[ShmemError]]:
    from ..plumbing.errors import ShmemError
    from ..spec.compile import load_spec
    from ..verify.codegen import plan_spec
    from .lint import source_roots

    found = require_specs(paths, "verify")
    roots = functools.cache(source_roots)  # [tool.shmem], read where a spec has a kernel
    targets: list[Target] = []
    errors: list[ShmemError] = []
    used: set[str] = set()
    for f in found.paths:
        walk_error = found.error_of(f)
        if walk_error is not None:  # a folder that could not be searched
            errors.append(ShmemError(walk_error).located(str(f)))
            continue
        try:
            targets += plan_spec(load_spec(f, roots=roots), used)
        except ShmemError as exc:
            errors.append(exc.located(str(f)))
    return targets, errors


def _read_dump(path: Path) -> str:
    """A SASS dump as text; gzip-compressed dumps (``sass.txt.gz``) are unpacked."""
    from ..verify.sass_check import read_dump

    return read_dump(path)


def _from_csv(targets: list[Target], csv_path: Path, sass_path: Path | None) -> VerifyReport:
    from ..plumbing.errors import ShmemError
    from ..verify import ncu, runner, sass_check
    from ..verify.compare import VerifyReport, compare

    try:
        launches = ncu.read_csv(csv_path)
    except ShmemError as exc:
        fail_input(exc)
    if sass_path is None:
        for name in (runner.SASS_FILE, runner.SASS_FILE + ".gz"):
            if os.path.isfile(csv_path.parent / name):
                sass_path = csv_path.parent / name
                break
    functions = sass_check.parse_sass(_read_dump(sass_path), str(sass_path)) if sass_path else None
    device = runner.recorded_device(csv_path.parent)
    if not device:
        caps = sorted(
            {launch.compute_capability for launch in launches if launch.compute_capability}
        )
        device = f"recorded in {csv_path}" + (
            f" (compute capability {', '.join(caps)})" if caps else ""
        )
    arch = runner.recorded_arch(csv_path.parent)
    return VerifyReport(tuple(compare(targets, launches, functions)), device=device, arch=arch)


def _measure_here(
    targets: list[Target], arch: str | None, keep: str | None, limits: tuple[float, float]
) -> VerifyReport:
    """Build, dump and profile here; ``limits``: the seconds of nvcc and of ncu."""
    from ..cuda.toolchain import ToolError
    from ..plumbing.fsutil import write_atomic
    from ..verify import ncu, runner, sass_check
    from ..verify.compare import VerifyReport, compare

    tools = runner.find_tools()
    missing = tools.missing()
    if missing:
        current_environment().err("shmem: error: cannot verify on this machine:")
        for m in missing:
            current_environment().err(f"  - {m}")
        current_environment().err(
            "  (use --emit DIR to write the benchmark for a machine that has them)"
        )
        sys.exit(ExitCode.USAGE)
    assert tools.gpu is not None
    build_arch = arch or tools.gpu.arch or "native"
    scratch = None
    if keep:
        folder = Path(keep)
    else:
        scratch = tempfile.TemporaryDirectory(prefix="shmem-verify-")
        folder = Path(scratch.name)
    try:
        runner.write_bundle(folder, targets, build_arch)
        device = runner.describe_environment(tools)
        write_atomic(folder / runner.ENV_FILE, device + "\n")
        _say(f"compiling {len(targets)} kernels for {build_arch} in {folder}")
        runner.compile_program(tools, folder, build_arch, limits[0])
        functions = sass_check.parse_sass(runner.dump_sass(tools, folder))
        _say("profiling with Nsight Compute (one launch per kernel; this takes a while)")
        csv = runner.profile(tools, folder, limits[1])
        launches = ncu.parse_csv(csv, str(folder / runner.CSV_FILE))
    except ToolError as exc:
        fail_usage(str(exc))
    finally:
        if scratch is not None:
            scratch.cleanup()
    return VerifyReport(
        tuple(compare(targets, launches, functions)), device=device, arch=build_arch
    )


@click.command(
    cls=ShmemCommand,
    context_settings=CONTEXT,
    short_help="Compare predictions with Nsight Compute on a real GPU.",
)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--arch",
    metavar="sm_XX",
    help="Compile for this GPU architecture "
    f"(default: the local GPU's; {DEFAULT_ARCH} for --emit).",
)
@click.option(
    "--emit",
    "emit_dir",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Only write the benchmark (.cu, manifest, run.sh) to DIR, for a GPU elsewhere.",
)
@click.option(
    "--from-ncu",
    "from_ncu",
    metavar="CSV",
    type=click.Path(dir_okay=False, exists=True),
    help="Compare against a recorded ncu CSV (from run.sh) instead of running anything.",
)
@click.option(
    "--sass",
    "sass_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, exists=True),
    help="With --from-ncu: the cuobjdump -sass dump to check, plain or gzip-compressed "
    "(default: sass.txt or sass.txt.gz beside the CSV).",
)
@click.option(
    "--keep",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Build and profile in DIR and keep everything there (source, SASS, raw ncu CSV).",
)
@seconds_option(
    "--compile-time-limit",
    "The most wall time of nvcc's build of the benchmark, in seconds.",
    COMPILE_SECONDS,
)
@seconds_option(
    "--profile-time-limit",
    "The most wall time of Nsight Compute's run of the benchmark, in seconds.",
    PROFILE_SECONDS,
)
@click.option(
    "--strict", is_flag=True, help="Also fail (exit 1) when an access could not be measured."
)
@output_options(check_format_names)
def verify(
    paths: tuple[str, ...],
    arch: str | None,
    emit_dir: str | None,
    from_ncu: str | None,
    sass_file: str | None,
    keep: str | None,
    compile_time_limit: float,
    profile_time_limit: float,
    strict: bool,
    fmt: str,
    output: str | None,
    no_color: bool,
) -> None:
    """Check shmem's predictions for the specs in PATHS against a real GPU.

    PATHS are spec files and directories (searched recursively for *.yaml and
    *.yml). For every access, a CUDA kernel that makes exactly that access (one
    thread block of the spec's shape; the same dtype, offsets, padding,
    swizzle, loops and predicate) is compiled with nvcc, its SASS is checked
    for the intended shared-memory instruction (LDS.128, ATOMS.POPC.INC.32,
    LDSM.16.M88.4 ...), and Nsight Compute (ncu) counts its warp-level
    requests and wavefronts (the raw wavefront counter minus arbitration).
    Each access is reported as ok, MISMATCH, unmeasurable (the compiler
    emitted another instruction, so the counters would not be about it) or
    not measured (no counters for its kernel).

    \b
    Three ways to run it:
      here        needs nvcc, cuobjdump, ncu and an NVIDIA GPU on this machine;
                  --keep DIR keeps the source, SASS and raw ncu CSV
      --emit DIR  writes the benchmark (.cu, manifest.json, run.sh) for a GPU
                  elsewhere; needs no CUDA tools
      --from-ncu  compares with the ncu.csv that run.sh (or --keep) recorded,
                  checking sass.txt or sass.txt.gz beside it; needs no GPU

    Kernels are named after the spec file's stem and the access, so the same
    specs (same file names) must be given to --emit and --from-ncu. The
    verification notes of shmem's documentation say how the kernels are built
    and list the results recorded on an H200.

    Exit status: 0 if every measured access matches, 1 on any mismatch (with
    --strict also when an access is unmeasurable or not measured), 2 for bad
    arguments or specs, a missing tool or GPU, or a failed build or profile.

    \b
    Examples:
      shmem examples --copy access_specs    # the specs used below, in ./access_specs/
      shmem verify access_specs/                      # on a GPU with Nsight Compute
      shmem verify access_specs/ --keep verify-run/   # on a GPU, keeping what it built
      shmem verify access_specs/ --emit bench/ --arch sm_90    # then: bash bench/run.sh
      shmem verify access_specs/ --from-ncu bench/ncu.csv      # needs a GPU run's ncu.csv
      shmem verify access_specs/ --from-ncu bench/ncu.csv -f json -o verify.json  # needs a GPU run
    """
    if emit_dir and from_ncu:
        fail_usage("--emit and --from-ncu exclude each other")
    if keep and (emit_dir or from_ncu):
        fail_usage("--keep applies only when verify builds and profiles here")
    if sass_file and not from_ncu:
        fail_usage("--sass applies only with --from-ncu")
    from ..plumbing.errors import shorten

    if arch is not None and not ARCH.match(arch):
        fail_usage(f"--arch expects sm_XX (e.g. {DEFAULT_ARCH}), got {shorten(arch)!r}")
    from ..plumbing.fsutil import check_outputs

    inputs = [*paths, *(p for p in (from_ncu, sass_file) if p)]
    from ..verify.runner import BUNDLE

    # the bundle's folder is made by --emit: its files are checked only when it exists
    bundle = [Path(emit_dir) / n for n in BUNDLE] if emit_dir and os.path.isdir(emit_dir) else []
    check_outputs((output, *bundle), inputs)
    targets, errors = _plan(paths)
    for err in errors:
        current_environment().err(with_source(err, error_sources(err)))
    if not targets:
        sys.exit(ExitCode.USAGE if errors else ExitCode.OK)
    if emit_dir:
        from ..verify import runner

        build_arch = arch or DEFAULT_ARCH
        runner.write_bundle(Path(emit_dir), targets, build_arch)
        emit(
            f"wrote {len(targets)} kernels to {emit_dir}/ "
            f"({runner.SOURCE}, {runner.MANIFEST}, run.sh).\n"
            f"On the GPU machine: bash {emit_dir}/run.sh [{build_arch}]\n"
            f"Then here: shmem verify {' '.join(paths)} --from-ncu {emit_dir}/{runner.CSV_FILE}\n",
            output,
        )
        sys.exit(ExitCode.USAGE if errors else ExitCode.OK)
    if from_ncu:
        report = _from_csv(targets, Path(from_ncu), Path(sass_file) if sass_file else None)
    else:
        report = _measure_here(targets, arch, keep, (compile_time_limit, profile_time_limit))
    if errors:
        from dataclasses import replace

        report = replace(report, errors=tuple(errors))
    if fmt == "json":
        from ..render.report_formats import render_json

        text = render_json(report)
    elif fmt in CHECK_FORMATS:
        from ..checks.report import Severity
        from ..render.checks.formats import CheckContext, render_check
        from ..verify.checks import CHECKS, check_report

        checked = check_report(report, strict=strict)
        context = CheckContext("shmem verify", CHECKS, Severity.ERROR)
        text = render_check(checked, fmt, context)
    else:
        from ..verify.report import render_text

        text = render_text(report)
    emit(text, output)
    if errors:
        sys.exit(ExitCode.USAGE)
    if report.failed or (strict and not report.complete):
        sys.exit(ExitCode.FINDINGS)
