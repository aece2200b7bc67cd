"""``shmem_cli.trace(...)``: the Python API of ``shmem trace`` (docs/python.md).

(``shmem_cli.analyze`` is its counterpart for a spec: :func:`shmem_cli.analysis.analyze.analyze`.)

These are the stable entry points for scripts and for kernel libraries' tests::

    import shmem_cli

    result = shmem_cli.trace("~/.triton/cache/<hash>", grid=(4,), args={"n_cols": 1000})
    for access in result.accesses:           # one per shared-memory SASS instruction
        print(access.line, access.sass, access.wavefronts)
    print(result.totals["load"].wavefronts)  # per op
    result.to_json()                         # what `shmem trace ... --format json` prints

Every failure is a :class:`~shmem_cli.plumbing.errors.ShmemError` with a ``code``
(``invalid-kernel``, ``invalid-launch``, ``tool-missing``, ``tool-failed``, ``trace``,
``invalid-spec``), never another exception for bad input.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..plumbing import fsutil
from ..plumbing.errors import ShmemError
from .result import KernelTrace, OpTotals, TraceAccess, TraceReport

Dims = int | Sequence[int]
ArgValue = int | float | str | bytes | Sequence[int | float] | Any  # Any: a NumPy array


@dataclass(frozen=True)
class TraceResult(TraceReport):
    """The trace of one kernel: the report ``shmem trace --format json`` prints (``to_json``),
    with the kernel's records at hand."""

    @property
    def kernel(self) -> KernelTrace:
        return self.files[0].kernels[0]

    @property
    def accesses(self) -> tuple[TraceAccess, ...]:
        """One record per shared-memory SASS instruction, in program order."""
        return self.kernel.accesses

    @property
    def totals(self) -> dict[str, OpTotals]:
        """Per op: load, store, atomic, ldmatrix, stmatrix, cp_async."""
        return self.kernel.totals


def _dims(value: Dims | None, what: str) -> tuple[int, int, int] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, int) else list(value)
    ok = 1 <= len(items) <= 3 and all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in items
    )
    if not ok:
        raise ShmemError(
            f"{what} must be a positive integer or 1-3 of them, got {value!r}",
            code="invalid-launch",
        )
    dims = [int(v) for v in items] + [1] * (3 - len(items))
    return dims[0], dims[1], dims[2]


def _arg_texts(args: Mapping[str | int, ArgValue], folder: Path) -> tuple[str, ...]:
    """``--arg`` texts; bytes and arrays become buffer files in ``folder``."""
    out = []
    for n, (key, value) in enumerate(args.items()):
        if isinstance(value, bytes | bytearray):
            path = folder / f"arg{n}.bin"
            fsutil.write_bytes(path, bytes(value))
            text = f"@{path}"
        elif hasattr(value, "tobytes") and hasattr(value, "dtype"):  # a NumPy array
            path = folder / f"arg{n}.bin"
            fsutil.write_bytes(path, value.tobytes(order="C"))
            text = f"@{path}"
        elif isinstance(value, list | tuple):
            text = ",".join(str(v) for v in value)
        elif isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ShmemError(
                f"argument {key!r}: {type(value).__name__} is not a kernel argument (give a "
                "number, a list of numbers for a struct, or bytes / a NumPy array for a buffer)",
                code="invalid-launch",
            )
        else:
            text = str(value)
        out.append(f"{key}={text}")
    return tuple(out)


def trace(
    path: str | Path,
    *,
    kernel: str | None = None,
    block: Dims | None = None,
    grid: Dims = (1, 1, 1),
    args: Mapping[str | int, ArgValue] | None = None,
    dynamic_smem: int | None = None,
    buffer_size: int | None = None,
    arch: str | None = None,
    nvcc_args: Sequence[str] = (),
) -> TraceResult:
    """Trace one kernel as ``shmem trace PATH`` does and return its result.

    ``path``: a ``.cu`` file, a ``.cubin``, an executable, or a Triton cache entry (its
    folder, ``.json`` or ``.cubin``; or a cache root with ``kernel``). ``block`` is required
    except for a Triton entry (``num_warps * 32``); ``grid`` is a Triton entry's program grid.
    ``args`` maps a parameter's name or 0-based position to a number, a list of numbers
    (a struct's fields), or ``bytes`` / a NumPy array (a pointer's buffer); pointers not given
    get zero-filled buffers of ``buffer_size`` bytes (default 8 MiB).
    """
    from .kernel.launch import DEFAULT_BUFFER_BYTES, MAX_BLOCK_THREADS, MAX_GRID_BLOCKS
    from .pipeline import TraceRequest, trace_file

    block_dims = _dims(block, "block")
    grid_dims = _dims(grid, "grid") or (1, 1, 1)
    if block_dims and block_dims[0] * block_dims[1] * block_dims[2] > MAX_BLOCK_THREADS:
        raise ShmemError(f"block {block_dims} has more than 1024 threads", code="invalid-launch")
    if grid_dims[0] * grid_dims[1] * grid_dims[2] > MAX_GRID_BLOCKS:
        raise ShmemError(
            f"grid {grid_dims} has more than {MAX_GRID_BLOCKS:,} blocks", code="invalid-launch"
        )
    with tempfile.TemporaryDirectory(prefix="shmem-args-") as tmp:
        request = TraceRequest(
            path=Path(path),
            kernel=kernel,
            block=block_dims,
            grid=grid_dims,
            args=_arg_texts(args or {}, Path(tmp)),
            dynamic_smem=dynamic_smem,
            buffer_size=buffer_size if buffer_size is not None else DEFAULT_BUFFER_BYTES,
            arch=arch,
            nvcc_args=tuple(nvcc_args),
        )
        if block_dims is None:
            from .triton.cache import is_triton_input

            if not is_triton_input(Path(path)):
                raise ShmemError(
                    "block is required (e.g. block=256 or block=(32, 8))",
                    path=str(path),
                    code="invalid-launch",
                )
        traced = trace_file(request)
    return TraceResult((traced,))
