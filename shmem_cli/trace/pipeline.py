"""Tracing a kernel file from start to end: for ``shmem trace`` and for any other caller.

``trace_file`` does every step in a temporary folder: compile a ``.cu`` (or take a ``.cubin``,
or extract an executable's cubins), pick the kernel, read its parameters (names from the
source), disassemble it, build the launch and run it::

    from shmem_cli.trace.pipeline import TraceRequest, trace_file

    traced = trace_file(TraceRequest("matmul.cu", kernel="MatrixMulCUDA<32>",
                                     block=(32, 32, 1), args=("wA=64", "wB=32")))
    for access in traced.kernels[0].accesses:
        print(access.file, access.line, access.sass, access.cost.wavefronts)

Every failure is a :class:`~shmem_cli.plumbing.errors.ShmemError` located at the kernel file
(or at the source line of the instruction the emulator stopped at). Its ``code`` says which
kind: ``tool-missing`` (nvcc, nvdisasm or cuobjdump not found; the message says what to
install), ``tool-failed`` (a compile error, with nvcc's message), ``invalid-kernel`` (not a
cubin, no such kernel, bad ``--arg``) or ``trace`` (the emulator).

The request is :mod:`.trace_request`'s record, named here too: this module is the front door.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import field
from functools import partial
from pathlib import Path
from typing import TypeVar

from ..cuda import toolchain
from ..cuda.build import compile_checked
from ..cuda.cu_inputs import include_folders
from ..cuda.nvcc_messages import compiler_messages, kernel_front, kernel_warnings, source_warnings
from ..hardware.arch import DEFAULT_ARCH
from ..hardware.ops import op_of_opcode
from ..plumbing.errors import ShmemError, shorten
from ..plumbing.frozen import frozen
from ..plumbing.fsutil import check_outputs
from .kernel.binaries import Cubin, extract_cubins, kernel_input_kind
from .kernel.constants import Constants, declared_types, read_constants, set_constants
from .kernel.cubin import CubinInfo, Kernel, disassembly_scope, entry_names, find_kernel, read_cubin
from .kernel.launch import LaunchPlan, plan_launch
from .kernel.line_table import LineRows, kernel_spans, line_rows
from .kernel.params import Param, named_params, unnamed_why
from .result import FileTrace
from .trace_request import BlockRequired, TraceRequest, arg_texts
from .tracer import find_function, outside_not_quoted, source_texts, trace_kernel
from .triton.cache import TritonEntry, is_triton_input
from .triton.callsites import calls, place, triton_source_file
from .triton.launch import check_entry_block, named_by_call, triton_launch, triton_params
from .triton.metadata import TritonError, field_error
from .triton.roots import open_entry
from .user_lines import named_calls, placed_lines

_T = TypeVar("_T")

__all__ = [
    "LoadedKernel",
    "Progress",
    "TraceRequest",
    "arg_texts",
    "kernel_parameters",
    "load_kernel",
    "trace_file",
    "trace_loaded",
    "trace_with_code",
]

Progress = Callable[[int, int], None]  # (thread-instructions run in this block, block index)


@frozen
class LoadedKernel:
    """A kernel ready to launch: its metadata, parameters and SASS."""

    kernel: Kernel
    cubin: CubinInfo
    params: tuple[Param, ...]
    disassembly: str
    arch: str
    triton: TritonEntry | None = None  # the Triton cache entry the cubin came from
    constants: Constants = field(default_factory=Constants)  # the cubin's __constant__ banks
    note: str | None = None  # why a .cu was built for its target (sm_90a), when shmem chose
    cached: str | None = None  # the build cache folder a .cu's cubin came from
    warnings: tuple[str, ...] = ()  # nvcc's front end's and ptxas's about it, of a .cu's build
    #: the launch, planned from the request that loaded it (a Triton entry's: before the SASS)
    plan: LaunchPlan | None = None
    #: the library folders of the build (include roots, a .cu's typed -I in every spelling):
    #: a line in one of their files is a library's, not the user's
    libraries: tuple[str, ...] = ()
    #: (location, its caller's) of every inlined row of the kernel's line table, those
    #: nvdisasm does not print included (:mod:`.kernel.line_table`)
    callers: LineRows = LineRows()  # the line table's rows: callers nvdisasm may not print


@frozen
class _Cubins:
    """A request's cubins, the source files it names, the arch (the SM whose rules cost it),
    why a .cu's target was chosen, its SASS if that read it, the build's library folders
    and files (:class:`.tracer.NamedFiles`)."""

    infos: list[CubinInfo]
    sources: list[Path]
    arch: str
    note: str | None = None
    sass: str = ""
    libraries: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    cached: str | None = None
    warnings: tuple[str, ...] = ()  # ptxas's, of the whole build (cuda.build.build_warnings)
    front: tuple[str, ...] = ()  # nvcc's front end's warnings, as shown (source_warnings)


def _cubins(request: TraceRequest, folder: Path) -> _Cubins:
    """The cubins of the request's file (a .cu compiled, an executable's extracted: into
    ``folder``)."""
    path = Path(request.path)
    kind = kernel_input_kind(path)
    if kind == "cu":
        return _compile(request, path, folder)
    libraries = include_folders(request.include_roots)
    if request.nvcc_args:
        raise toolchain.ToolError("--nvcc-arg applies only to a .cu file")
    if kind == "cubin":
        info = read_cubin(path)
        if request.arch is not None and request.arch not in (info.arch, info.target_name):
            raise toolchain.ToolError(f"the cubin is for {info.target_name}, not {request.arch}")
        return _Cubins([info], [], info.arch, libraries=libraries)
    from .kernel.demangle import demangle_all

    arch = request.arch or DEFAULT_ARCH  # or the binary's only one, without --arch
    embedded = extract_cubins(path, arch, folder, chosen=request.arch is not None)
    names: set[str] = set()
    for cubin in embedded:
        names.update(_embedded(path, cubin, entry_names))
    demangled = demangle_all(sorted(names))  # one run of cu++filt for all of them
    infos = [_embedded(path, c, partial(read_cubin, demangled=demangled)) for c in embedded]
    # the SM the rules cost, as from a cubin (an sm_90a executable's cubins say sm_90)
    return _Cubins(infos, [], (infos[0].arch if infos else arch), libraries=libraries)


def _embedded(path: Path, cubin: Cubin, read: Callable[[Path], _T]) -> _T:
    """``read`` of a cubin extracted from the executable ``path``; an error is said of the
    executable and the entry, not of the temporary cubin."""
    try:
        return read(cubin.path)
    except ShmemError as exc:
        which = cubin.origin.rpartition(" (")[2].rstrip(")")
        exc.message += f" (embedded cubin: {which})"
        exc.path = str(path)
        raise


def _compile(request: TraceRequest, path: Path, folder: Path) -> _Cubins:
    """A .cu compiled as the request says: its arguments and sources checked, the build's
    own list of what it read checked (:mod:`shmem_cli.cuda.build`), the target chosen."""
    tree = request.tree()
    inputs = request.cu_inputs(tree)
    build = compile_checked(
        path,
        request.arch,
        DEFAULT_ARCH,
        folder,
        inputs.args,
        allowed=inputs.allowed,
        explain=lambda text: compiler_messages(text, tree, inputs.typed, inputs.libraries),
        cache=request.build_cache,
        seconds=request.budget.compile_seconds,
    )
    check_outputs(request.outputs, list(build.files))  # nor one the compile read (computed)
    info = read_cubin(build.cubin)
    b, libraries = build, inputs.libraries
    front = source_warnings(b.warnings, tree, inputs.typed)  # each kernel's: kernel_front
    return _Cubins(
        [info], [path], info.arch, b.note, b.sass, libraries, b.files, b.cached, b.warnings, front
    )


def _disassemble(info: CubinInfo, scope: tuple[int, ...], sass: str) -> str:
    """The SASS of ``scope`` (all: empty) of the cubin: ``sass`` where that is the whole
    cubin's listing (a .cu's build, read to choose its target), else nvdisasm's."""
    return sass if sass and not scope else toolchain.disassemble(Path(info.path), functions=scope)


