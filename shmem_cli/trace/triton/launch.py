"""The launch of a Triton kernel as Triton's own launcher makes it, from its cache entry.

The user gives the program grid and the scalar arguments by name (``--arg n_cols=1000``);
everything else follows from the entry (:mod:`.cache`): the block, the dynamic
shared memory, the cluster dimensions the CUDA grid is multiplied by, and Triton's hidden
scratch pointers after the kernel's own parameters (null when their size is 0, otherwise a
zero-filled buffer of ``size * programs * num_ctas`` bytes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ...cuda.launch import tensormap, values
from ...plumbing.errors import shorten
from ...plumbing.frozen import frozen
from ..kernel.cubin import Kernel
from ..kernel.launch import LaunchError
from ..kernel.params import Param
from . import descriptors
from .cache import HIDDEN, TritonEntry, TritonError
from .ttgir import TritonParam, desc_rank, named, unnamed

_C_BYTES = {
    "bool": 1,
    "int8_t": 1,
    "int16_t": 2,
    "int32_t": 4,
    "int64_t": 8,
    "half": 2,
    "bfloat16": 2,
    "float": 4,
    "double": 8,
}


@frozen
class TritonLaunch:
    """What ``shmem trace`` needs beyond the user's grid and scalars."""

    block: tuple[int, int, int]
    grid: tuple[int, int, int]  # the CUDA grid: programs times cluster dimensions
    dynamic_smem: int
    args: tuple[str, ...]  # the user's, completed with the hidden pointers
    buffer_sizes: dict[int, int]  # ordinal -> bytes, for scratch buffers
    # the thread-block cluster (the entry's cluster_dims), None without one
    cluster: tuple[int, int, int] | None = None


def triton_params(kernel: Kernel, entry: TritonEntry) -> list[Param]:
    """The cubin's parameters named and typed from the TTGIR, the hidden ones last."""
    own = entry.params
    hidden = len(kernel.params) - len(own)
    if not 0 <= hidden <= len(HIDDEN):
        raise TritonError(
            f"the cubin has {len(kernel.params)} parameters and the TTGIR {len(own)}; Triton adds "
            f"at most {len(HIDDEN)} of its own, so this .ttgir does not belong to this .cubin",
            entry.folder,
        )
    out: list[Param] = []
    for i, p in enumerate(kernel.params):
        if i < len(own):
            name, c_type = own[i].name, own[i].c_type
            if own[i].is_map:
                want = tensormap.BYTES
            else:
                want = 8 if c_type.endswith("*") else _C_BYTES[c_type]
            if p.size != want:
                raise TritonError(
                    f"parameter {i} ({name}, {c_type}) has {p.size} bytes in the cubin, not "
                    f"{want}: the .ttgir does not belong to this .cubin",
                    entry.folder,
                )
        else:
            name, c_type = HIDDEN[i - len(own)], "void*"
        out.append(Param(p.ordinal, p.offset, p.size, name, c_type))
    why = _unnamed_why(entry, out)
    return [replace(p, unnamed=why) for p in out] if why else out


#: the values of an argument Triton compiles into the kernel at the call (the JIT's
#: specialization of an integer 1, and None), given as called
COMPILED_IN = ("1", "None")


def named_by_call(entry: TritonEntry, args: Sequence[str]) -> TritonEntry:
    """An older entry whose Python ``def`` has more parameters than its TTGIR: Triton compiled
    each that was 1 (or None) at the call into the kernel, and says not which. The user's
    ``--arg NAME=1`` (``=None``) of them does: the others are the TTGIR's, in order, where
    that gives every scalar parameter a name the user gave a value (nothing guessed)."""
    if not entry.def_names:
        return entry
    given: dict[str, str] = {}
    for text in args:
        key, _, value = text.partition("=")
        given[key.strip()] = value.strip()
    called = {k for k, v in given.items() if k in entry.def_names and v in COMPILED_IN}
    params = named([n for n in entry.def_names if n not in called], entry.params)
    if params is None:
        return entry
    # a descriptor's parts (a_desc.shape0) follow from it; every other scalar must be given
    if any(p.name not in given for p in params if "." not in p.name and not p.is_pointer):
        return entry  # a scalar left to a guess: a bool given as 1 looks compiled in
    return replace(entry, params=params, compiled_in=tuple(sorted(called)))


def check_entry_block(kernel: Kernel, entry: TritonEntry) -> None:
    """The block of the entry's metadata (num_warps x warp size) is the one its cubin was built
    for (``.reqntid``), as in every entry Triton writes: another is the entry's error at
    ``num_warps`` (it was "--block 256,1,1 ...: leave --block out", of a --block never given)."""
    need = kernel.required_block
    if need is None or need == entry.block:
        return
    from .metadata import field_error

    raise field_error(
        entry.cubin.with_suffix(".json"),
        f"unexpected metadata: 'num_warps' is {entry.num_warps} (a block of "
        f"{entry.block[0]:,} threads), where the entry's cubin was built for a block of exactly "
        f"{need[0]}x{need[1]}x{need[2]} (.reqntid): the entry's files come from different "
        "compiles; give an entry folder as Triton wrote it",
        "num_warps",
    )


