"""``shmem_cli.trace(...)``: the Python API of ``shmem trace`` (docs/python.md).

(``shmem_cli.analyze`` is its counterpart for a spec: :func:`shmem_cli.analysis.analyze.analyze`.)

These are the stable entry points for scripts and for kernel libraries' tests::

    import shmem_cli

    result = shmem_cli.trace("~/.triton/cache/<hash>", grid=(4,), args={"n_cols": 1000})
    for access in result.accesses:           # one per shared-memory SASS instruction
        print(access.line, access.sass, access.result.wavefronts)
    print(result.totals["load"].wavefronts)  # per op
    result.to_json()                         # what `shmem trace ... --format json` prints

Every failure is a :class:`~shmem_cli.plumbing.errors.ShmemError` with a ``code``
(``invalid-kernel``, ``invalid-launch``, ``tool-missing``, ``tool-failed``, ``trace``,
``invalid-spec``), never another exception for bad input.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hardware.arch import DEFAULT_ARCH, most_smem_per_block
from ..plumbing import arguments, fsutil
from ..plumbing.errors import ShmemError, shorten
from .result import TraceResult

if TYPE_CHECKING:
    from .kernel.param_block import MemoryBytes
    from .result import FileTrace

Dims = int | Sequence[int]
ArgValue = int | float | str | bytes | Sequence[int | float] | Any  # Any: a NumPy array


def _not_an_argument(where: str, what: str, value: Any) -> ShmemError:
    """A value of ``args`` that cannot be passed (code ``invalid-launch``, as ``--arg``'s)."""
    said = f"trace(): {where} is not a kernel argument: it must be {what}, got "
    return ShmemError(said + arguments.shown(value), code="invalid-launch")


def _number(call: str, where: str, value: Any) -> str:
    """A number's ``--arg`` text: an int must fit 64 bits (the widest parameter), a float any,
    a bool ``True`` or ``False`` (1 or 0, as Python passes it; a Triton call's bool is no 1)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        if -(1 << 63) <= value < 1 << 64:
            return str(value)
        raise _not_an_argument(where, "a number that fits in 64 bits", value)
    if isinstance(value, float):
        return repr(value)
    raise _not_an_argument(
        where, "a number, a list of numbers for a struct, or bytes / a NumPy array", value
    )


def _params_file(
    value: bytes | str | Path | None, folder: Path, labels: dict[str, str]
) -> str | None:
    """``--params``' text: a path as given, bytes written to a file in ``folder`` (named in
    ``labels`` as the call gave them)."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        from .kernel.param_block import MAX_PARAMS_FILE

        if len(value) > MAX_PARAMS_FILE:  # refused before a file of it is written
            what = f"a parameter block's bytes (at most {MAX_PARAMS_FILE:,}) or a file's path"
            raise arguments.fail("trace", "params", what, value)
        path = folder / "params.bin"
        fsutil.write_bytes(path, bytes(value))
        labels[path.name] = "params (bytes)"
        return f"@{path}"
    if isinstance(value, str | Path):
        return f"@{value}"
    raise arguments.fail("trace", "params", "bytes or the path of a file", value)


def _relabelled(traced: FileTrace, folder: Path, names: Mapping[str, str]) -> FileTrace:
    """``traced`` with the files written for ``args``, ``consts`` and ``params`` bytes named
    as the call gave them (``args['in'] (bytes)``), not by the temporary paths deleted when
    the call returns (:func:`_labelled`)."""
    launches = []
    for k in traced.kernels:
        launch = dataclasses.replace(
            k.launch,
            arguments=tuple((a, _labelled(v, folder, names)) for a, v in k.launch.arguments),
            constants=tuple((c, _labelled(v, folder, names)) for c, v in k.launch.constants),
        )
        launches.append(dataclasses.replace(k, launch=launch))
    return dataclasses.replace(traced, kernels=tuple(launches))


