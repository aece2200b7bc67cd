"""The compiled spec's records: what :func:`shmem_cli.spec.compile.compile_spec` produces and
every later stage reads.

A :class:`SpecFile` holds its arrays (:class:`ArrayDecl`), accesses
(:class:`AccessDecl`, each with its :class:`Loop` nest, :class:`Expect` and
:class:`SourceLine`), the :class:`KernelDecl` it describes, and every expression as a
:class:`Located` (parsed once, with its place in the file). Also here: the built-in
thread names and the default C types of loop variables and params. Importers reach
these through :mod:`shmem_cli.spec.compile`, which re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from typing import Any

from ..hardware import dtypes
from ..hardware.arch import ArchProfile
from ..hardware.ops import MATRIX_OPS
from ..hardware.swizzle import Swizzle
from ..plumbing.errors import ShmemError, SourcePos, shorten
from ..plumbing.frozen import frozen
from .expr import CType, EvalFault, Expr

# the built-in names and their C types: CUDA's threadIdx and blockDim are unsigned int, and
# tid (the linear thread id), lane and warp (tid modulo and over the profile's warp size)
# are computed from them
THREAD_NAMES: dict[str, CType] = {
    name: CType.UINT
    for name in (
        *(f"{base}.{m}" for base in ("threadIdx", "blockDim") for m in "xyz"),
        "tid",
        "lane",
        "warp",
    )
}
#: names a param or loop variable may not take: the built-ins and their bases (``threadIdx``
#: alone would read as the param where ``threadIdx.x`` reads the thread's index)
RESERVED_NAMES = frozenset({*THREAD_NAMES, "threadIdx", "blockDim"})
LOOP_TYPE = CType.INT  # loop variables are int unless the spec says `type:`
DEFAULT_PARAM_TYPE = CType.INT  # params are int unless the spec says `type:`


@frozen
class Located:
    """An expression with the place it came from."""

    expr: Expr
    pos: SourcePos | None
    text: str


@frozen
class ArrayDecl:
    """A shared array as the spec declares it (sizes still expressions)."""

    name: str
    dtype: dtypes.DType
    shape: tuple[Located, ...]
    pad: Located
    offset: Located | None
    swizzle: Swizzle | None
    pos: SourcePos | None


@frozen
class Loop:
    """One loop variable: ``start, start+step, ...`` up to and including ``stop`` or a list."""

    var: str
    values: tuple[int, ...] | None
    start: int = 0
    stop: int = 0
    step: int = 1
    pos: SourcePos | None = None
    bounds: tuple[Located, Located, Located] | None = field(default=None, compare=False, repr=False)
    ctype: CType = LOOP_TYPE
    barrier: bool = False  # the kernel's loop holds a __syncthreads(): nothing is hoisted

    def fits(self, value: int) -> bool:
        """Whether the loop variable can take ``value`` (and an int64 can hold it)."""
        return self.ctype.fits(value) and value < 1 << 63

    def type_text(self) -> str:
        return f"{self.ctype.spelling}, {self.ctype.min}..{min(self.ctype.max, (1 << 63) - 1)}"

    def resolved(self, params: Mapping[str, int]) -> Loop:
        """This loop with its bounds re-evaluated for other param values."""
        if self.bounds is None:
            return self
        values = []
        for loc in self.bounds:
            try:
                value = loc.expr.constant(params)
            except EvalFault as fault:  # e.g. a division by a param that is 0
                raise ShmemError(
                    f"loop range of {shorten(self.var)!r}: {fault.message}",
                    pos=loc.pos.shifted(fault.node.col) if loc.pos else self.pos,
                ) from None
            if not self.fits(value):
                raise ShmemError(
                    f"loop range of {shorten(self.var)!r}: {shorten(loc.text)!r} is {value}, "
                    f"which does not fit in the loop variable's type ({self.type_text()})",
                    pos=loc.pos or self.pos,
                )
            values.append(value)
        lo, hi, step = values
        if step == 0:
            raise ShmemError(f"loop {shorten(self.var)!r} has step 0", pos=self.pos)
        return replace(self, start=lo, stop=hi, step=step)

    @property
    def count(self) -> int:
        if self.values is not None:
            return len(self.values)
        if self.step > 0:
            return max(0, (self.stop - self.start) // self.step + 1)
        return max(0, (self.start - self.stop) // (-self.step) + 1)

    def value_at(self, indices: Any) -> Any:
        """The loop value of the given iteration indices (ints or arrays)."""
        if self.values is not None:
            import numpy as np

            return np.asarray(self.values, dtype=np.int64)[indices]
        return self.start + self.step * indices

    def describe(self) -> str:
        if self.values is not None:
            return f"{self.var} in {list(self.values)}"
        suffix = f":{self.step}" if self.step != 1 else ""
        return f"{self.var} = {self.start}..{self.stop}{suffix}"


@frozen
class Expect:
    """What a lint run accepts for an access."""

    max_ways: int | None = None
    max_wavefronts_per_request: int | None = None
    conflict_free: bool | None = None
    pos: SourcePos | None = None

    def merged_over(self, base: Expect | None) -> Expect:
        if base is None:
            return self
        return Expect(
            max_ways=self.max_ways if self.max_ways is not None else base.max_ways,
            max_wavefronts_per_request=(
                self.max_wavefronts_per_request
                if self.max_wavefronts_per_request is not None
                else base.max_wavefronts_per_request
            ),
            conflict_free=self.conflict_free
            if self.conflict_free is not None
            else base.conflict_free,
            pos=self.pos or base.pos,
        )

    @property
    def empty(self) -> bool:
        return (
            self.max_ways is None
            and self.max_wavefronts_per_request is None
            and self.conflict_free is None
        )


@frozen
class SourceLine:
    """An access's place in the kernel source: a line of ``file`` (None: kernel.source)."""

    line: int
    file: str | None = None
    pos: SourcePos | None = None

    def describe(self) -> str:
        return f"{self.file}:{self.line}" if self.file else f"line {self.line}"