def triton_launch(
    entry: TritonEntry,
    params: Sequence[Param],
    *,
    block: tuple[int, int, int] | None,
    grid: tuple[int, int, int],
    dynamic_smem: int | None,
    args: Sequence[str],
    cluster: tuple[int, int, int] | None = None,
    params_file: str | None = None,
) -> TritonLaunch:
    """The launch Triton makes for ``grid`` programs with the user's ``args``; a ``block``,
    ``cluster`` or a ``dynamic_smem`` too small for it, that Triton's launcher never makes from
    this entry, refused, and so is a whole parameter block (``params_file``)."""
    if params_file is not None:
        raise LaunchError(_block_refused(entry))
    if block is not None and block != entry.block:
        raise LaunchError(
            f"a Triton kernel runs with num_warps * {entry.warp_size} = {entry.block[0]} threads "
            f"(this entry: num_warps={entry.num_warps}); leave out --block, or trace another "
            "entry"
        )
    if cluster is not None and cluster != entry.cluster_dims:
        raise LaunchError(
            "a Triton kernel runs in the clusters of its metadata (cluster_dims, or num_ctas "
            f"x 1 x 1: this entry's {'x'.join(map(str, entry.cluster_dims))}); leave out "
            "--cluster, or trace another entry"
        )
    if dynamic_smem is not None and dynamic_smem < entry.shared:
        raise LaunchError(
            f"--dynamic-smem {dynamic_smem:,}: this Triton kernel uses {entry.shared:,} bytes "
            "of dynamic shared memory (its metadata's shared, which Triton's launcher passes); "
            "leave out --dynamic-smem"
        )
    by_name = {p.name: p for p in params}
    given: list[str] = []
    named: set[str] = set()
    own = list(entry.params)
    for text in args:
        key, sep, value = text.partition("=")
        if key.strip() in entry.compiled_in:
            continue  # 1 or None at the call: Triton compiled it into the kernel
        param = by_name.get(key.strip())
        position = key.strip()
        if param is None and re.fullmatch(r"[0-9]{1,9}", position) and int(position) < len(params):
            param = params[int(position)]
        own_param = own[param.ordinal] if param is not None and param.ordinal < len(own) else None
        raw = own_param is not None and own_param.is_map and not own_param.is_desc
        if raw and not value.strip().startswith(("tensormap:", "@")):
            raise LaunchError(_map_hint(key.strip()))  # an experimental map: no tensordesc
        if param is not None and param.ordinal < len(own) and own[param.ordinal].is_desc:
            if not value.strip().startswith(descriptors.PREFIX):
                raise LaunchError(_desc_hint(param.name or key))
            for pos, v in descriptors.expand(entry, own, param.ordinal, value.strip()):
                given.append(f"{pos}={v}")
                named.add(params[pos].name or "")
        elif param is not None and sep:
            if own_param is not None:
                _check_divisible(own_param, key.strip(), value.strip())
            named.add(param.name or "")
            given.append(f"{key}={value.strip()}")  # a float one takes 1 as 1.0 (launch)
        elif param is None and not position.isdigit():
            known = not entry.def_names or position in entry.def_names
            if known and value.strip() in COMPILED_IN:
                continue  # as called: Triton compiled a 1 or a None into the kernel
            raise LaunchError(_not_a_parameter(position, params, entry))
        else:
            given.append(text)  # plan_launch says what is wrong with it
    missing = [p.name for p in own if p.is_desc and p.name not in named]
    if missing:
        raise LaunchError(_desc_hint(missing[0]))
    maps = [p.name for p in own if p.is_map and not p.is_desc and p.name not in named]
    if maps:
        raise LaunchError(_map_hint(maps[0]))
    cluster = entry.cluster_dims
    programs = grid[0] * grid[1] * grid[2]
    sizes: dict[int, int] = {}
    for p in params:
        if p.name not in HIDDEN or p.name in named:
            continue
        size = entry.scratch_bytes(p.name)
        if size == 0:
            given.append(f"{p.ordinal}=0")
        else:
            sizes[p.ordinal] = size * programs * cluster[0] * cluster[1] * cluster[2]
    return TritonLaunch(
        block=entry.block,
        grid=(grid[0] * cluster[0], grid[1] * cluster[1], grid[2] * cluster[2]),
        dynamic_smem=entry.shared if dynamic_smem is None else dynamic_smem,
        args=tuple(given),
        buffer_sizes=sizes,
        cluster=cluster if cluster != (1, 1, 1) else None,
    )


def _check_divisible(param: TritonParam, key: str, value: str) -> None:
    """Refuse an integer the entry was not compiled for: Triton's JIT compiles an integer
    argument that is a multiple of 16 at the call as such (``tt.divisibility = 16``), and
    runs a call whose value is not through another entry."""
    number = values.integer(value)  # as the launch reads it: 016 is sixteen
    if number is None:
        return  # not an integer: plan_launch says what is wrong with it
    d = param.divisible
    if d > 1 and number % d:
        raise LaunchError(
            f"--arg {shorten(key)}={shorten(value)}: this entry was compiled for "
            f"{shorten(param.name)} a multiple of {d} (tt.divisibility = {d} in its TTGIR: "
            "Triton's JIT so marks an integer that is one at the call), and Triton runs a call "
            f"with {shorten(value)} through another entry: trace that one (--kernel on the cache "
            f"root lists them), or give a multiple of {d}"
        )