def _labelled(text: str, folder: Path, names: Mapping[str, str]) -> str:
    """``text`` with each file of ``folder`` (``arg0.bin``, ``params.bin``) said as
    ``names`` has it: the keyword and key that gave its bytes."""
    if str(folder) not in text:
        return text
    for name, label in names.items():
        path = str(folder / name)
        text = text.replace(f"@{path}", label).replace(path, label)
    return text


def _memory_ranges(memory: Mapping[int, Any]) -> tuple[str | MemoryBytes, ...]:
    """What ``memory`` gives ``--memory``: an address (an int) -> ``bytes`` / a NumPy array,
    handed over as they are (:class:`MemoryBytes`: no file between), or the path of a file
    holding the bytes (read as ``--memory ADDR=@FILE``). The ranges, their bounds and their
    overlaps are checked where ``--memory`` is read (:func:`.kernel.param_block.read_memory`),
    before any array is copied."""
    from .kernel.param_block import MemoryBytes

    out: list[str | MemoryBytes] = []
    for address, value in memory.items():
        if isinstance(address, bool) or not isinstance(address, int) or not 0 <= address < 1 << 64:
            raise arguments.fail(  # a 64-bit pointer: a longer int is never said whole
                "trace", "memory", "keys that are device addresses (ints from 0 to 2^64)", address
            )
        if isinstance(value, str | Path):
            out.append(f"{address:#x}=@{value}")
        elif isinstance(value, bytes | bytearray | memoryview):
            data = memoryview(value)
            out.append(MemoryBytes(address, data.nbytes, data.tobytes, "bytes"))
        elif hasattr(value, "tobytes") and hasattr(value, "dtype"):  # a NumPy array
            if getattr(value.dtype, "hasobject", True):
                raise _not_an_argument(f"memory[{address:#x}]", "an array of numbers", value)
            array: Any = value
            kind = f"NumPy {shorten(str(array.dtype), 40)} array"
            load = functools.partial(array.tobytes, order="C")
            out.append(MemoryBytes(address, int(array.nbytes), load, kind))
        else:
            raise _not_an_argument(
                f"memory[{address:#x}]", "bytes, a NumPy array or the path of a file", value
            )
    return tuple(out)


def _arg_texts(
    args: Mapping[Any, ArgValue], folder: Path, labels: dict[str, str], prefix: str = "arg"
) -> tuple[str, ...]:
    """``--arg`` (``prefix`` const: ``--const``) texts; bytes and arrays become buffer files in
    ``folder``, each named in ``labels`` by the keyword and key that gave it."""
    from ..cuda.launch.files import MAX_FILE_BYTES

    out = []
    held = 0  # bytes of the buffers so far: files are written only within the launch's bound
    for n, (key, value) in enumerate(args.items()):
        if isinstance(key, int) and not isinstance(key, bool) and 0 <= key < 1 << 31:
            where = f"{prefix}s[{key}]"
        elif isinstance(key, str) and key and "=" not in key:
            where = f"{prefix}s[{shorten(key)!r}]"
        else:
            raise _not_an_argument("a key of args", "a parameter's name or 0-based position", key)
        limit = f"a buffer of at most {MAX_FILE_BYTES >> 20} MiB"
        if isinstance(value, bytes | bytearray | memoryview):
            if len(value) > MAX_FILE_BYTES:
                raise _not_an_argument(where, limit, value)
            data = bytes(value)
        elif hasattr(value, "tobytes") and hasattr(value, "dtype"):  # a NumPy array
            array: Any = value
            if getattr(array.dtype, "hasobject", True):
                raise _not_an_argument(where, "an array of numbers", value)
            if int(array.nbytes) > MAX_FILE_BYTES:
                raise _not_an_argument(where, limit, value)
            data = array.tobytes(order="C")
        elif isinstance(value, list | tuple):
            if not 1 <= len(value) <= 4096:
                raise _not_an_argument(where, "1 to 4,096 numbers (a struct)", value)
            text = ",".join(_number("trace", where, v) for v in value)
            out.append(f"{key}={text}")
            continue
        elif isinstance(value, str):
            out.append(f"{key}={value}")
            continue
        else:
            out.append(f"{key}={_number('trace', where, value)}")
            continue
        held += len(data)
        if held > MAX_FILE_BYTES:
            raise _not_an_argument(
                where, f"one of buffers of at most {MAX_FILE_BYTES >> 20} MiB in all", value
            )
        path = folder / f"{prefix}{n}.bin"
        fsutil.write_bytes(path, data)
        labels[path.name] = f"{prefix}s[{key!r}] (bytes)"
        out.append(f"{key}=@{path}")
    return tuple(out)


