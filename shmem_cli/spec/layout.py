"""Concrete layouts: a spec's block and arrays resolved for one variant.

A *variant* is a choice of params, per-array padding and swizzle (what ``shmem
sweep`` varies). Resolving evaluates the param expressions and checks what the
hardware requires: block limits, alignment, swizzle periods, the shared-memory
budget.

An :class:`ArrayLayout` is, as in CuTe, a function from indices to addresses:
``array(i, j)`` is the byte address of element ``[i][j]``, with the padding, the
swizzle and the array's offset composed in. It is the one place a byte address is
computed (the iteration space, ``shmem sweep`` and the tests' reference model all
call it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from math import prod
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from ..hardware.swizzle import Swizzle, bit_words
from ..plumbing.errors import ShmemError, shorten
from ..plumbing.frozen import frozen
from .compile import ArrayDecl, Located, SpecFile

if TYPE_CHECKING:
    import numpy.typing as npt

Index = TypeVar("Index", int, "npt.NDArray[np.int64]")  # numpy.typing not loaded at run time

ALLOC_ALIGN = (
    128  # arrays without an offset start at the next multiple of this (or their alignment)
)


@frozen
class Variant:
    """Overrides applied on top of a spec. ``pad``/``swizzle`` keys are array names."""

    params: Mapping[str, int] = field(default_factory=dict)
    pad: Mapping[str, int] = field(default_factory=dict)
    swizzle: Mapping[str, Swizzle | None] = field(default_factory=dict)


@frozen
class ArrayLayout:
    """One array of a variant: its sizes, strides, offset and swizzle in numbers."""

    name: str
    decl: ArrayDecl
    shape: tuple[int, ...]  # declared shape, padding excluded
    pad: int
    strides: tuple[int, ...]  # in elements, padding included
    offset: int  # byte offset of element 0 in shared memory
    nbytes: int
    swizzle: Swizzle | None

    @property
    def esize(self) -> int:
        return self.decl.dtype.size

    @property
    def padded_shape(self) -> tuple[int, ...]:
        return (*self.shape[:-1], self.shape[-1] + self.pad)

    def __call__(self, *index: Index) -> Index:
        """The byte address of element ``index`` (ints, or arrays that broadcast together):
        ``offset + swizzle(row-major flat index, padding included, * element size)``.

        Indices are not bounds-checked here; the callers report a bad one, located.
        """
        if len(index) != len(self.strides):
            raise ValueError(f"{self.name} has {len(self.strides)} dimensions, not {len(index)}")
        esize = self.esize
        offset = index[0] * (self.strides[0] * esize)
        for value, stride in zip(index[1:], self.strides[1:], strict=True):
            offset = offset + value * (stride * esize)
        if self.swizzle is not None:
            offset = self.swizzle.apply(offset)
        return offset + self.offset


@frozen
class Layout:
    """A variant's block, params and arrays, resolved to numbers."""

    block: tuple[int, int, int]
    params: Mapping[str, int]
    arrays: Mapping[str, ArrayLayout]
    smem_bytes: int

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


def _const(spec: SpecFile, loc: Located, params: Mapping[str, int], what: str) -> int:
    try:
        return loc.expr.constant(params)
    except ShmemError as exc:
        raise exc.located(spec.path, loc.pos) from None
    except Exception as exc:  # EvalFault: division by zero etc.
        raise ShmemError(
            f"{what}: {getattr(exc, 'message', exc)}", path=spec.path, pos=loc.pos
        ) from None


def resolve(spec: SpecFile, variant: Variant | None = None) -> Layout:
    """Evaluate the spec's layout for ``variant`` and check it against the arch profile."""
    variant = variant or Variant()
    arch = spec.arch
    params = dict(spec.params)
    for name, value in variant.params.items():
        if name not in params:
            raise ShmemError(
                f"unknown param {shorten(name)!r}; the spec defines "
                f"{shorten(', '.join(params), 200) or 'none'}"
            )
        params[name] = value
    dims = [_const(spec, loc, params, "block size") for loc in spec.block]
    for i, (d, loc) in enumerate(zip(dims, spec.block, strict=True)):
        if d < 1 or d > arch.max_block_dims[i]:
            raise ShmemError(
                f"blockDim.{'xyz'[i]} = {d} is outside 1..{arch.max_block_dims[i]}",
                path=spec.path,
                pos=loc.pos,
            )
    while len(dims) < 3:
        dims.append(1)
    block = (dims[0], dims[1], dims[2])
    if prod(block) > arch.max_threads:
        raise ShmemError(
            f"a block of {block[0]}x{block[1]}x{block[2]} = {prod(block)} threads exceeds the "
            f"{arch.max_threads} threads a block may have",
            path=spec.path,
            pos=spec.block[0].pos,
        )
    arrays: dict[str, ArrayLayout] = {}
    cursor = 0
    for decl in spec.arrays.values():
        lay = _resolve_array(spec, decl, params, variant, cursor)
        arrays[decl.name] = lay
        cursor = max(cursor, lay.offset + lay.nbytes)
    if cursor > arch.smem_per_block:
        first = next(iter(spec.arrays.values()))
        raise ShmemError(
            f"the arrays need {cursor} bytes of shared memory; a block may use at most "
            f"{arch.smem_per_block} bytes ({arch.smem_per_block // 1024} KB) on {arch.name}",
            path=spec.path,
            pos=first.pos,
        )
    return Layout(block=block, params=params, arrays=arrays, smem_bytes=cursor)


