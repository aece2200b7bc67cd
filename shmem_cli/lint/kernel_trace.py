"""The compiled kernel a spec names (``kernel:``), traced once per run.

``shmem lint`` compares a spec with the code nvcc made of its kernel: it compiles
``kernel.source`` (a ``.cu``; a ``.cubin`` is read as it is), disassembles it and runs
the trace emulator (:mod:`shmem_cli.trace`) for the spec's block, ``kernel.grid`` and
``kernel.args``, exactly as ``shmem trace`` does. The result is cached per kernel
(source file and its modification time, name, launch, compiler arguments) for the
rest of the process, so specs that share a kernel trace it once.

Anything that stops the trace (no nvcc, no nvdisasm, a failed compile, an unknown
kernel name, an instruction the emulator cannot run) is a :class:`KernelUnavailable`
with the reason in words, never an exception that escapes the lint. What the spec
may not ask for (a file outside the kernel's source tree, an nvcc argument off the
allowlist, an include that leaves the tree: :mod:`shmem_cli.kernel_sources`,
:mod:`shmem_cli.nvcc_args`) and a kernel past the trace's limits carry the error
itself: the lint reports it as an invalid spec (SH100, exit status 2).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..hardware.arch import DEFAULT_ARCH
from ..plumbing.errors import ShmemError, SourcePos, shorten
from ..plumbing.frozen import frozen

if TYPE_CHECKING:
    from ..spec.compile import KernelDecl
    from ..trace.result import KernelTrace


@frozen
class KernelUnavailable:
    """Why a spec's kernel could not be traced (shown as one finding)."""

    reason: str
    needs_compiler: bool = False  # nvcc is missing: --no-compile skips such kernels
    #: the spec asked for what is refused, or the kernel ran past a limit (SH100)
    error: ShmemError | None = None
    #: where the spec writes what the reason names (an argument, a constant), None: kernel:
    pos: SourcePos | None = None


#: error codes that make a spec invalid rather than its kernel merely untraced
INVALID_CODES = frozenset({"refused", "limit", "output"})
#: what a spec's kernel past nvcc's time does (lint has no --compile-time-limit)
_SPEC_WAY = (
    "give [tool.shmem] compile-time-limit = SECONDS for more, or build the cubin yourself "
    "(nvcc -cubin -lineinfo) and name it in kernel.source"
)


_CACHE: dict[tuple[object, ...], KernelTrace | KernelUnavailable] = {}


def needs_nvcc(kernel: KernelDecl) -> bool:
    """Whether tracing ``kernel`` compiles its source (a .cu) rather than reading a cubin."""
    from ..cuda.toolchain import ToolError
    from ..trace.kernel.binaries import kernel_input_kind

    try:
        return kernel_input_kind(Path(kernel.path)) == "cu"
    except (OSError, ShmemError, ToolError):
        return Path(kernel.path).suffix != ".cubin"


def trace_spec_kernel(
    kernel: KernelDecl,
    block: tuple[int, int, int],
    arch: str = DEFAULT_ARCH,
    roots: tuple[str, ...] = (),
    includes: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
    build_cache: str | None = None,
    compile_seconds: float | None = None,
) -> KernelTrace | KernelUnavailable:
    """The trace of ``kernel`` launched with ``block`` (cached), or why there is none;
    ``roots``: the source tree's folders ([tool.shmem] source-roots; default: the spec's
    repository, or its folder); ``includes``: libraries' header folders ([tool.shmem]
    include-roots) the build may read too; ``outputs``: the files the lint run writes,
    refused (SH100) when one is a file the kernel's trace reads; ``build_cache``: the folder
    keeping .cu builds ([tool.shmem] build-cache), None for none; ``compile_seconds``: the
    wall time of each compile ([tool.shmem] compile-time-limit), None for the default."""
    path = Path(kernel.path)
    refused = _refusal(kernel, roots, includes) or _overwritten(kernel, outputs)
    if refused is not None:
        return refused
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
        kernel.consts,
        kernel.memory,
        kernel.params,
        kernel.cluster,
        kernel.nvcc,
        kernel.dynamic_smem,
        arch,
        roots,
        includes,
        kernel.spec_path,
        outputs,
        compile_seconds,
    )
    if key not in _CACHE:
        _CACHE[key] = _trace(
            kernel, block, arch, roots, includes, outputs, build_cache, compile_seconds
        )
    return _CACHE[key]


