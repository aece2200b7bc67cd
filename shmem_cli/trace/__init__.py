"""``shmem trace``: the shared-memory traffic of a compiled CUDA kernel, without a GPU.

The emulator part: ``sass`` parses nvdisasm's text, ``state`` holds a thread block's
machine state, ``decode`` and the ``ops_*`` modules give each opcode its meaning,
``emulator`` runs a block and ``records`` collects the shared-memory requests it
makes for the wavefront engine.
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
