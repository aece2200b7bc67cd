"""The options of ``shmem trace`` (the kernel, the launch, the build, --suggest, --compare),
declared here so that the command's module holds only what it does with them; the budget's
are :mod:`.trace_budget`'s, the output's :mod:`.common`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..hardware.arch import DEFAULT_ARCH, PROFILES
from .trace_sizes import ByteCount

F = TypeVar("F", bound=Callable[..., Any])


def _block_smem(_ctx: click.Context, _param: click.Parameter, value: int | None) -> int | None:
    """--dynamic-smem past every profile's per-block bound, refused before any kernel is
    read (the kernel's own profile then checks it with its static shared memory)."""
    widest = max(PROFILES.values(), key=lambda p: p.smem_per_block)
    if value is not None and value > widest.smem_per_block:
        raise click.BadParameter(
            f"more than {widest.smem_per_block:,} bytes: {widest.smem_limit()}"
        )
    return value


def dynamic_smem_option(default: int | None, help_: str) -> Callable[[F], F]:
    """``--dynamic-smem`` of trace and sweep: the help states the bound the check uses."""
    bound = PROFILES[DEFAULT_ARCH]
    said = (
        f"{help_} With the kernel's static shared memory at most one block's: "
        f"{bound.smem_per_block:,} bytes ({bound.smem_per_block // 1024} KiB) on an "
        f"{bound.name} ({bound.measured_on})."
    )
    return click.option(
        "--dynamic-smem",
        metavar="BYTES",
        type=ByteCount(0, 1 << 62),
        default=default,
        callback=_block_smem,
        help=said,
    )


OPTIONS = (
    click.argument("kernel_path", metavar="KERNEL", type=click.Path()),
    click.option(
        "-k",
        "--kernel",
        "kernel_name",
        metavar="NAME",
        help="The kernel to trace: its C++ name (MatrixMulCUDA<32>), mangled name, or a unique "
        "prefix (needed when the file holds several).",
    ),
    click.option(
        "-b",
        "--block",
        metavar="X[,Y[,Z]]",
        help="Threads per block (required to trace, except a Triton cache entry: num_warps * 32).",
    ),
    click.option(
        "-g",
        "--grid",
        metavar="X[,Y[,Z]]",
        default="1",
        show_default=True,
        help=(
            "Blocks (also a Python tuple, '(64,)'); every block is counted (blocks proven "
            "alike run once per class and count "
            "for the rest), except in a grid past the budget: a sample of blocks runs and only "
            "those are counted (the report says so)."
        ),
    ),
    click.option(
        "-a",
        "--arg",
        "args",
        multiple=True,
        metavar="KEY=VALUE",
        help="A kernel argument: KEY is the 0-based position or the name in the source; VALUE a "
        "number, a,b,c for a struct's fields, or @FILE.bin / @FILE.npy for a pointer's buffer.",
    ),
    click.option(
        "--params",
        "params_file",
        metavar="@FILE",
        help="The kernel's whole parameter block as a host program passed it (sizeof its "
        "parameters, e.g. a CUTLASS/FlashAttention Params struct written with fwrite): the device "
        "pointers in it need no buffers (memory the launch did not describe reads as untouched "
        "device memory); --arg overrides single parameters.",
    ),
    click.option(
        "--const",
        "consts",
        multiple=True,
        metavar="NAME=VALUE",
        help="A __constant__ variable's value, as cudaMemcpyToSymbol sets it: NAME=1,2,3 (in its "
        "declared type; or NAME=float:1,2,3) or NAME=@FILE.bin/.npy. Unset variables read as the "
        "cubin initialises them (0 without an initialiser: named in the report).",
    ),
    click.option(
        "--memory",
        "memory",
        multiple=True,
        metavar="ADDR=@FILE",
        help="Device memory the host program wrote before the launch, at its real address "
        "(what cudaMalloc returned, 0x... or decimal): @FILE.bin holds the bytes as it "
        "wrote them (fwrite after cudaMemcpy; or a .npy), ADDR=TYPE:v,v,... typed values "
        "(int:64,1,1280 or uint64_t:0x7f...). Read as written, exactly: a grouped GEMM's "
        "problem sizes and pointer arrays behind --params pointers (repeat per range).",
    ),
    click.option(
        "--cluster",
        metavar="X[,Y[,Z]]",
        help="CTAs of a thread-block cluster, as cudaLaunchKernelEx's cluster dimension "
        "[default: the kernel's __cluster_dims__, a Triton entry's cluster_dims (num_ctas "
        "from Triton 3.6), else 1]: the "
        "CTAs of each cluster are traced together (distributed shared memory, TMA multicast, "
        "cluster barriers).",
    ),
    dynamic_smem_option(
        None,
        "Dynamic shared memory (extern __shared__) in bytes [default: 0; a Triton cache "
        "entry: its metadata's shared].",
    ),
    click.option(
        "--buffer-size",
        metavar="BYTES",
        type=ByteCount(1, 1 << 32),
        default=8 << 20,
        show_default=True,
        help="Size of each zero-filled buffer made up for a pointer argument not given.",
    ),
    click.option(
        "--arch",
        metavar="sm_XX",
        help=f"Compile for / pick the cubin of this architecture (default: {DEFAULT_ARCH}, "
        f"or {DEFAULT_ARCH}a for a .cu whose code needs it, said in a note; a .cubin's own).",
    ),
    click.option(
        "--nvcc-arg",
        "nvcc_args",
        multiple=True,
        metavar="ARG",
        help="An extra nvcc argument for a .cu file (repeat: --nvcc-arg=-DTILE=32 "
        "--nvcc-arg=-I.; a library's headers anywhere: --nvcc-arg=-I$CUTLASS/include).",
    ),
    click.option(
        "--source-root",
        "source_roots",
        multiple=True,
        metavar="DIR",
        type=click.Path(file_okay=False),
        help="A folder the build of a .cu may read (its #includes and -I folders; repeat), "
        "and where a Triton entry's kernel .py is read for parameter names (Triton 3.2-3.4). "
        "Default: the repository holding KERNEL, or its folder.",
    ),
    click.option(
        "--build-cache",
        metavar="DIR",
        type=click.Path(file_okay=False),
        help="Keep each .cu build in DIR (made when a build is first kept; its parent must "
        "exist) and take it "
        "from there while the source, the headers the build read, the nvcc arguments, --arch "
        "and nvcc are unchanged [default: [tool.shmem] build-cache, else no cache: shmem writes "
        "no file unasked].",
    ),
    click.option(
        "--suggest",
        is_flag=True,
        help="For each shared array with bank conflicts, try paddings and swizzles on the traced "
        "addresses and rank them (vector accesses a change misaligns are costed split).",
    ),
    click.option(
        "--array",
        "arrays",
        multiple=True,
        metavar="NAME=OFFSET:BYTES",
        help="With --suggest: a part of dynamic shared memory to treat as its own array "
        "(offset from the start of dynamic shared memory; repeat for each part).",
    ),
    click.option(
        "--list-params",
        is_flag=True,
        help="Only list the parameters (position, name, type, offset, size) of the kernel, or of "
        "every kernel of the file when no --kernel is given (of a Triton cache root: of each "
        "entry).",
    ),
    click.option(
        "--compare",
        "compare_csv",
        metavar="NCU.csv",
        type=click.Path(),
        help="Line the trace up with Nsight Compute's per-instruction export (ncu --page source "
        "--csv --print-source sass, SourceCounters) by SASS offset, or its totals with the "
        "per-launch counters of the raw page (ncu --page raw --csv); exit 1 when they disagree.",
    ),
)


def trace_options(fn: F) -> F:
    """Declare the argument and options of ``shmem trace`` on a command, in the order
    ``--help`` lists them."""
    out: Any = fn
    for option in reversed(OPTIONS):
        out = option(out)
    return out  # type: ignore[no-any-return]
