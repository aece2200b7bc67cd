"""``shmem sweep KERNEL.cu --define NAME=VALUES``: the launch options and the run.

The options are ``shmem trace``'s launch (``--kernel``, ``--block``, ``--grid``,
``--arg``, ``--params``, ``--const``, ``--memory``, ``--cluster``, ``--dynamic-smem``,
``--buffer-size``, ``--arch``, ``--nvcc-arg``, ``--build-cache``), ``--jobs`` and
``--rank``; :func:`launch_options` declares them once on the ``sweep`` command and
hands them to it as one mapping. The work is in
:mod:`shmem_cli.trace.fixes.compiled_sweep`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..analysis.sweep.report import RANKS
from ..hardware.arch import DEFAULT_ARCH
from .common import MAX_JOBS, emit_simple_report, fail, fail_input, fail_usage, require_file
from .trace_budget import KEYS as BUDGET_KEYS
from .trace_budget import OPTIONS as BUDGET_OPTIONS
from .trace_budget import budget_of
from .trace_options import dynamic_smem_option
from .trace_sizes import ByteCount

F = TypeVar("F", bound=Callable[..., Any])

LAUNCH_DEFAULTS: dict[str, Any] = {
    "kernel_name": None,
    "block": None,
    "grid": "1",
    "args": (),
    "params_file": None,
    "consts": (),
    "memory": (),
    "cluster": None,
    "dynamic_smem": 0,
    "buffer_size": 8 << 20,
    "arch": None,
    "nvcc_args": (),
    "build_cache": None,
    "jobs": None,
    "rank": "wavefronts",
    **dict.fromkeys(BUDGET_KEYS),
}

_OPTIONS = (
    click.option("-k", "--kernel", "kernel_name", metavar="NAME", help="KERNEL.cu: the kernel."),
    click.option("-b", "--block", metavar="X[,Y[,Z]]", help="KERNEL.cu: threads per block."),
    click.option("-g", "--grid", metavar="X[,Y[,Z]]", default="1", help="KERNEL.cu: blocks."),
    click.option(
        "-a", "--arg", "args", multiple=True, metavar="KEY=VALUE", help="KERNEL.cu: an argument."
    ),
    click.option(
        "--params",
        "params_file",
        metavar="@FILE",
        help="KERNEL.cu: the whole parameter block a host program passed (as shmem trace).",
    ),
    click.option(
        "--const",
        "consts",
        multiple=True,
        metavar="NAME=VALUE",
        help="KERNEL.cu: a __constant__ variable's value (as shmem trace).",
    ),
    click.option(
        "--memory",
        "memory",
        multiple=True,
        metavar="ADDR=@FILE",
        help="KERNEL.cu: device memory the host wrote, at its address (as shmem trace).",
    ),
    click.option(
        "--cluster", metavar="X[,Y[,Z]]", help="KERNEL.cu: CTAs of a thread-block cluster."
    ),
    dynamic_smem_option(0, "KERNEL.cu: dynamic shared memory in bytes."),
    click.option(
        "--buffer-size",
        metavar="BYTES",
        type=ByteCount(1, 1 << 32),
        default=8 << 20,
        help="KERNEL.cu: each zero-filled buffer.",
    ),
    click.option(
        "--arch",
        metavar="sm_XX",
        help=f"KERNEL.cu: compile for (default {DEFAULT_ARCH}, or {DEFAULT_ARCH}a where the "
        "code needs it, said in a note).",
    ),
    click.option(
        "--nvcc-arg",
        "nvcc_args",
        multiple=True,
        metavar="ARG",
        help="KERNEL.cu: one more nvcc argument for every variant.",
    ),
    click.option(
        "--build-cache",
        metavar="DIR",
        type=click.Path(file_okay=False),
        help="KERNEL.cu: keep each variant's build in DIR, as shmem trace --build-cache "
        "[default: [tool.shmem] build-cache, else no cache: the builds go to a temporary "
        "folder removed when the sweep ends].",
    ),
    click.option(
        "-j",
        "--jobs",
        type=click.IntRange(1, MAX_JOBS),
        metavar="N",
        help="KERNEL.cu: compiles at once (default: the CPU count).",
    ),
    click.option(
        "--rank",
        type=click.Choice(RANKS),
        default="wavefronts",
        show_default=True,
        help="KERNEL.cu: rank by total wavefronts, or by wavefronts per ideal wavefront "
        "(where a --define changes the work, not only the layout).",
    ),
    *BUDGET_OPTIONS,
)


def launch_options(fn: F) -> F:
    """Declare the kernel-sweep options; the command receives them as ``launch=dict``."""

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> Any:
        launch = {k: kwargs.pop(k) for k in LAUNCH_DEFAULTS}
        return fn(launch=launch, **kwargs)

    out: Any = wrapper
    for option in reversed(_OPTIONS):
        out = option(out)
    return out  # type: ignore[no-any-return]


def sweep_kernel(
    path: str,
    defines: tuple[str, ...],
    launch: dict[str, Any],
    *,
    fmt: str,
    output: str | None,
    no_color: bool,
    width: int | None,
) -> None:
    """Compile, trace and rank every ``--define`` combination of the kernel at ``path``."""
    from ..plumbing.errors import ShmemError, shorten
    from ..trace.fixes.compiled_sweep import Define, parse_define, run_compiled_sweep
    from ..trace.pipeline import TraceRequest
    from .trace import ARCH, build_cache_folder, include_roots
    from .trace_sizes import parse_cluster, parse_launch_sizes

    require_file(path)
    if not defines:
        fail_usage("nothing to sweep: give --define NAME=VALUES (e.g. --define PAD=0,1,2,4,8)")
    if launch["block"] is None:
        fail_usage("--block is required to trace each variant (e.g. --block 256)")
    if launch["arch"] is not None and not ARCH.match(launch["arch"]):
        fail_usage(f"--arch expects sm_XX (e.g. {DEFAULT_ARCH}), got {shorten(launch['arch'])!r}")
    axes: list[Define] = []
    for text in defines:
        try:
            axes.append(parse_define(text))
        except ValueError as exc:
            fail_usage(f"--define {shorten(text)}: {shorten(str(exc), 200)}")
    block, grid = parse_launch_sizes(launch["block"], launch["grid"])
    request = TraceRequest(
        path=path,
        kernel=launch["kernel_name"],
        block=block,
        grid=grid,
        args=launch["args"],
        params_file=launch["params_file"],
        consts=launch["consts"],
        memory=launch["memory"],
        cluster=parse_cluster(launch["cluster"]),
        dynamic_smem=launch["dynamic_smem"],
        buffer_size=launch["buffer_size"],
        arch=launch["arch"],
        nvcc_args=launch["nvcc_args"],
        budget=budget_of(launch),
        outputs=(output,) if output else (),
        include_roots=include_roots(),
        nvcc_trusted=True,  # typed on the command line, as shmem trace's
        build_cache=build_cache_folder(launch["build_cache"]),
    )
    try:
        result = run_compiled_sweep(request, axes, jobs=launch["jobs"], rank=launch["rank"])
    except ShmemError as exc:
        fail(exc)
    title = f"shmem sweep {path}"
    emit_simple_report(result, fmt=fmt, output=output, no_color=no_color, width=width, title=title)
    if not any(v.valid for v in result.variants):
        first = next(v.error for v in result.variants if v.error is not None)
        assert first is not None
        fail_input(first)