def trace(
    path: str | Path,
    *,
    kernel: str | None = None,
    block: Dims | None = None,
    grid: Dims = (1, 1, 1),
    args: Mapping[str | int, ArgValue] | None = None,
    dynamic_smem: int | None = None,
    buffer_size: int | None = None,
    arch: str | None = None,
    nvcc_args: Sequence[str] = (),
    consts: Mapping[str, ArgValue] | None = None,
    params: bytes | str | Path | None = None,
    memory: Mapping[int, bytes | str | Path | Any] | None = None,
    max_instructions: int | None = None,
    max_launch_instructions: int | None = None,
    time_limit: float | None = None,
    compile_time_limit: float | None = None,
    cluster: Dims | None = None,
    build_cache: str | Path | None = None,
) -> TraceResult:
    """Trace one kernel as ``shmem trace PATH`` does and return its result.

    ``path``: a ``.cu`` file, a ``.cubin``, an executable, or a Triton cache entry (its
    folder, ``.json`` or ``.cubin``; or a cache root with ``kernel``). ``block`` is required
    except for a Triton entry (``num_warps * 32``); ``grid`` is a Triton entry's program grid.
    ``args`` maps a parameter's name or 0-based position to a number, a list of numbers
    (a struct's fields), or ``bytes`` / a NumPy array (a pointer's buffer); a key
    ``"NAME+OFFSET"`` puts one value at that byte offset inside the parameter, as ``--arg
    KEY+OFFSET=`` (``bytes`` / an array: a pointer to a buffer of them; a number: 4 bytes; a
    text such as ``"zeros:4096"`` or ``"128:2"`` as on the command line); pointers not given
    get zero-filled buffers of ``buffer_size`` bytes (default 8 MiB). ``max_instructions``
    (per thread of a block), ``max_launch_instructions`` and ``time_limit`` (seconds) raise
    the trace's budget (``--max-instructions``, ...), ``compile_time_limit`` (seconds) the
    wall time of each nvcc compile of a ``.cu`` (``--compile-time-limit``). A wrong argument raises
    :class:`ShmemError` (code ``invalid-argument``) naming it. ``consts`` sets
    ``__constant__`` variables by name as ``cudaMemcpyToSymbol`` does: a number, a list of
    numbers (in the variable's declared type; ``"float:1,2"`` names one), or ``bytes`` / a
    NumPy array (its bytes). ``params`` is the kernel's whole parameter block as a host
    program passed it (``bytes``, or the path of a file holding them), as ``--params``.
    ``memory`` maps a device address (an int: what ``cudaMalloc`` returned) to the bytes the
    host wrote there before the launch (``bytes``, a NumPy array, or the path of a file), as
    ``--memory``: the kernel reads them as exact values.
    ``cluster`` is the thread-block cluster, as ``--cluster`` (default: the kernel's
    ``__cluster_dims__``, else 1). ``build_cache`` is a folder keeping a ``.cu``'s build for
    later traces, as ``--build-cache`` (made when a build is first kept; default: none,
    nothing written).
    """
    from .emulator import budget as budgets
    from .emulator.budget import Budget
    from .kernel.launch import (
        DEFAULT_BUFFER_BYTES,
        MAX_BLOCK_THREADS,
        MAX_GRID_BLOCKS,
        check_dims,
    )
    from .pipeline import TraceRequest, trace_file
    from .trace_request import BlockRequired

    call = "trace"
    where = arguments.path(call, "path", path)
    kernel = arguments.optional_text(call, "kernel", kernel)
    block_dims = None if block is None else arguments.dims(call, "block", block)
    grid_dims = arguments.dims(call, "grid", grid)
    cluster_dims = None if cluster is None else arguments.dims(call, "cluster", cluster)
    given = arguments.mapping(call, "args", args)
    constants = arguments.mapping(call, "consts", consts)
    preloaded = arguments.mapping(call, "memory", memory)
    smem = arguments.optional_integer(
        call, "dynamic_smem", dynamic_smem, high=most_smem_per_block()
    )
    size = arguments.optional_integer(call, "buffer_size", buffer_size, low=1, high=1 << 32)
    arch = arguments.optional_text(call, "arch", arch)
    if arch is not None and not re.fullmatch(r"sm_\d{2,3}[a-z]?", arch):
        raise arguments.fail(call, "arch", f"an architecture such as {DEFAULT_ARCH!r}", arch)
    nvcc = arguments.texts(call, "nvcc_args", nvcc_args)
    low, high = budgets.PER_THREAD_RANGE
    per_thread = arguments.optional_integer(
        call, "max_instructions", max_instructions, low=low, high=high
    )
    low, high = budgets.LAUNCH_RANGE
    launch = arguments.optional_integer(
        call, "max_launch_instructions", max_launch_instructions, low=low, high=high
    )
    seconds = arguments.optional_seconds(call, "time_limit", time_limit, *budgets.SECONDS_RANGE)
    compiling = arguments.optional_seconds(
        call, "compile_time_limit", compile_time_limit, *budgets.SECONDS_RANGE
    )
    budget = Budget.of(per_thread, launch, seconds, compiling)
    cache = None
    if build_cache is not None:
        from ..cuda.build_cache import open_cache

        cache = str(open_cache(arguments.path(call, "build_cache", build_cache)).folder)
    try:
        if block_dims is not None:
            check_dims(block_dims, "block", limit=MAX_BLOCK_THREADS)
        check_dims(grid_dims, "grid", limit=MAX_GRID_BLOCKS)
    except ShmemError as exc:
        raise exc.located(str(where)) from None
    labels: dict[str, str] = {}  # the files written for bytes given -> how the call gave them
    with tempfile.TemporaryDirectory(prefix="shmem-args-") as tmp:
        request = TraceRequest(
            path=where,
            kernel=kernel,
            block=block_dims,
            grid=grid_dims,
            args=_arg_texts(given, Path(tmp), labels),
            cluster=cluster_dims,
            dynamic_smem=smem,
            buffer_size=size if size is not None else DEFAULT_BUFFER_BYTES,
            arch=arch,
            nvcc_args=nvcc,
            nvcc_trusted=True,
            budget=budget,
            consts=_arg_texts(constants, Path(tmp), labels, prefix="const"),
            params_file=_params_file(params, Path(tmp), labels),
            memory=_memory_ranges(preloaded),
            build_cache=cache,
        )
        if block_dims is None and dynamic_smem is None:
            from .triton.cache import copied_out, is_triton_input

            copied = None if is_triton_input(where) else copied_out(where)
            if copied is not None:  # a Triton cubin without its entry: as shmem trace
                raise ShmemError(copied, path=str(where), code="invalid-launch")
        try:
            traced = trace_file(request)
        except ShmemError as exc:
            for e in exc.all:
                e.message = _labelled(e.message, Path(tmp), labels)
                if isinstance(e, BlockRequired):
                    e.message = e.in_python
                e.args = (e.message,)
            raise
        traced = _relabelled(traced, Path(tmp), labels)
    return TraceResult((traced,))
