"""A kernel launch from the command line: block and grid sizes, arguments, buffers.

``--arg KEY=VALUE`` sets one kernel parameter; KEY is its 0-based position or its
name in the CUDA source. VALUE is

* a number: decimal or ``0x`` hexadecimal integer, or a float (``1.5``, ``1e-3``, ``inf``),
  stored in the parameter's size (1, 2, 4 or 8 bytes; floats as half, float or double);
* several numbers ``a,b,c`` for a struct passed by value (CuTe shapes and strides), in order:
  fields of the parameter's size over their count where that is 1, 2, 4 or 8 bytes (``--arg
  0=128,128,128``: a 12-byte ``Dims{int m, n, k}``), else 4-byte fields, the rest zero;
* ``@FILE.bin`` (raw bytes) or ``@FILE.npy`` (a NumPy array's bytes): a pointer's buffer;
  for a 128-byte parameter, a ``CUtensorMap`` dumped on a GPU (its memory zero-filled here);
* ``tensormap:dtype=bf16,dims=4096x128,box=64x128,swizzle=128B[,data=@A.bin]`` for a
  ``CUtensorMap`` parameter: what ``cuTensorMapEncodeTiled`` takes (:mod:`.tensormap`); its
  global memory is the data file or a zero-filled buffer.

``KEY+OFFSET=VALUE`` puts one value at byte OFFSET inside a parameter (a struct by value, a
``--params`` block): a pointer to a new buffer (``@FILE``, ``zeros:BYTES``), a number
(``NUMBER[:WIDTH]``) or a tensor map (:mod:`.param_fields`).

Without ``--arg`` a pointer gets a zero-filled buffer of ``--buffer-size`` bytes, any other
parameter 0; the report lists both (an address made from zeros is marked data-dependent).
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ...cuda.launch import tensormap, values
from ...cuda.launch.values import (
    MAX_BLOCK_THREADS,
    MAX_CLUSTER_CTAS,
    MAX_GRID_BLOCKS,
    LaunchError,
    check_dims,
    parse_dims,
)
from ...cuda.launch.zeros import MAX_GLOBAL_BYTES
from ...hardware.arch import rules_for
from ...plumbing.errors import ShmemError, brief_name, shorten
from ...plumbing.frozen import frozen
from ..emulator.trace_error import TraceError
from .buffers import buffer_source, read_buffer
from .cubin import Kernel
from .param_block import Handover, MemoryBytes, MemoryRange
from .param_fields import FieldArg, TensorMapArg, check_overlaps, field_arg, file_total, has_offset
from .params import Param, kernel_params, param_table, resolve_key

__all__ = [
    "MAX_BLOCK_THREADS",
    "MAX_GRID_BLOCKS",
    "LaunchError",
    "LaunchPlan",
    "Param",  # Param, kernel_params and param_table are .params's
    "check_dims",
    "kernel_params",
    "name_defaults",
    "param_table",
    "parse_dims",
    "plan_launch",
    "read_defaults",
    "value_bytes",
]

DEFAULT_BUFFER_BYTES = 8 << 20  # each synthetic buffer: 8 MiB, zero-filled


class BufferSink(Protocol):
    """Where buffers go: the emulator's global memory."""

    def add_buffer(
        self,
        content: bytes | int | Handover,
        name: str,
        size: int | None = None,
        *,
        made: str | None = None,
    ) -> int: ...


@frozen
class Buffer:
    """A global buffer a pointer parameter points to."""

    param: Param
    size: int
    source: str  # "zero-filled" or the file it was read from
    content: Handover | None  # None: ``size`` zero bytes; handed to the emulator's memory

    @property
    def synthetic(self) -> bool:
        return self.content is None


@frozen
class Argument:
    """A by-value parameter's bytes and how they came to be."""

    param: Param
    data: bytes
    text: str  # as given, or "0 (default)"
    given: bool