def _block_refused(entry: TritonEntry) -> str:
    """Why ``--params`` is no way to launch a Triton kernel, and what to give instead."""
    names = ", ".join(p.name for p in entry.params)
    return (
        "--params gives a whole parameter block, the bytes a CUDA host program passes; "
        "Triton's launcher passes a Triton kernel's arguments one by one, from its Python "
        "call, and adds its own scratch pointers after them, and shmem builds the block as it "
        "does: leave out --params, and give the program grid (--grid) and the arguments by "
        f"name (this kernel's: {shorten(names, 200)}; --list-params lists them): a scalar as "
        "--arg NAME=VALUE, a pointer's data as --arg NAME=@FILE (zero-filled where not "
        "given), a host-side descriptor as --arg NAME=tensordesc:shape=...,strides=..."
    )


def _desc_hint(name: str) -> str:
    return (
        f"{name} is a host-side tensor descriptor (TensorDescriptor): give the tensor's shape "
        f"and strides, --arg {name}=tensordesc:shape=256x256,strides=256x1 (block shape, type "
        "and swizzle come from the entry)"
    )


def _map_hint(name: str) -> str:
    return (
        f"{name} is a TMA descriptor the host encodes (Triton's experimental "
        "create_2d_tma_descriptor(ptr, dim1, dim0, block_dim1, block_dim0, size)): give it as "
        f"--arg {name}=tensormap:dtype=u16,dims=DIM0xDIM1,box=BLOCK0xBLOCK1,swizzle=128B,l2=128B "
        "as Triton's driver encodes it: dtype u8, u16 or u32 by the element size, dims and box "
        "innermost first, swizzle 128B where the box's inner row is 128 bytes or more (its box "
        "then 128 bytes wide), 64B from 64, 32B from 32"
    )


def _not_a_parameter(name: str, params: Sequence[Param], entry: TritonEntry) -> str:
    """An ``--arg`` naming no parameter of the compiled kernel: Triton drops constexprs and
    the integer arguments it specialized (equal to 1 at the call) from the signature."""
    own = [p.name for p in params if p.name and p.name not in HIDDEN]
    names = ", ".join(own)
    def_names = entry.def_names
    if unnamed(own) and def_names:
        # a descriptor is one name of the def and 1 + 2 * rank parameters of the TTGIR
        units = len(entry.params) - sum(2 * desc_rank(p) for p in entry.params)
        return (
            f"--arg {shorten(name)}: this entry's TTGIR does not name the parameters (an older "
            f"Triton writes {shorten(names, 120)}), and the kernel's Python def has "
            f"{len(def_names) - units} more ({shorten(', '.join(def_names), 200)}): Triton "
            "compiled each argument that was 1 (or None) at the call into the kernel without "
            "saying which. Give those as "
            "called (--arg NAME=1, --arg NAME=None; a bool as True or False) with every scalar "
            "by name, and the others are named; or name the parameters by position (--arg "
            "0=...; --list-params lists them)"
        )
    if unnamed(own):
        return f"--arg {shorten(name)}: {_unread_def(names, entry)}"
    return (
        f"--arg {shorten(name)}: the compiled kernel has no parameter of that name (names: "
        f"{shorten(names, 200)}); Triton compiles every constexpr and each argument that was "
        "1 or None at the call into the kernel and drops it from the parameters: leave it out "
        "(or give it as called, NAME=1 or NAME=None)"
    )


def _unnamed_why(entry: TritonEntry, params: Sequence[Param]) -> str | None:
    """Why an older entry's parameters have no names (``arg0``, ...), for ``--list-params``
    and the trace's note (:func:`.kernel.params.unnamed_note`): None where they are named, or
    could not have been (a TTGIR that names no file)."""
    own = [p.name for p in params if p.name and p.name not in HIDDEN]
    if not (unnamed(own) and entry.unread_def):
        return None
    return _unread_def(", ".join(own), entry)


def _unread_def(names: str, entry: TritonEntry) -> str:
    """Why an older entry's parameters have no names: the kernel's ``.py`` (as its TTGIR names
    it) lies outside the source tree, is not on this machine, or has no such ``def`` (in the
    words a cubin's line table's source gets: :func:`.named_sources.unread_words`)."""
    from ...cuda.named_sources import GONE, unread_words

    said = (
        f"this entry's TTGIR does not name the parameters (an older Triton writes "
        f"{shorten(names, 120)}), and their names come from the kernel's Python def"
    )
    why = entry.unread_why or GONE
    declaration = f"def of {shorten(entry.name)}"
    return said + unread_words(
        entry.unread_def, why, names_it="the TTGIR", declaration=declaration, of="entry"
    )
