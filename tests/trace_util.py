"""Helpers for the trace emulator tests: disassemble the kept cubins under tests/data/trace."""

from __future__ import annotations

import functools
from pathlib import Path

from shmem_cli.cuda import sass, toolchain

from .conftest import TRACE_DATA as DATA


@functools.cache
def functions(cubin: str | Path) -> dict[str, sass.Function]:
    """The functions of a cubin (a name under tests/data/trace, or a path), by mangled name."""
    path = cubin if isinstance(cubin, Path) else DATA / cubin
    return {f.name: f for f in sass.parse(toolchain.disassemble(path))}
