"""``shmem sweep``: analyze one spec under many paddings, swizzles and params."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from .common import (
    CONTEXT,
    ShmemCommand,
    emit_simple_report,
    fail,
    fail_usage,
    kernel_inputs,
    output_options,
    picture_options,
    pictures,
    report_format_names,
    require_paths,
    width_option,
)
from .sweep_kernel import LAUNCH_DEFAULTS, launch_options


@click.command(
    cls=ShmemCommand,
    context_settings=CONTEXT,
    short_help="Rank paddings, swizzles and params of a spec, or -D variants of a kernel, by cost.",
)
@click.argument("spec", metavar="SPEC|KERNEL.cu", type=click.Path())
@click.option(
    "--pad",
    "pads",
    multiple=True,
    metavar="[ARRAY=]VALUES",
    help="Padding (elements added to the last dimension) of every array, or of ARRAY only.",
)
@click.option(
    "--swizzle",
    "swizzles",
    multiple=True,
    metavar="[ARRAY=]MODES",
    help="Comma-separated swizzles of every array, or of ARRAY only: none, 32B, 64B, 128B "
    "(TMA modes), Swizzle<bits,base,shift> (CuTe; several joined by ^) or synth (the XOR "
    "swizzle shmem synthesizes for the array).",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUES",
    help="Values of the spec's param NAME.",
)
@click.option(
    "--define",
    "defines",
    multiple=True,
    metavar="NAME=VALUES",
    help="KERNEL.cu: compile with -DNAME=VALUE for each value (every combination) and trace each.",
)
@launch_options
@output_options(report_format_names)
@picture_options
@width_option
def sweep(
    spec: str,
    pads: tuple[str, ...],
    swizzles: tuple[str, ...],
    params: tuple[str, ...],
    defines: tuple[str, ...],
    launch: dict[str, Any],
    fmt: str,
    output: str | None,
    no_color: bool,
    width: int | None,
) -> None:
    """Analyze SPEC under every combination of paddings, swizzles and params, ranked.

    VALUES is a range a..b or a..b:step (both ends INCLUSIVE: 0..4 is 0,1,2,3,4),
    a list a,b,c, or one number. Every option may be repeated for other arrays or
    params (--pad a=0..2 --pad b=0,4), never for the same one (that is a usage
    error: give its values once); together they form the cross product, params
    varying slowest and swizzles fastest.

    One row per variant: total wavefronts, excess over the ideal, the worst
    conflict (ways), a cycle estimate (where it differs from the wavefronts),
    the extra shared memory the variant costs
    over the same arrays unpadded and unswizzled, and whether the block still
    fits in shared memory; with several accesses, a column per access. The best
    variant (its row marked 'best', and a 'best:' line under the table) has the
    fewest wavefronts, then the fewest extra bytes,
    then comes first; variants that do not fit are never best. A variant whose
    index leaves the array, or whose swizzle alignment is not met, is shown with
    the reason instead of stopping the sweep.

    KERNEL.cu with --define NAME=VALUES: every combination of the values is compiled
    (nvcc -cubin -lineinfo -O3 -DNAME=VALUE ..., built as shmem trace builds a .cu: an
    -I folder typed with --nvcc-arg may be a library's outside the tree; several at once,
    each in a temporary folder removed at the end, or kept in --build-cache DIR) and
    traced with the launch that --block, --grid, --arg, --dynamic-smem, --params,
    --const, --memory and --cluster (as shmem trace takes them) give, the same for
    every variant; the variants are ranked by total wavefronts, then by shared bytes,
    with the per-op requests and wavefronts of each and a note where the compiler
    changed the shared-memory instructions (LDS.128 -> LDS.64 + LDS.64). A variant
    that fails to compile or trace is listed with its error; the others still run.

    Exit status: 0 when the sweep ran, 2 for bad options, an invalid spec, or a kernel
    sweep in which no variant could be compiled and traced.

    \b
    Examples:
      shmem examples --copy access_specs    # the specs used below, in ./access_specs/
      shmem sweep access_specs/transpose_naive.yaml --pad 0..4
      shmem sweep access_specs/sweep_ldmatrix_swizzle.yaml --swizzle none,32B,64B,128B
      shmem sweep access_specs/transpose_naive.yaml --pad tile=0..8:2 --swizzle tile=none,128B
      shmem sweep access_specs/sweep_transpose_pad.yaml --param PAD=0..4 -f json -o sweep.json
      shmem sweep access_specs/kernels/warp_sgemm.cu --define PAD=0,1,2,4,8 -b 256 \\
          -a M=64 -a N=128 -a K=64
    """
    from ..analysis.sweep import Axis, Plan, parse_axis, run_sweep
    from ..plumbing.errors import ShmemError, shorten
    from ..spec.compile import load_spec
    from .lint import source_roots

    require_paths([spec])
    from ..plumbing.fsutil import check_outputs

    inputs = (*launch["args"], *launch["consts"], *launch["memory"])
    block_file = (launch["params_file"] or "").removeprefix("@")
    check_outputs((output, *pictures().values()), kernel_inputs(spec, inputs, block_file))
    if Path(spec).suffix.lower() in (".cu", ".cuh"):
        from .sweep_kernel import sweep_kernel

        if pads or swizzles or params:
            fail_usage(
                "--pad, --swizzle and --param sweep a spec; a kernel's variants are "
                "--define NAME=VALUES (its macros), compiled and traced"
            )
        sweep_kernel(spec, defines, launch, fmt=fmt, output=output, no_color=no_color, width=width)
        return
    if defines or any(v not in (None, (), LAUNCH_DEFAULTS.get(k)) for k, v in launch.items()):
        fail_usage(
            "--define and the launch options (--block, --arg, ...) sweep a kernel (.cu); "
            "a spec is swept with --pad, --swizzle and --param"
        )
    axes: list[Axis] = []
    given: dict[tuple[str, str | None], str] = {}  # (kind, target) -> the option's text
    for kind, texts in (("param", params), ("pad", pads), ("swizzle", swizzles)):
        for text in texts:
            try:
                axis = parse_axis(kind, text)
            except ValueError as exc:
                fail_usage(f"--{kind} {shorten(text)}: {shorten(str(exc), 200)}")
            key = (axis.kind, axis.target)
            if key in given:
                what = (
                    f"param {axis.target}"
                    if kind == "param"
                    else f"{kind} of {axis.target or 'every array'}"
                )
                fail_usage(
                    f"--{kind} {given[key]} and --{kind} {text} both set the {what}; "
                    f"give its values once (a list a,b,c or a range a..b)"
                )
            given[key] = text
            axes.append(axis)
    if not axes:
        fail_usage(
            "nothing to sweep: give --pad, --swizzle and/or --param (see shmem sweep --help)"
        )
    try:
        compiled = load_spec(spec, roots=functools.cache(source_roots))  # the lint's [tool.shmem]
        plan = Plan.of(axes)
        plan.check(compiled)
        result = run_sweep(compiled, plan)
    except ShmemError as exc:
        fail(exc)
    title = f"shmem sweep {spec}"
    emit_simple_report(result, fmt=fmt, output=output, no_color=no_color, width=width, title=title)
