"""The compiled kernel a spec names (``kernel:``), traced once per run.

``shmem lint`` compares a spec with the code nvcc made of its kernel: it compiles
``kernel.source`` (a ``.cu``; a ``.cubin`` is read as it is), disassembles it and runs
the trace emulator (:mod:`shmem_cli.trace`) for the spec's block, ``kernel.grid`` and
``kernel.args``, exactly as ``shmem trace`` does. The result is cached per kernel
(source file and its modification time, name, launch, compiler arguments) for the
rest of the process, so specs that share a kernel trace it once.

Anything that stops the trace (no nvcc, no nvdisasm, a failed compile, an unknown
kernel name, an instruction the emulator cannot run) is a :class:`KernelUnavailable`
with the reason in words, never an exception that escapes the lint.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ShmemError

if TYPE_CHECKING:
    from ..spec import KernelDecl
    from ..trace.result import KernelTrace

DEFAULT_ARCH = "sm_90"


@dataclass(frozen=True)
class KernelUnavailable:
    """Why a spec's kernel could not be traced (shown as one finding)."""

    reason: str
    needs_compiler: bool = False  # nvcc is missing: --no-compile skips such kernels


_CACHE: dict[tuple[object, ...], KernelTrace | KernelUnavailable] = {}


def needs_nvcc(kernel: KernelDecl) -> bool:
    """Whether tracing ``kernel`` compiles its source (a .cu) rather than reading a cubin."""
    from .. import toolchain

    try:
        return toolchain.kernel_input_kind(Path(kernel.path)) == "cu"
    except (OSError, ShmemError, toolchain.ToolError):
        return Path(kernel.path).suffix != ".cubin"


def trace_spec_kernel(
    kernel: KernelDecl, block: tuple[int, int, int], arch: str = DEFAULT_ARCH
) -> KernelTrace | KernelUnavailable:
    """The trace of ``kernel`` launched with ``block`` (cached), or why there is none."""
    path = Path(kernel.path)
    try:
        stamp: object = path.stat().st_mtime_ns
    except OSError:
        return KernelUnavailable(f"kernel source {kernel.source!r} not found (looked at {path})")
    key = (
        str(path.resolve()),
        stamp,
        kernel.name,
        block,
        kernel.grid,
        kernel.args,
        kernel.nvcc,
        kernel.dynamic_smem,
        arch,
    )
    if key not in _CACHE:
        _CACHE[key] = _trace(kernel, block, arch)
    return _CACHE[key]


def clear_cache() -> None:
    _CACHE.clear()


def _trace(
    kernel: KernelDecl, block: tuple[int, int, int], arch: str
) -> KernelTrace | KernelUnavailable:
    from .. import toolchain

    if needs_nvcc(kernel) and toolchain.which("nvcc") is None:
        return KernelUnavailable(
            f"nvcc is needed to compile {kernel.source} but was not found: install the CUDA "
            "toolkit (or put nvcc on PATH), point kernel.source at a .cubin built with "
            "-lineinfo, or run shmem lint --no-compile to skip the compiled-code checks",
            needs_compiler=True,
        )
    try:
        with tempfile.TemporaryDirectory(prefix="shmem-lint-") as tmp:
            return _run(kernel, block, arch, Path(tmp))
    except toolchain.ToolError as exc:
        return KernelUnavailable(str(exc))
    except ShmemError as exc:
        # the trace modules speak of shmem trace's options; a spec has keys instead
        text = exc.message.replace("--kernel", "kernel.name").replace("--arg", "kernel.args")
        return KernelUnavailable(text)
    except OSError as exc:  # e.g. a temporary folder that cannot be made
        return KernelUnavailable(f"cannot trace {kernel.source}: {exc.strerror or exc}")


def _run(kernel: KernelDecl, block: tuple[int, int, int], arch: str, folder: Path) -> KernelTrace:
    from .. import toolchain
    from ..trace.cubin import CubinInfo, find_kernel, read_cubin
    from ..trace.launch import kernel_params, plan_launch
    from ..trace.signature import param_names
    from ..trace.tracer import find_function, line_table_files, read_sources, trace_kernel

    path = Path(kernel.path)
    kind = toolchain.kernel_input_kind(path)
    sources: list[Path] = []
    if kind == "cu":
        infos = [read_cubin(toolchain.compile_cu(path, arch, folder, kernel.nvcc))]
        sources.append(path)
    elif kind == "cubin":
        infos = [read_cubin(path)]
    else:
        infos = [read_cubin(c.path) for c in toolchain.extract_cubins(path, arch, folder)]
    every = tuple(k for info in infos for k in info.kernels)
    found = find_kernel(CubinInfo(path=str(path), arch=arch, kernels=every), kernel.name)
    info = next(i for i in infos if found in i.kernels)
    disassembly = toolchain.disassemble(Path(info.path))
    sources += [Path(f) for f in line_table_files(disassembly)]
    names = param_names(read_sources(sources), found.name, len(found.params))
    params = kernel_params(found, names)
    plan = plan_launch(
        found,
        params,
        block=block,
        grid=kernel.grid,
        args=[f"{k}={v}" for k, v in kernel.args],
        dynamic_smem=kernel.dynamic_smem,
    )
    function = find_function(disassembly, found, str(path))
    return trace_kernel(function, found, info.arch, plan)