def _owners(infos: Sequence[CubinInfo]) -> dict[str, CubinInfo]:
    """Mangled name -> the first cubin holding that kernel (one cubin per translation unit;
    an inline kernel may be in several)."""
    owner: dict[str, CubinInfo] = {}
    for info in infos:
        for k in info.kernels:
            owner.setdefault(k.mangled, info)
    return owner


def _pick(infos: Sequence[CubinInfo], query: str | None, path: str, arch: str) -> CubinInfo:
    """The cubin holding the kernel ``query`` names."""
    owner = _owners(infos)
    every = tuple(k for info in infos for k in info.kernels if owner[k.mangled] is info)
    kernel = find_kernel(CubinInfo(path=path, arch=arch, kernels=every), query)
    info = owner[kernel.mangled]
    return dataclasses.replace(info, kernels=(kernel,))


def _tool_failure(exc: toolchain.ToolError, path: Path, folder: Path | None = None) -> ShmemError:
    """A tool's failure said of the user's file: a path in shmem's temporary ``folder`` (a
    cubin extracted from an executable, gone when the error is read) is named as that."""
    code = "tool-missing" if isinstance(exc, toolchain.ToolMissing) else "tool-failed"
    text = str(exc)
    if folder is not None:
        text = re.sub(re.escape(str(folder)) + r"[^\s'\"]*", f"{path} (its embedded cubin)", text)
    return ShmemError(text, path=str(path), code=code)


