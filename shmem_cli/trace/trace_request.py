"""What ``shmem trace`` is asked to trace: :class:`TraceRequest`, its options as one record.

The file (a ``.cu``, a cubin, an executable or a Triton cache entry), the kernel, the
launch (block, grid, cluster, arguments, constants, memory), the build (arch, nvcc
arguments, the folders it may read, the build cache) and the budget. The request also
says which source tree it belongs to and what its ``.cu`` build may read; the steps that
act on it are :mod:`.pipeline`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..cuda.cu_inputs import CuInputs, cu_inputs
from ..cuda.sources import SourceTree, tree_for
from ..plumbing.errors import ShmemError
from ..plumbing.frozen import frozen
from .emulator.budget import DEFAULT as DEFAULT_BUDGET
from .emulator.budget import Budget
from .kernel.launch import DEFAULT_BUFFER_BYTES
from .kernel.param_block import MemoryBytes


@frozen
class TraceRequest:
    """What to trace: the file, the kernel, the launch (as ``shmem trace``'s options)."""

    path: str | Path  # .cu, .cubin, executable, or a Triton cache entry (folder/.json/.cubin)
    kernel: str | None = None  # C++ name, mangled name or a unique prefix
    block: tuple[int, int, int] | None = None  # required, except for a Triton entry
    grid: tuple[int, int, int] = (1, 1, 1)  # for a Triton entry: its program grid
    args: tuple[str, ...] = ()  # "POS=VALUE" / "NAME=VALUE", as --arg
    dynamic_smem: int | None = None  # default 0 (a Triton entry: its metadata's shared)
    #: the thread-block cluster (default: the kernel's __cluster_dims__, a Triton entry's
    #: cluster_dims, else 1x1x1)
    cluster: tuple[int, int, int] | None = None
    buffer_size: int = DEFAULT_BUFFER_BYTES
    arch: str | None = None  # default: DEFAULT_ARCH, or a cubin's own
    nvcc_args: tuple[str, ...] = ()
    #: the folders the build may read (empty: the kernel file's repository, or its folder)
    source_roots: tuple[str, ...] = ()
    #: the file whose repository is the source tree when no roots are given (default: path)
    tree_anchor: str | None = None
    #: where relative -I paths start (default: the current folder)
    nvcc_base: str | None = None
    #: how much the trace may run: instructions per block and per launch, wall time
    budget: Budget = DEFAULT_BUDGET
    #: the files the caller will write: refused if the build of a .cu reads one
    outputs: tuple[str, ...] = ()
    #: ``__constant__`` values, "NAME=v,..." or "NAME=@FILE", as --const
    consts: tuple[str, ...] = ()
    #: the whole parameter block, "@FILE", as --params
    params_file: str | None = None
    #: device memory the host wrote before the launch, "ADDR=@FILE" / "ADDR=TYPE:v,...", as
    #: --memory, or bytes already in memory (the Python API's)
    memory: tuple[str | MemoryBytes, ...] = ()
    #: libraries' header folders the build may read ([tool.shmem] include-roots)
    include_roots: tuple[str, ...] = ()
    #: the nvcc arguments are the user's own (command line, Python API): their -I folders
    #: may lie outside the source tree (a spec's kernel.nvcc stays confined)
    nvcc_trusted: bool = False
    #: a folder keeping .cu builds for later traces (--build-cache; None: nothing kept)
    build_cache: str | None = None

    def tree(self) -> SourceTree:
        """The source tree of this request (:mod:`shmem_cli.cuda.sources`)."""
        return tree_for(self.tree_anchor or self.path, self.source_roots)

    def cu_inputs(self, tree: SourceTree) -> CuInputs:
        """What this request's ``.cu`` build may read, checked (:mod:`shmem_cli.cuda.cu_inputs`)."""
        return cu_inputs(
            Path(self.path),
            tree,
            self.nvcc_args,
            base=Path(self.nvcc_base or "."),
            include_roots=self.include_roots,
            trusted=self.nvcc_trusted,
            outputs=self.outputs,
        )


def arg_texts(values: Mapping[str, object]) -> tuple[str, ...]:
    """``--arg`` texts from a mapping such as a spec's ``args: {wA: 64, 0: [128, 128]}``."""
    out = []
    for key, value in values.items():
        if isinstance(value, list | tuple):
            value = ",".join(str(v) for v in value)
        out.append(f"{key}={value}")
    return tuple(out)


class BlockRequired(ShmemError):
    """A launch without a block, of a kernel without ``.reqntid``: said as the command line
    asks for it; :attr:`in_python` as :func:`shmem_cli.trace.api.trace` does."""

    in_python = "block is required (e.g. block=256 or block=(32, 8))"

    def __init__(self) -> None:
        super().__init__(
            "--block is required to trace (e.g. --block 256 or --block 32,8)",
            code="invalid-launch",
        )