@frozen
class LaunchPlan:
    """Everything about a launch except device addresses (those come from the emulator)."""

    kernel: Kernel
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    dynamic_smem: int
    params: tuple[Param, ...]
    arguments: tuple[Argument, ...]
    buffers: tuple[Buffer, ...]
    tensor_maps: tuple[TensorMapArg, ...] = ()
    #: the whole parameter block from ``--params @FILE`` (the ``--arg``\ s written over it)
    param_image: bytes | None = None
    param_source: str | None = None
    #: the thread-block cluster: --cluster, else the kernel's __cluster_dims__, else 1x1x1
    cluster: tuple[int, int, int] = (1, 1, 1)
    #: device memory the host wrote before the launch (``--memory``), at real addresses
    memory: tuple[MemoryRange, ...] = ()
    #: values at offsets inside parameters (``--arg KEY+OFFSET=``): numbers and pointers
    fields: tuple[FieldArg, ...] = ()

    def param_bytes(self, memory: BufferSink) -> bytes:
        """The parameter block, with every buffer added to ``memory`` and its address stored.
        The buffer files' bytes are handed over to ``memory`` (held once): a plan is traced
        once."""
        image = bytearray(self.param_image or bytes(self.kernel.param_bytes))
        for arg in self.arguments:
            image[arg.param.offset : arg.param.offset + len(arg.data)] = arg.data
        for buf in self.buffers:
            name = buf.param.name or f"param{buf.param.ordinal}"
            # handed over: the arena's copy is the only one left
            key = buf.param.name or str(buf.param.ordinal)  # the --arg that would give it
            made = key if buf.synthetic else None
            address = memory.add_buffer(buf.content or buf.size, name, made=made)
            image[buf.param.offset : buf.param.offset + 8] = struct.pack("<Q", address)
        for f in self.fields:
            at = f.param.offset + f.offset
            if f.is_pointer:  # a new buffer, its content handed over as a pointer's is
                address = memory.add_buffer(f.held or f.buffer_size, f.buffer_name)
                image[at : at + 8] = struct.pack("<Q", address)
            else:
                image[at : at + f.size] = f.data
        for k, tm in enumerate(self.tensor_maps):
            size = max(tensormap.extent(tm.map), len(tm.data or b""))
            name = f"tensormap{k}"  # zero-filled past its data, and nothing real until written
            address = (
                memory.add_buffer(tm.data, name, size) if tm.data else memory.add_buffer(size, name)
            )
            at = tm.param.offset + tm.offset
            image[at : at + tensormap.BYTES] = tensormap.encode(
                dataclasses.replace(tm.map, address=address)
            )
        return bytes(image)

    @property
    def zero_filled(self) -> tuple[str, ...]:
        """Labels of the parameters whose buffers were made up (zero-filled)."""
        return tuple(b.param.label for b in self.buffers if b.synthetic)

    @property
    def defaulted(self) -> tuple[str, ...]:
        """Labels of the by-value parameters nobody gave (0)."""
        return tuple(a.param.label for a in self.arguments if not a.given)


def _check_prefix(params_file: str, covered: int, params: Sequence[Param], given: set[int]) -> None:
    """A ``--params`` file that holds the leading parameters only: ``--arg`` must give every
    parameter past its end."""
    owed = [p.label for p in params if p.offset >= covered and p.ordinal not in given]
    if owed:
        raise LaunchError(
            f"--params {shorten(params_file[1:])} ends at byte {covered:,} of the parameter "
            f"block; give the parameter(s) after it with --arg: {', '.join(owed)}"
        )


def value_bytes(text: str, param: Param) -> bytes:
    """The bytes of a by-value parameter from ``--arg`` text (:func:`.values.value_bytes`)."""
    key = param.name or str(param.ordinal)  # KEY of --arg KEY+OFFSET=, named in a refusal
    return values.value_bytes(text, param.size, f"--arg {param.label}", param.value_type, key=key)


def read_buffer_file(text: str, param: Param) -> bytes:
    """The content of ``@FILE`` (raw bytes, or a ``.npy`` array's data): :mod:`.buffers`."""
    return read_buffer(text[1:], f"--arg {param.label}")