def _spec_error(
    kernel: KernelDecl, message: str, index: int | None = None, at: SourcePos | None = None
) -> KernelUnavailable:
    pos = at or named_pos(kernel, message) or kernel.pos
    if index is not None and index < len(kernel.nvcc_pos):
        pos = kernel.nvcc_pos[index] or pos
    error = ShmemError(message, path=kernel.spec_path or None, pos=pos, code="refused")
    return KernelUnavailable(message, error=error, pos=pos)


#: what a trace's error says it is about, in a spec's words: ``kernel.args 0 (out): ...``
_NAMED = re.compile(r"kernel\.(args|const|memory) ([^\s:(]+)(?: \(([^\s:)]+)\))?")


def named_pos(kernel: KernelDecl, message: str) -> SourcePos | None:
    """Where the spec writes the argument, constant or memory range ``message`` opens with
    (by position or by name), None where it names none the spec writes."""
    found = _NAMED.match(message)
    if found is None:
        return None
    part, first, name = found.groups()
    written = dict(kernel.key_pos)
    return written.get(f"{part} {first}") or written.get(f"{part} {name}")


def _refusal(
    kernel: KernelDecl, roots: tuple[str, ...], includes: tuple[str, ...] = ()
) -> KernelUnavailable | None:
    """Why the spec's kernel may not be built or read at all (outside the tree, a refused
    argument), or None. A spec's compile confined its source and the files its values name
    already (``spec.compile``, with the same ``roots`` and words: ``analyze`` refuses them
    alike); a kernel made otherwise is confined here, before anything reads them."""
    from ..cuda.launch.files import check_file, named_file
    from ..cuda.nvcc_args import NvccArgError, check_nvcc_args
    from ..cuda.sources import confine, tree_for

    tree = tree_for(kernel.spec_path or kernel.path, roots)
    try:
        confine(kernel.path, tree, "kernel.source", shown=kernel.source)
    except ShmemError as exc:
        return _spec_error(kernel, exc.message)
    given = [
        *(("args", k, v) for k, v in kernel.args),
        *(("const", k, v) for k, v in kernel.consts),
        *(("memory", k, v) for k, v in kernel.memory),
    ]
    if kernel.params:
        given.append(("params", "", kernel.params))
    for part, key, value in given:  # a tensor map's data=@FILE too
        name = named_file(value)
        where = f"kernel.{part}" + (f" {key}" if key else "")
        try:
            if name:  # then looked at
                confine(name, tree, where + ":")
                check_file(value, where)
        except ShmemError as exc:  # at the value's key, where the spec writes one
            return _spec_error(kernel, exc.message, at=dict(kernel.key_pos).get(f"{part} {key}"))
    try:
        from ..cuda.build import within

        inside = lambda p: tree.inside(p) or within(p, includes)  # noqa: E731
        check_nvcc_args(kernel.nvcc, base=_base(kernel), inside=inside)
    except NvccArgError as exc:
        return _spec_error(kernel, exc.message, exc.index)
    return None


def _overwritten(kernel: KernelDecl, outputs: tuple[str, ...]) -> KernelUnavailable | None:
    """An output of the run that would replace the kernel, a buffer or a constant's file."""
    if not outputs:
        return None
    from ..plumbing.fsutil import OutputError, check_outputs

    given = (*kernel.args, *kernel.consts, *kernel.memory)
    files = [kernel.path, *(v[1:] for _, v in given if v[:1] == "@")]
    if kernel.params:
        files.append(kernel.params[1:])
    try:
        check_outputs(outputs, files)
    except OutputError as exc:
        return _spec_error(kernel, f"{exc.path}: {exc.message} (this spec's kernel reads it)")
    return None


