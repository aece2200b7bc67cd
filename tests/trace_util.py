"""Helpers for the trace emulator tests: disassemble the kept cubins under tests/data/trace."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from shmem_cli.trace import sass, toolchain

DATA = Path(__file__).parent / "data" / "trace"

needs_nvdisasm = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


@functools.cache
def functions(cubin: str | Path) -> dict[str, sass.Function]:
    """The functions of a cubin (a name under tests/data/trace, or a path), by mangled name."""
    path = cubin if isinstance(cubin, Path) else DATA / cubin
    return {f.name: f for f in sass.parse(toolchain.disassemble(path))}