def launch_cluster(
    kernel: Kernel, grid: tuple[int, int, int], given: tuple[int, int, int] | None
) -> tuple[int, int, int]:
    """The launch's cluster (``--cluster``, else the kernel's __cluster_dims__, else 1x1x1),
    checked as the driver does: the grid's divisor, its own if declared, at most 16 CTAs."""
    declared = kernel.cluster_dims
    if declared is not None:  # the cubin's EIATTR_CTA_PER_CLUSTER: any three 32-bit sizes
        what = f"the cubin's __cluster_dims__ of {brief_name(kernel.name)} (rebuild it):"
        check_dims(declared, what, limit=MAX_CLUSTER_CTAS)
    if given is not None:
        check_dims(given, "--cluster", limit=MAX_CLUSTER_CTAS)
        if declared is not None and tuple(given) != declared:
            raise LaunchError(
                f"--cluster {','.join(map(str, given))}: the kernel declares "
                f"__cluster_dims__({', '.join(map(str, declared))}), and CUDA launches it with "
                "that cluster only: leave --cluster out"
            )
    shape = given or declared or (1, 1, 1)
    values.check_whole_clusters(grid, shape, declared=given is None and declared is not None)
    return (shape[0], shape[1], shape[2])


def check_shared(kernel: Kernel, dynamic_smem: int) -> None:
    """Refuse a block with more shared memory than its architecture's profile allows
    (:attr:`.ArchProfile.smem_per_block`: each block of a cluster on its own, never their sum)."""
    profile = rules_for(kernel.arch)
    static = kernel.static_shared_bytes
    if static > profile.smem_per_block:  # no --dynamic-smem helps: the cubin claims too much
        raise LaunchError(
            f"{brief_name(kernel.name)} has {static:,} bytes of static shared memory, more than "
            f"an {profile.name} block may have ({profile.smem_per_block:,}), and CUDA refuses "
            "to launch it: rebuild it with smaller __shared__ arrays"
        )
    if static + dynamic_smem > profile.smem_per_block:
        raise LaunchError(
            f"--dynamic-smem: {dynamic_smem:,} bytes of dynamic shared memory and "
            f"the kernel's {static:,} static are more than one block may have: "
            f"{profile.smem_limit()}; give at most "
            f"{max(0, profile.smem_per_block - static):,} bytes of dynamic shared memory"
        )


def check_block(kernel: Kernel, block: tuple[int, int, int]) -> None:
    """Refuse a block CUDA does not launch for this kernel: not its ``.reqntid``, or more
    threads than its ``__launch_bounds__`` or than an SM has registers for."""
    threads = block[0] * block[1] * block[2]
    said = f"--block {','.join(map(str, block))} ({threads:,} threads): {brief_name(kernel.name)}"
    need = kernel.required_block
    if need is not None and block != need:
        raise LaunchError(
            f"{said} was built for a block of exactly {need[0]}x{need[1]}x{need[2]} (.reqntid; "
            f"Triton's num_warps x 32), and CUDA refuses any other: leave --block out"
        )
    most = kernel.max_threads  # (a block past the SM's 1,024: check_dims, before)
    if most is not None and threads > most[0] * most[1] * most[2]:
        raise LaunchError(
            f"{said} was built for at most {most[0] * most[1] * most[2]:,} threads a block "
            "(__launch_bounds__), and CUDA refuses a larger launch"
        )
    profile = rules_for(kernel.arch)
    if kernel.registers and threads > profile.most_threads(kernel.registers):
        raise LaunchError(
            f"{said} takes {kernel.registers} registers a thread: an {profile.name} SM's "
            f"{profile.registers_per_sm:,} hold {profile.most_threads(kernel.registers):,} "
            "threads of it, and CUDA refuses a larger block (too many resources requested); "
            "give fewer threads, or rebuild it with fewer registers (-maxrregcount)"
        )