def _base(kernel: KernelDecl) -> Path:
    return Path(kernel.spec_path).parent if kernel.spec_path else Path()


def clear_cache() -> None:
    _CACHE.clear()


def _trace(
    kernel: KernelDecl,
    block: tuple[int, int, int],
    arch: str,
    roots: tuple[str, ...],
    includes: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
    build_cache: str | None = None,
    compile_seconds: float | None = None,
) -> KernelTrace | KernelUnavailable:
    from ..cuda import toolchain
    from ..cuda.build import within
    from ..trace.emulator.budget import Budget
    from ..trace.pipeline import TraceRequest, trace_file

    if needs_nvcc(kernel) and toolchain.which("nvcc") is None:
        return KernelUnavailable(
            f"nvcc is needed to compile {kernel.source} but was not found: install the CUDA "
            "toolkit (or put nvcc on PATH), point kernel.source at a .cubin built with "
            "-lineinfo, or run shmem lint --no-compile to skip the compiled-code checks",
            needs_compiler=True,
        )
    request = TraceRequest(
        kernel.path,
        kernel=kernel.name,
        block=block,
        grid=kernel.grid,
        args=tuple(f"{k}={v}" for k, v in kernel.args),
        consts=tuple(f"{k}={v}" for k, v in kernel.consts),
        memory=tuple(f"{k}={v}" for k, v in kernel.memory),
        params_file=kernel.params,
        cluster=kernel.cluster,
        dynamic_smem=kernel.dynamic_smem,
        arch=arch if needs_nvcc(kernel) else None,
        nvcc_args=kernel.nvcc,
        source_roots=roots,
        include_roots=includes,
        tree_anchor=kernel.spec_path or None,
        nvcc_base=str(_base(kernel)),
        outputs=outputs,
        build_cache=build_cache,
        budget=Budget.of(compile_time_limit=compile_seconds),
    )
    try:
        return trace_file(request).kernels[0]
    except ShmemError as exc:
        text = _in_spec_words(exc.message)
        root = os.path.realpath(kernel.path)
        if (
            exc.code not in INVALID_CODES
            and exc.path
            and os.path.isdir(root)
            and within(exc.path, [root])
        ):
            # an entry of a Triton cache root: which one (the folder itself: as the spec names
            # it, where its path from itself was ".")
            inside = os.path.relpath(os.path.realpath(exc.path), root)
            text = f"{shorten(kernel.source if inside == '.' else inside)}: {text}"
        if exc.code in INVALID_CODES:
            if exc.path and exc.path != kernel.spec_path:
                where = f"{exc.path}:{exc.pos.line}:{exc.pos.column}" if exc.pos else exc.path
                text = f"kernel.source {where}: {text}"
            return _spec_error(kernel, text)
        return KernelUnavailable(text, pos=named_pos(kernel, text))
    except (toolchain.ToolError, OSError) as exc:  # e.g. a folder that cannot be made
        return KernelUnavailable(f"cannot trace {kernel.source}: {_in_spec_words(str(exc))}")


def _in_spec_words(text: str) -> str:
    """A trace's message in a spec's words: the trace modules speak of shmem trace's options,
    a spec has keys instead."""
    from ..cuda.toolchain import COMPILE_WAY

    text = text.replace("--kernel", "kernel.name").replace("--arg", "kernel.args")
    text = text.replace("--const", "kernel.const").replace("--memory", "kernel.memory")
    text = text.replace("--params", "kernel.params").replace("--cluster", "kernel.cluster")
    text = text.replace("--nvcc-arg", "kernel.nvcc")
    return text.replace(COMPILE_WAY, _SPEC_WAY)
