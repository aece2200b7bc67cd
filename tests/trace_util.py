"""Helpers for the trace emulator tests: disassemble the kept cubins under tests/data/trace, and
launch one block of them."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from shmem_cli.cuda import sass, toolchain
from shmem_cli.trace.emulator.state import Launch

from .conftest import TRACE_DATA as DATA


@functools.cache
def functions(cubin: str | Path) -> dict[str, sass.Function]:
    """The functions of a cubin (a name under tests/data/trace, or a path), by mangled name."""
    path = cubin if isinstance(cubin, Path) else DATA / cubin
    return {f.name: f for f in sass.parse(toolchain.disassemble(path))}


def one_block(
    params: bytes, memory: Any, threads: int, static_smem: int, param_base: int = 0x210
) -> Launch:
    """A launch of one block of ``threads`` threads on sm_90 (the parameters at ``param_base``
    of constant bank 0, the user's shared memory after the 1 KiB the architecture reserves)."""
    return Launch(
        block=(threads, 1, 1),
        grid=(1, 1, 1),
        params=params,
        param_base=param_base,
        static_smem=static_smem,
        dynamic_smem=0,
        shared_base=0x400,
        memory=memory,
    )


def numbered(body: str) -> sass.Function:
    """A function ``k`` of SASS lines written without addresses (labels end in ``:``), each
    instruction 16 bytes after the one before, as nvdisasm would list it."""
    lines, pc = ['.section\t.text.k,"ax",@progbits'], 0
    for text in body.splitlines():
        if text.endswith(":"):
            lines.append(text)
        else:
            lines.append(f"        /*{pc:04x}*/  {text} ;")
            pc += 16
    (function,) = sass.parse("\n".join(lines))
    return function