def _resolve_array(
    spec: SpecFile, decl: ArrayDecl, params: Mapping[str, int], variant: Variant, cursor: int
) -> ArrayLayout:
    shape = tuple(_const(spec, loc, params, f"shape of {shorten(decl.name)}") for loc in decl.shape)
    for d, loc in zip(shape, decl.shape, strict=True):
        if d < 1:
            raise ShmemError(
                f"array {shorten(decl.name)!r} has a dimension of {d}; dimensions must be positive",
                path=spec.path,
                pos=loc.pos,
            )
    pad = variant.pad.get(decl.name, None)
    if pad is None:
        pad = _const(spec, decl.pad, params, f"pad of {shorten(decl.name)}")
    if pad < 0:
        raise ShmemError(
            f"array {shorten(decl.name)!r} has a negative pad ({pad})",
            path=spec.path,
            pos=decl.pad.pos,
        )
    swizzle = variant.swizzle.get(decl.name, decl.swizzle)
    esize = decl.dtype.size
    padded = (*shape[:-1], shape[-1] + pad)
    strides = [1] * len(padded)
    for k in range(len(padded) - 2, -1, -1):
        strides[k] = strides[k + 1] * padded[k + 1]
    elems = prod(padded)
    if elems * esize > 1 << 30:
        raise ShmemError(
            f"array {shorten(decl.name)!r} is {elems * esize} bytes, far beyond shared memory",
            path=spec.path,
            pos=decl.pos,
        )
    nbytes = elems * esize
    align = max(decl.dtype.alignment, swizzle.period if swizzle else 1)
    if decl.offset is not None:
        offset = _const(spec, decl.offset, params, f"offset of {shorten(decl.name)}")
        if offset < 0:
            raise ShmemError(
                f"array {shorten(decl.name)!r} has a negative offset",
                path=spec.path,
                pos=decl.offset.pos,
            )
        if offset % decl.dtype.alignment:
            raise ShmemError(
                f"array {shorten(decl.name)!r} ({decl.dtype.name}) starts at byte {offset}, "
                "which is not a "
                f"multiple of its {decl.dtype.alignment}-byte alignment",
                path=spec.path,
                pos=decl.offset.pos,
            )
        if swizzle and offset % swizzle.period:
            raise ShmemError(
                f"swizzle {swizzle.label} on array {shorten(decl.name)!r} XORs "
                f"{bit_words(swizzle)} and repeats every {swizzle.period} "
                f"bytes, so the array must start at a multiple of {swizzle.period} bytes "
                f"(__align__({swizzle.period})); it starts at byte {offset}",
                path=spec.path,
                pos=decl.offset.pos,
            )
    else:
        step = max(ALLOC_ALIGN, align)
        offset = -(-cursor // step) * step
    if swizzle is not None:
        unit = swizzle.unit
        if not swizzle.identity and unit < esize:
            low, need = unit.bit_length() - 1, esize.bit_length() - 1
            cute = swizzle.cute_form() is not None
            raise ShmemError(
                f"swizzle {swizzle.label} moves {unit}-byte units "
                + (f"(base {low})" if cute else f"(it writes bit {low})")
                + f" but array {shorten(decl.name)!r} holds {esize}-byte {decl.dtype.name} "
                "elements, which it would split; "
                + (f"the base must be at least {need}" if cute else f"it may write bits {need}+")
                + f" ({esize}-byte units)",
                path=spec.path,
                pos=decl.pos,
            )
    return ArrayLayout(
        name=decl.name,
        decl=decl,
        shape=shape,
        pad=pad,
        strides=tuple(strides),
        offset=offset,
        nbytes=nbytes,
        swizzle=swizzle,
    )
