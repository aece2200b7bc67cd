"""``shmem trace``: the shared-memory traffic of a compiled CUDA kernel, without a GPU.

By stage: ``kernel/`` reads the kernel (cubins, fat binaries, parameters, the launch),
``emulator/`` runs its SASS block by block (the opcode families in ``emulator/ops/``),
``requests`` collects the shared-memory requests each instruction makes, ``aggregate``
costs them through the cost door into the ``result`` records; ``pipeline`` does it all
for one kernel file, ``triton/`` reads Triton cache entries and ``fixes/`` tries layout
changes on the traced requests.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


class _TracePackage(ModuleType):
    """This package, callable: ``shmem_cli.trace(path, ...)`` is :func:`shmem_cli.trace.api.trace`
    (the package and the API's function share the name ``shmem_cli.trace``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .api import trace

        return trace(*args, **kwargs)


sys.modules[__name__].__class__ = _TracePackage