@frozen
class KernelDecl:
    """The compiled kernel a spec describes (``kernel:``); paths resolved from the spec's folder."""

    source: str  # as written
    path: str  # resolved
    name: str | None
    grid: tuple[int, int, int]
    args: tuple[tuple[str, str], ...]  # (name or position, value as for --arg)
    nvcc: tuple[str, ...]
    dynamic_smem: int
    pos: SourcePos | None = None
    nvcc_pos: tuple[SourcePos | None, ...] = ()  # where each nvcc argument is written
    consts: tuple[tuple[str, str], ...] = ()  # (name, value as for --const)
    memory: tuple[tuple[str, str], ...] = ()  # (address, value as for --memory)
    params: str | None = None  # "@FILE" (resolved), as --params
    cluster: tuple[int, int, int] | None = None  # as --cluster
    spec_path: str = ""  # the spec file (its folder starts relative -I paths)
    #: where each of args, const and memory is written, by "args KEY" ("args 0", "const tab")
    key_pos: tuple[tuple[str, SourcePos | None], ...] = ()


@frozen
class AccessDecl:
    """A warp access as the spec declares it: its array, op, index and loops."""

    name: str
    array: str
    op: str
    index: tuple[Located, ...]
    loops: tuple[Loop, ...]
    when: Located | None
    matrices: int
    trans: bool
    atomic: str
    expect: Expect | None
    pos: SourcePos | None
    line: SourceLine | None = None  # where the kernel's source has it (with a kernel:)

    @property
    def is_matrix(self) -> bool:
        """ldmatrix/stmatrix: lanes give the row addresses of 8x8 matrices."""
        return self.op in MATRIX_OPS

    def with_params(self, params: Mapping[str, int]) -> AccessDecl:
        """This access with its loop ranges evaluated for ``params`` (they may use params)."""
        if all(lp.bounds is None for lp in self.loops):
            return self
        return replace(self, loops=tuple(lp.resolved(params) for lp in self.loops))


@frozen
class SpecFile:
    """A compiled spec: the single source of truth for every later stage."""

    path: str
    name: str
    block: tuple[Located, ...]
    params: Mapping[str, int]
    arrays: Mapping[str, ArrayDecl]
    accesses: tuple[AccessDecl, ...]
    expect: Expect | None
    arch: ArchProfile
    pos: SourcePos | None = None
    lines: tuple[str, ...] = field(default=(), repr=False, compare=False)
    # where each param gets its value, for messages about a swept value
    param_pos: Mapping[str, SourcePos | None] = field(
        default_factory=dict, repr=False, compare=False
    )
    param_types: Mapping[str, CType] = field(default_factory=dict)
    kernel: KernelDecl | None = None
    #: params marked runtime: true (their value is not known to the compiler)
    runtime_params: frozenset[str] = frozenset()