def _load_triton(request: TraceRequest, launch: bool) -> LoadedKernel:
    """A Triton cache entry's kernel: its cubin, with names and types from the TTGIR;
    ``launch``: the request's launch checked (and planned) first, before the disassembly,
    so that a wrong ``--arg`` costs no nvdisasm (without it, listed only: none is made)."""
    path = Path(request.path)
    try:
        entry = named_by_call(open_entry(path, request.kernel, request.tree().inside), request.args)
        info = read_cubin(entry.cubin)
        arch = entry.arch or info.arch
        if arch not in (info.arch, info.target_name):
            why = f"the metadata says {arch} and the cubin is for {info.target_name}: the two "
            why += "come from different compiles; give an entry folder as Triton wrote it"
            raise field_error(entry.cubin.with_suffix(".json"), why, "target", "capability", "cc")
        if request.arch is not None and request.arch not in (arch, info.target_name):
            why = f"the entry is for {info.target_name}, not {request.arch}"
            raise ShmemError(why, code="invalid-kernel")
        kernel = _entry_kernel(info, entry)
        params = tuple(triton_params(kernel, entry))
        plan = _plan(kernel, params, entry, request) if launch else None
        scope = disassembly_scope(info, (kernel,))
        disassembly = toolchain.disassemble(entry.cubin, functions=scope) if launch else ""
        constants = read_constants(entry.cubin, kernel.mangled)
        callers = line_rows(entry.cubin, kernel.mangled)  # a @triton.jit helper's calls
    except toolchain.ToolError as exc:
        raise _tool_failure(exc, path) from None
    except ShmemError as exc:
        raise exc.located(str(path)) from None
    chosen = CubinInfo(path=str(entry.cubin), arch=info.arch, kernels=(kernel,), target=info.target)
    libraries = include_folders(request.include_roots)
    return LoadedKernel(
        kernel, chosen, params, disassembly, arch, entry, constants, plan=plan,
        libraries=libraries, callers=callers,
    )  # fmt: skip


def _entry_kernel(info: CubinInfo, entry: TritonEntry) -> Kernel:
    """The kernel of a Triton entry's cubin its .json names; a cubin that holds another (its
    files from different compiles) is the entry's error, not a --kernel to choose."""
    try:
        return find_kernel(info, entry.name)
    except ShmemError:
        held = ", ".join(shorten(k.name) for k in info.kernels[:8]) or "no kernel"
        raise TritonError(
            f"the entry's {entry.cubin.name} holds {held}, not {shorten(entry.name)}, the kernel "
            "its .json names: the entry's files come from different compiles; give an entry "
            "folder as Triton wrote it",
            entry.cubin,
        ) from None