def plan_launch(
    kernel: Kernel,
    params: Sequence[Param],
    *,
    block: tuple[int, int, int],
    grid: tuple[int, int, int] = (1, 1, 1),
    args: Sequence[str] = (),
    dynamic_smem: int = 0,
    buffer_size: int = DEFAULT_BUFFER_BYTES,
    buffer_sizes: Mapping[int, int] | None = None,
    params_file: str | None = None,
    cluster: tuple[int, int, int] | None = None,
    memory: Sequence[str | MemoryBytes] = (),
) -> LaunchPlan:
    """The launch ``--arg`` texts and sizes describe, checked against the kernel.

    ``buffer_sizes`` gives some pointer parameters (by ordinal) a zero-filled buffer of
    their own size instead of ``buffer_size`` (a Triton kernel's scratch). ``params_file``
    (``@FILE``) is the whole parameter block a host program passed: the parameters no
    ``--arg`` gives keep its bytes, pointers included; ``memory`` the ``--memory`` texts
    (:mod:`.param_block`)."""
    from .param_block import read_memory, read_param_block

    image, covered = (
        read_param_block(
            params_file,
            kernel.param_bytes,
            brief_name(kernel.name),
            first=min((p.offset for p in kernel.params), default=0),
            ends=[p.offset + p.size for p in kernel.params],
        )
        if params_file is not None
        else (None, 0)
    )
    check_dims(block, "--block", limit=MAX_BLOCK_THREADS)
    check_dims(grid, "--grid", limit=MAX_GRID_BLOCKS)
    shape = launch_cluster(kernel, grid, cluster)
    if dynamic_smem < 0:
        raise LaunchError("--dynamic-smem must not be negative")
    check_shared(kernel, dynamic_smem)
    check_block(kernel, block)
    given: dict[int, str] = {}
    maps: list[TensorMapArg] = []
    fields: list[FieldArg] = []
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise LaunchError(f"--arg expects POSITION=VALUE or NAME=VALUE, got {shorten(arg)!r}")
        if has_offset(key) or value.strip().startswith(tensormap.PREFIX):
            placed = field_arg(key, value.strip(), params)
            if isinstance(placed, FieldArg):
                fields.append(placed)
                file_total(fields)
            else:
                maps.append(placed)
            continue
        param = resolve_key(key, params)
        if param.ordinal in given:
            raise LaunchError(f"--arg {param.label} is given twice")
        given[param.ordinal] = value.strip()
    parts: list[TensorMapArg | FieldArg] = [*maps, *fields]
    check_overlaps(parts)
    parted = {f.param.ordinal for f in parts}
    for p in params:
        if p.ordinal in parted and given.get(p.ordinal, "").startswith("@"):
            raise LaunchError(
                f"--arg {p.label}: given whole as @FILE and in parts with --arg "
                f"{p.name or p.ordinal}+OFFSET=...: give one or the other"
            )
    if image is not None and params_file is not None:
        _check_prefix(params_file, covered, params, {*given, *parted})
    arguments: list[Argument] = []
    buffers: list[Buffer] = []
    for p in params:
        text = given.get(p.ordinal)
        if text is not None and text.startswith("@") and p.size == tensormap.BYTES:
            raw = read_buffer_file(text, p)
            try:
                tm = tensormap.decode(raw)
            except tensormap.TensorMapError as exc:
                raise LaunchError(f"--arg {p.label}: {text[1:]}: {exc.message}") from None
            if tm is None:
                arguments.append(Argument(p, raw, text, True))
            else:
                maps.append(TensorMapArg(p, 0, tm, None, "zero-filled"))
            continue
        if p.ordinal in parted and text is None and image is None:
            arguments.append(Argument(p, bytes(p.size), "0", True))  # under its parts
            continue
        if text is not None and text.startswith("@"):
            if p.size != 8:
                raise LaunchError(
                    f"--arg {p.label}: @FILE is for pointer parameters; this one has {p.size} "
                    f"bytes (a pointer inside a struct: --arg {p.name or p.ordinal}+OFFSET=@FILE)"
                )
            held = Handover(buffer_source(text[1:], f"--arg {p.label}", p.type))
            buffers.append(Buffer(p, held.size, text[1:], held))
            file_total(fields, _files(buffers))
        elif text is None and image is not None and params_file is not None:
            given_bytes = image[p.offset : p.offset + p.size]
            arguments.append(Argument(p, given_bytes, f"from {params_file[1:]}", True))
        elif text is None and p.is_pointer:
            size = (buffer_sizes or {}).get(p.ordinal, buffer_size)
            buffers.append(Buffer(p, size, "zero-filled", None))
        elif text is None:
            arguments.append(Argument(p, bytes(p.size), "0 (default)", False))
        else:
            shown = values.as_typed(text, p.size, p.value_type)  # alpha=1 shows 1.0 for a float
            arguments.append(Argument(p, value_bytes(text, p), shown, True))
    _check_global(buffers, maps, fields)
    return LaunchPlan(
        memory=read_memory(memory, file_total(fields, _files(buffers))),
        fields=tuple(fields),
        cluster=shape,
        kernel=kernel,
        block=block,
        grid=grid,
        dynamic_smem=dynamic_smem,
        params=tuple(params),
        arguments=tuple(arguments),
        buffers=tuple(buffers),
        tensor_maps=tuple(maps),
        param_image=image,
        param_source=params_file[1:] if params_file else None,
    )


