"""shmem: exact shared-memory bank-conflict analysis for CUDA kernels, without a GPU.

The Python API mirrors ``shmem analyze --format json``::

    from shmem_cli import analyze
    result = analyze("access_specs/column_read_32x33.yaml")
    for access in result.accesses:
        print(access.name, access.wavefronts, access.max_ways)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "analyze",
    "trace",
    "trace_triton",
    "assert_no_bank_conflicts",
    "TraceResult",
    "ShmemError",
]

if TYPE_CHECKING:
    from .analysis.analyze import analyze
    from .plumbing.errors import ShmemError
    from .testing import assert_no_bank_conflicts
    from .trace.api import trace
    from .trace.result import TraceResult
    from .trace.triton.compile import trace_triton


def __getattr__(name: str) -> Any:
    # keep `import shmem_cli` (and so `shmem --version`) free of numpy and friends
    if name == "analyze":
        from .analysis.analyze import analyze

        return analyze
    if name == "trace":  # the trace package, callable: shmem_cli.trace.api.trace
        import importlib

        return importlib.import_module(".trace", __name__)
    if name == "TraceResult":
        from .trace.result import TraceResult

        return TraceResult
    if name == "trace_triton":
        from .trace.triton.compile import trace_triton

        return trace_triton
    if name == "assert_no_bank_conflicts":
        from .testing import assert_no_bank_conflicts

        return assert_no_bank_conflicts
    if name == "ShmemError":
        from .plumbing.errors import ShmemError

        return ShmemError
    raise AttributeError(name)