def load_kernel(request: TraceRequest, folder: Path, *, launch: bool = True) -> LoadedKernel:
    """Compile or extract (into ``folder``), pick the kernel, read its parameters and SASS
    (``launch``: the kernel is to be launched as the request says, not only listed)."""
    path = Path(request.path)
    if is_triton_input(path):
        if request.nvcc_args:
            why = "--nvcc-arg applies only to a .cu file"
            raise ShmemError(why, path=str(path), code="invalid-launch")
        return _load_triton(request, launch)
    try:
        built = _cubins(request, folder)
        arch = built.arch
        chosen = _pick(built.infos, request.kernel, str(path), arch)
        kernel = chosen.kernels[0]
        scope = disassembly_scope(chosen, (kernel,))
        disassembly = _disassemble(chosen, scope, built.sass)
        constants = read_constants(chosen.path, kernel.mangled)
        callers = line_rows(chosen.path, kernel.mangled)
    except toolchain.ToolError as exc:
        raise _tool_failure(exc, path, folder) from None
    except ShmemError as exc:
        raise exc.located(str(path)) from None
    tree = request.tree()
    texts = source_texts(chosen, disassembly, built, path, tree, request.outputs)
    params = named_params(
        kernel, texts, lambda: unnamed_why(kernel, chosen, disassembly, path, tree)
    )
    constants = dataclasses.replace(constants, types=declared_types(texts))
    note, libraries, cached = built.note, built.libraries, built.cached
    others = [k.mangled for info in built.infos for k in info.kernels]  # a warning names one
    named = [(i.path, k.mangled) for i in built.infos for k in i.kernels] if built.front else []
    front = kernel_front(built.front, *kernel_spans(named, kernel.mangled))  # whose warning
    warnings = (*front, *kernel_warnings(built.warnings, kernel.mangled, others))
    return LoadedKernel(
        kernel, chosen, params, disassembly, arch, constants=constants, note=note,
        libraries=libraries, cached=cached, callers=callers, warnings=warnings,
    )  # fmt: skip


def trace_loaded(
    loaded: LoadedKernel, request: TraceRequest, *, progress: Progress | None = None
) -> FileTrace:
    """Launch a loaded kernel as the request (the one that loaded it) says and trace it."""
    path = str(request.path)
    try:
        plan = loaded.plan  # a Triton entry's, made before its SASS (its TTGIR names the
        if plan is None:  # parameters); a .cu's or cubin's names need the line table's sources
            plan = _plan(loaded.kernel, loaded.params, loaded.triton, request)
        constants = set_constants(loaded.constants, request.consts)
        virtual = [name for _, _, name, _ in loaded.constants.function_slots]
        function = find_function(loaded.disassembly, loaded.kernel, path, virtual)
        binary = loaded.triton is None and kernel_input_kind(Path(path)) != "cu"
        tree, libraries = request.tree(), loaded.libraries
        python = None if loaded.triton is None else triton_source_file  # the kernel's .py
        lines = placed_lines(
            function, tree, libraries, loaded.callers, binary=binary, kernel_file=python
        )
        if loaded.triton is not None:  # tl.sum's lines in Triton's library: the caller's
            shared = {  # every shared-memory instruction (the op registry's opcodes)
                i.pc: i.name for i in function.instructions if op_of_opcode(i.opcode) is not None
            }
            lines = place(lines, loaded.triton.callers, shared)
            bars = {i.pc for i in function.instructions if i.opcode == "BAR"}
            named_calls(function, calls(lines, loaded.triton.helper_calls, shared, bars))
        traced = trace_kernel(
            function,
            loaded.kernel,
            loaded.arch,
            plan,
            progress=progress,
            lines=lines,
            budget=request.budget,
            constants=constants,
        )
    except ShmemError as exc:
        raise outside_not_quoted(exc, path, request.tree()).located(path) from None
    target = loaded.cubin.target_name
    n, c, w = loaded.note, loaded.cached, loaded.warnings  # how its .cu was built
    traced = dataclasses.replace(traced, target=target, arch_note=n, cached=c, compiler_warnings=w)
    if loaded.triton is not None:  # a cache root: the report names the entry --kernel picked
        path = _entry_shown(Path(path), loaded.triton.folder)
    return FileTrace(path, (traced,))