def _files(buffers: Sequence[Buffer]) -> int:
    """Bytes of the buffer files the pointer parameters read."""
    return sum(b.size for b in buffers if b.content is not None)


def _check_global(
    buffers: Sequence[Buffer], maps: Sequence[TensorMapArg], fields: Sequence[FieldArg]
) -> None:
    """Every buffer and tensor map of the launch fits in :data:`MAX_GLOBAL_BYTES`."""
    sizes = [b.size for b in buffers] + [tensormap.extent(m.map) for m in maps]
    total = sum(sizes) + sum(f.buffer_size for f in fields)
    if total > MAX_GLOBAL_BYTES:
        raise LaunchError(
            f"the launch's buffers and tensor maps span {total:,} bytes of global memory; "
            f"the most is {MAX_GLOBAL_BYTES >> 30} GiB (a smaller --buffer-size, zeros:BYTES "
            "or tensor-map dims)"
        )


def name_defaults(exc: ShmemError, defaulted: Sequence[str]) -> None:
    """Say in a launch's error which parameters nobody gave (a size left at 0 sends addresses
    astray), unless it says how to give the data (a :class:`.TraceError`'s ``gives_data``)."""
    if defaulted and not (isinstance(exc, TraceError) and exc.gives_data):
        exc.message += (
            f" (parameter(s) {', '.join(defaulted)} were not given and are 0: give the launch's "
            "values with --arg NAME=VALUE, or its parameter block with --params @FILE)"
        )
        exc.args = (exc.message,)


def read_defaults(plan: LaunchPlan, instructions: Sequence[Any], base: int) -> tuple[str, ...]:
    """The parameters nobody gave (0) that the kernel's code reads: a one-byte parameter no
    ``c[0x0][...]`` operand reaches (an empty class by value: ``std::integral_constant``,
    CuTe's static shapes, layouts and copy atoms) has no value to give. Every one counts as
    read where the code indexes bank 0 with a register."""
    from ...cuda.sass_operands import Const

    spans: set[tuple[int, int]] = set()
    for ins in instructions:
        width = 8 if ins.opcode.startswith("D") else 4  # a double's operand: 8 bytes
        for m in ins.mods:
            width = max(width, 16 if "128" in m else 8 if "64" in m else width)
        for o in ins.operands:
            if isinstance(o, Const) and o.bank == 0:
                if o.reg is not None:
                    return plan.defaulted
                spans.add((o.offset, o.offset + width))

    def read(start: int) -> bool:  # a read that covers the byte (a .U8 one taken as 4 bytes)
        return any(lo <= start < hi for lo, hi in spans)

    return tuple(
        a.param.label
        for a in plan.arguments
        if not a.given and (a.param.size > 1 or read(base + a.param.offset))
    )
