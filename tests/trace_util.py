"""Helpers for the trace emulator tests: find nvdisasm, disassemble the kept cubins."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shmem_cli.trace import sass

DATA = Path(__file__).parent / "data" / "trace"


def find_nvdisasm() -> str | None:
    """nvdisasm from PATH or from the nvidia-cuda-nvdisasm wheel next to this Python."""
    try:
        from shmem_cli.toolchain import find_tool  # type: ignore[import-not-found,unused-ignore]

        found: str | None = find_tool("nvdisasm")
        if found:
            return found
    except ImportError:
        pass
    on_path = shutil.which("nvdisasm")
    if on_path:
        return on_path
    site = Path(sys.executable).resolve().parent.parent / "lib"
    for cand in site.glob("python3*/site-packages/nvidia/cu*/bin/nvdisasm"):
        return str(cand)
    venv = Path(sys.prefix) / "lib"
    for cand in venv.glob("python3*/site-packages/nvidia/cu*/bin/nvdisasm"):
        return str(cand)
    return None


NVDISASM = find_nvdisasm()
needs_nvdisasm = pytest.mark.skipif(NVDISASM is None, reason="nvdisasm not found")


@functools.cache
def functions(cubin: str) -> dict[str, sass.Function]:
    """The functions of a cubin under tests/data/trace, by mangled name."""
    assert NVDISASM is not None
    text = subprocess.run(
        [NVDISASM, "-c", "-g", str(DATA / cubin)], capture_output=True, text=True, check=True
    ).stdout
    return {f.name: f for f in sass.parse(text)}