def _entry_shown(given: Path, folder: Path) -> str:
    """The Triton entry traced, written from the cache root ``given`` (``cache/4ZIG...``) where
    the root was given; ``given`` itself where it is the entry or one of its files."""
    root, entry = os.path.realpath(given), os.path.realpath(folder)
    if not os.path.isdir(given) or entry == root:
        return str(given)
    inside = os.path.commonpath((root, entry)) == root
    return str(given / os.path.relpath(entry, root)) if inside else str(folder)


def _plan(
    kernel: Kernel, params: Sequence[Param], triton: TritonEntry | None, request: TraceRequest
) -> LaunchPlan:
    """The launch the request describes (a Triton entry's as its launcher makes it), checked
    against the kernel's metadata and parameters: nothing of its SASS is needed."""
    block, grid, args = request.block, request.grid, request.args
    dynamic_smem, sizes, cluster = request.dynamic_smem or 0, None, request.cluster
    if triton is not None:
        check_entry_block(kernel, triton)
        launch = triton_launch(
            triton, params, block=block, grid=grid, dynamic_smem=request.dynamic_smem, args=args,
            cluster=cluster, params_file=request.params_file,
        )  # fmt: skip
        block, grid, args = launch.block, launch.grid, launch.args
        dynamic_smem, sizes, cluster = launch.dynamic_smem, launch.buffer_sizes, launch.cluster
    block = block or kernel.required_block  # .reqntid: the one block CUDA launches it with
    if block is None:
        raise BlockRequired()
    return plan_launch(
        kernel,
        params,
        block=block,
        grid=grid,
        args=args,
        dynamic_smem=dynamic_smem,
        buffer_size=request.buffer_size,
        buffer_sizes=sizes,
        params_file=request.params_file,
        cluster=cluster,
        memory=request.memory,
    )


def trace_file(request: TraceRequest, *, progress: Progress | None = None) -> FileTrace:
    """Trace one kernel of a ``.cu``, ``.cubin`` or executable (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="shmem-trace-") as tmp:
        loaded = load_kernel(request, Path(tmp))
    return trace_loaded(loaded, request, progress=progress)


def trace_with_code(
    request: TraceRequest, *, progress: Progress | None = None
) -> tuple[FileTrace, dict[int, str]]:
    """The trace and the kernel's SASS by pc (for ``--compare``: is it the measured binary?)."""
    from .ncu.compare import function_text

    with tempfile.TemporaryDirectory(prefix="shmem-trace-") as tmp:
        loaded = load_kernel(request, Path(tmp))
    traced = trace_loaded(loaded, request, progress=progress)
    return traced, function_text(loaded.disassembly, loaded.kernel.mangled)


def kernel_parameters(request: TraceRequest) -> list[tuple[Kernel, tuple[Param, ...]]]:
    """The parameters of the kernel the request names or, without a name, of every kernel
    of the file (``--list-params``): one compile, one disassembly per cubin."""
    path = Path(request.path)
    if request.kernel is not None or is_triton_input(path):
        with tempfile.TemporaryDirectory(prefix="shmem-trace-") as tmp:
            loaded = load_kernel(request, Path(tmp), launch=False)
        return [(loaded.kernel, loaded.params)]
    with tempfile.TemporaryDirectory(prefix="shmem-trace-") as tmp:
        try:
            built = _cubins(request, Path(tmp))
            infos, arch, sass = built.infos, built.arch, built.sass
            owner = _owners(infos)
            found: list[tuple[Kernel, tuple[Param, ...]]] = []
            for info in infos:
                kernels = [k for k in info.kernels if owner[k.mangled] is info]
                if kernels:
                    scope = disassembly_scope(info, tuple(kernels))
                    disassembly = _disassemble(info, scope, sass)
                    tree = request.tree()
                    texts = source_texts(info, disassembly, built, path, tree)  # once
                    for k in kernels:  # each kernel's note asked only where it has no names
                        why = partial(unnamed_why, k, info, disassembly, path, tree)
                        found.append((k, named_params(k, texts, why)))
        except toolchain.ToolError as exc:
            raise _tool_failure(exc, path) from None
    if not found:
        raise ShmemError(
            f"no kernel (__global__ function) for {arch} in the file",
            path=str(path),
            code="invalid-kernel",
        )
    return found
