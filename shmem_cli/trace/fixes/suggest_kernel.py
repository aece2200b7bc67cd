"""``shmem trace --suggest`` from start to end: trace the kernel, find its shared arrays and
their declarations, and search layout changes for those with conflicts.

The arrays come from the cubin while it is at hand (:mod:`.arrays`), their
declarations from the ``.cu`` file traced and the sources its line table names
(:mod:`.declared`, with the compile's ``-D`` arguments), the search from
:mod:`.suggest`.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from ...cuda.named_sources import locate_source
from ...cuda.sass import line_table_files
from ...hardware.arch import rules_for
from ..pipeline import Progress, TraceRequest, load_kernel, trace_loaded
from ..result import FileTrace
from .arrays import kernel_arrays, parse_array_option, static_arrays
from .declared import Shape, shape_of
from .kernel_terms import wording
from .layout_search import suggest_kernel


def defines_of(nvcc_args: Sequence[str]) -> dict[str, str]:
    """``{"PAD": "4"}`` from ``-DPAD=4`` (``-DNAME`` alone is 1), as nvcc reads them."""
    out: dict[str, str] = {}
    args = list(nvcc_args)
    for k, arg in enumerate(args):
        text = None
        if arg.startswith("-D") and len(arg) > 2:
            text = arg[2:]
        elif arg == "-D" and k + 1 < len(args):
            text = args[k + 1]
        if text:
            name, sep, value = text.partition("=")
            out[name] = value if sep else "1"
    return out


def _sources(
    paths: Sequence[str | Path], roots: Sequence[Path], allowed: Callable[[Path], bool]
) -> list[tuple[str, str]]:
    """(path, text) of the sources to look for declarations in: only files inside the source
    tree (``allowed``), regular, and at most a source's size (a declaration is quoted)."""
    from ...cuda.sources import MAX_SOURCE_BYTES
    from ...plumbing.bounded_read import read_bounded
    from ...plumbing.errors import ShmemError

    out = []
    for p in dict.fromkeys(str(p) for p in paths):
        found = locate_source(p, [*roots, Path.cwd()], allowed)
        if found is None:
            continue
        try:
            data = read_bounded(found, MAX_SOURCE_BYTES, what="source")
        except ShmemError:
            continue
        out.append((str(p), data.decode("utf-8", errors="replace")))
    return out


def trace_with_suggestions(
    request: TraceRequest,
    *,
    arrays: Sequence[str] = (),
    launch: Sequence[str] = (),
    progress: Progress | None = None,
) -> FileTrace:
    """Trace as :func:`~shmem_cli.trace.pipeline.trace_file` does and attach the layout
    suggestions to the kernel (``arrays``: the ``--array NAME=OFFSET:BYTES`` texts;
    ``launch``: the launch options, for the ``shmem sweep`` command the words give)."""
    named = [parse_array_option(a) for a in arrays]
    path = Path(request.path)
    with tempfile.TemporaryDirectory(prefix="shmem-trace-") as tmp:
        loaded = load_kernel(request, Path(tmp))
        static = static_arrays(loaded.cubin.path, loaded.kernel)
        roots = [path.resolve().parent, Path(loaded.cubin.path).resolve().parent]
    from ...plumbing.errors import ShmemError

    dynamic = request.dynamic_smem
    if dynamic is None:  # a Triton entry's is its metadata's (as its launch takes it)
        dynamic = loaded.triton.shared if loaded.triton is not None else 0
    try:
        every = kernel_arrays(static, loaded.kernel, dynamic, named)
    except ShmemError as exc:
        raise exc.located(str(path)) from None
    traced = trace_loaded(loaded, request, progress=progress)
    kernel = traced.kernels[0]
    is_cu = path.suffix.lower() in (".cu", ".cuh")
    files: list[str | Path] = [*([path] if is_cu else []), *line_table_files(loaded.disassembly)]
    sources = _sources(files, roots, request.tree().inside)
    defines = defines_of(request.nvcc_args)
    shapes: dict[str, Shape | None] = {
        a.name: shape_of(sources, a.name, a.size, kernel_name=loaded.kernel.name, defines=defines)
        for a in every
    }
    say = wording(loaded.kernel.name, str(request.path) if is_cu else None, launch)
    try:
        found = suggest_kernel(kernel, every, shapes, rules_for(loaded.arch), say=say)
    except ShmemError as exc:
        raise exc.located(str(path)) from None
    return dataclasses.replace(traced, kernels=(dataclasses.replace(kernel, suggestions=found),))
