"""``shmem_cli.trace_triton``: compile a ``@triton.jit`` function ahead of time and trace it.

Needs Triton (``pip install 'shmem[triton]'``), no GPU: the kernel is compiled for a
``GPUTarget`` (default sm_90, 32-thread warps) with :func:`triton.compile`, its cubin,
metadata and TTGIR are written as a cache entry in a temporary folder, and that entry is
traced as ``shmem trace ENTRY`` would (:func:`shmem_cli.trace.api.trace`).

As Triton's launcher does when it is called, pointer arguments and integer arguments that
are multiples of 16 are compiled as divisible by 16 (``tt.divisibility``), and integer
arguments of 1 into the kernel (a constexpr of 1; Triton 3.2: an ``equal_to_1`` hint); pass
``specialize=False`` to compile without.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import tempfile
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...hardware.arch import DEFAULT_ARCH, PROFILES, rules_for
from ...plumbing import fsutil
from ...plumbing.bounded_read import read_bounded
from ...plumbing.errors import ShmemError, shorten
from ..api import ArgValue, Dims, trace
from ..result import TraceResult
from .ttgir import MAX_PYTHON_BYTES, ttgir_params, unnamed

INSTALL = "pip install 'shmem[triton]' (or pip install triton)"


def _triton() -> Any:
    try:
        import triton
    except ImportError:
        raise ShmemError(
            f"trace_triton needs Triton, which is not installed: {INSTALL}", code="tool-missing"
        ) from None
    return triton


def divisibility(
    signature: Mapping[str, str],
    args: Mapping[str | int, ArgValue],
    order: Sequence[str] | None = None,
    unaligned: Collection[str] = (),
) -> dict[tuple[int], list[list[Any]]]:
    """Triton's specialization of the arguments it is called with: pointers and integers
    that are multiples of 16 are known to be divisible by 16. Keys are positions in the
    ``def``'s parameters ``order`` (its constexprs among them; default: the signature's);
    none for a parameter ``unaligned`` names (``do_not_specialize``, ``..._on_alignment``)."""
    names = list(order or signature)
    out: dict[tuple[int], list[list[Any]]] = {}
    for i, (name, kind) in enumerate(signature.items()):
        value = args.get(name, args.get(i))
        multiple = isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0
        if (kind.startswith("*") or multiple) and name in names and name not in unaligned:
            out[(names.index(name),)] = [["tt.divisibility", 16]]
    return out


def parameter_order(
    fn: Any, signature: Mapping[str, str], constexprs: Mapping[str, Any]
) -> list[str]:
    """The ``def``'s parameters in order (a JIT function's ``arg_names``): Triton's attributes
    and its signature go by that order, wherever the constexprs stand in it."""
    names = getattr(fn, "arg_names", None)
    if isinstance(names, list | tuple) and all(isinstance(n, str) for n in names):
        return list(names)
    return [*signature, *(n for n in constexprs if n not in signature)]


def check_parameters(
    fn: Any, signature: Mapping[str, str], constexprs: Mapping[str, Any], args: Mapping[Any, Any]
) -> None:
    """Every parameter of a JIT function's ``def`` without a default given (a type in
    ``signature``, a ``tl.constexpr``'s value in ``constexprs``), nothing else, and ``args``
    only for the signature's: Triton itself fails on the first use of one left out, at a line
    of the kernel's body, and a misspelt argument was said as the compiled kernel's."""
    params = getattr(fn, "params", None)
    if isinstance(params, list | tuple) and all(hasattr(p, "name") for p in params):
        _check_def(fn, params, signature, constexprs)  # else Triton's own error says what it can
    if unknown := [k for k in args if isinstance(k, str) and k not in signature]:
        raise _refused(f"args names {_said(unknown)}, not in signature ({_said(signature)})")


def _check_def(
    fn: Any, params: Sequence[Any], signature: Mapping[str, str], constexprs: Mapping[str, Any]
) -> None:
    name, known = getattr(fn, "__name__", "the kernel"), [str(p.name) for p in params]
    for where, given in (("signature", signature), ("constexprs", constexprs)):
        if unknown := [k for k in given if k not in known]:
            raise _refused(f"{where} names {_said(unknown)}, not parameters of {name}'s def")
    left = [p for p in params if p.name not in {*signature, *constexprs}]
    try:  # the def's own defaults (Triton's launcher fills them in)
        defaults = inspect.signature(fn.fn).parameters
        left = [p for p in left if defaults[p.name].default is inspect.Parameter.empty]
    except (AttributeError, KeyError, TypeError, ValueError):
        pass
    values = [str(p.name) for p in left if getattr(p, "is_constexpr", False)]
    types = [str(p.name) for p in left if str(p.name) not in values]
    if types:
        raise _refused(f"{name} takes {_said(types)}: give each its Triton type in signature "
                       "('*fp16', 'i32', 'fp32')")  # fmt: skip
    if values:
        raise _refused(f"{name} takes the tl.constexpr {_said(values)}: give each its value "
                       "in constexprs")  # fmt: skip


def _refused(message: str) -> ShmemError:
    return ShmemError(f"trace_triton(): {message}", code="invalid-argument")


def _said(names: Iterable[str]) -> str:
    return ", ".join(shorten(str(n), 80) for n in names)


def not_specialized(fn: Any) -> tuple[set[str], set[str]]:
    """The parameters a JIT function's ``do_not_specialize`` names (Triton compiles none of
    them in as 1 nor hints it divisible), and those it or ``do_not_specialize_on_alignment``
    names (not hinted divisible): its ``params``, as Triton 3.2 to 3.6 keep them."""
    whole: set[str] = set()
    aligned: set[str] = set()
    params = getattr(fn, "params", None)
    for p in params if isinstance(params, list | tuple) else ():
        name = getattr(p, "name", None)
        if isinstance(name, str) and getattr(p, "do_not_specialize", False) is True:
            whole.add(name)
        if isinstance(name, str) and getattr(p, "do_not_specialize_on_alignment", False) is True:
            aligned.add(name)
    return whole, whole | aligned


def by_name(
    signature: Mapping[str, str], args: Mapping[str | int, ArgValue]
) -> dict[str | int, ArgValue]:
    """``args`` with each position the signature names given by that name: a parameter
    compiled in as 1 leaves the kernel, and the positions after it would name the next."""
    names = list(signature)
    return {
        names[k] if isinstance(k, int) and 0 <= k < len(names) else k: v for k, v in args.items()
    }


def unit_arguments(signature: Mapping[str, str], args: Mapping[str | int, ArgValue]) -> set[str]:
    """The integer arguments that are 1: Triton's launcher compiles each into the kernel (a
    unit stride), and the kernel has no parameter for it."""
    out = set()
    for i, (name, kind) in enumerate(signature.items()):
        value = args.get(name, args.get(i))
        integer = kind[:1] in "iu" and kind[1:].isdigit() and kind != "i1"
        if integer and type(value) is int and value == 1:
            out.add(name)
    return out


def _metadata_json(compiled: Any) -> str:
    meta = dict(compiled.metadata._asdict())
    return json.dumps(meta, default=_plain)


def _plain(value: Any) -> Any:
    """A metadata value JSON does not know (the GPUTarget) as Triton writes it: its fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value._asdict() if hasattr(value, "_asdict") else str(value)


def compile_entry(
    fn: Any,
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any],
    folder: Path,
    *,
    num_warps: int,
    num_stages: int,
    arch: int,
    attrs: Mapping[tuple[int], Any] | None,
    ones: set[str],
) -> bool:
    """Compile ``fn`` and write its cache entry (cubin, json, ttgir, ptx) into ``folder``, the
    integer arguments ``ones`` compiled in as 1 (as Triton's launcher does); with a copy of
    the kernel's own file where the TTGIR does not name the parameters (:func:`keep_source`).
    Returns :func:`ttgir_named`'s answer: True where the TTGIR names them (Triton 3.5 on)."""
    triton = _triton()
    from triton.backends import compiler
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler import compiler as front

    order = parameter_order(fn, signature, constexprs)
    consts = {**constexprs, **{name: 1 for name in ones}}
    try:
        if hasattr(compiler, "AttrsDescriptor"):  # Triton 3.2: hints by position, 1 a constant
            sig = {n: signature[n] for n in order if n in signature and n not in constexprs}
            hints = {i: 16 for (i,) in attrs or {}} | {order.index(n): 1 for n in ones}
            descriptor = compiler.AttrsDescriptor.from_hints(hints)
            source = ASTSource(fn, sig, consts, descriptor)
        elif hasattr(front, "AttrsDescriptor"):  # 3.1: the positions, as its JIT gives them
            sig = {n: signature[n] for n in order if n in signature and n not in constexprs}
            sixteen, one = tuple(i for (i,) in attrs or {}), tuple(order.index(n) for n in ones)
            source = ASTSource(fn, sig, consts, front.AttrsDescriptor(sixteen, one))
        else:  # 3.3 on: every parameter in the def's order, a compiled-in one a constexpr
            sig = {
                n: "constexpr" if n in consts else signature[n]
                for n in order
                if n in signature or n in consts
            }
            source = ASTSource(fn, sig, consts, dict(attrs or {}))
        compiled = triton.compile(
            source,
            target=GPUTarget("cuda", arch, rules_for(f"sm_{arch}").warp_size),
            options={"num_warps": num_warps, "num_stages": num_stages},
        )
    except ShmemError:
        raise
    except Exception as exc:  # Triton's compile errors carry the kernel's own source line
        raise ShmemError(
            f"Triton could not compile {getattr(fn, '__name__', fn)}: {exc}", code="tool-failed"
        ) from None
    name = compiled.metadata.name
    folder.mkdir(parents=True, exist_ok=True)
    fsutil.write_bytes(folder / f"{name}.cubin", compiled.asm["cubin"])
    fsutil.write_atomic(folder / f"{name}.json", _metadata_json(compiled))
    for kind in ("ttgir", "ptx"):
        fsutil.write_atomic(folder / f"{name}.{kind}", str(compiled.asm[kind]))
    named = ttgir_named(str(compiled.asm["ttgir"]), name, folder)
    if not named:
        keep_source(fn, folder)
    return named


def ttgir_named(ttgir: str, name: str, folder: Path) -> bool:
    """Whether the TTGIR names the kernel's parameters (Triton 3.5 on); an older one writes
    ``%arg0``, ``%arg1``, ... A TTGIR that cannot be read counts as named: nothing is done
    for it here, and the error is said when the entry is traced."""
    try:
        params = ttgir_params(ttgir, name, folder)
    except ShmemError:
        return True
    return not unnamed(p.name for p in params)


def keep_source(fn: Any, folder: Path) -> None:
    """A copy of the kernel's own file, written into the entry ``folder``, for a TTGIR that
    does not name the parameters: their names come from the Python ``def``, read only inside
    the entry's source tree (``shmem trace`` looks for it there by name). Nothing is written
    where the file cannot be read: the names stay the TTGIR's, and ``--arg`` by position
    still works."""
    try:
        source = inspect.getsourcefile(getattr(fn, "fn", fn))
        if source is None or not os.path.isfile(Path(source)):
            return
        data = read_bounded(Path(source), MAX_PYTHON_BYTES, what="Python source")
    except (TypeError, OSError, ShmemError):
        return
    fsutil.write_bytes(folder / Path(source).name, data)


def trace_triton(
    fn: Any,
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any] | None = None,
    *,
    num_warps: int = 4,
    num_stages: int = 3,
    grid: Dims = (1, 1, 1),
    args: Mapping[str | int, ArgValue] | None = None,
    arch: int = PROFILES[DEFAULT_ARCH].capability,
    specialize: bool = True,
    keep: str | Path | None = None,
) -> TraceResult:
    """Compile the ``@triton.jit`` function ``fn`` for sm_``arch`` and trace it.

    ``signature`` maps each parameter to its Triton type (``"*fp32"``, ``"i32"``, ``"fp32"``),
    as :class:`triton.compiler.ASTSource` takes it; ``constexprs`` the ``tl.constexpr``
    parameters to their values. ``grid`` is the program grid and ``args`` the scalar
    arguments by name (pointers get zero-filled buffers unless given as bytes or arrays).
    ``keep``: a folder to keep the cache entry in (default: a temporary one). A wrong
    argument raises :class:`ShmemError` (code ``invalid-argument``) naming it.
    """
    from ...plumbing import arguments

    call = "trace_triton"
    if not callable(fn):
        raise arguments.fail(call, "fn", "a @triton.jit function", fn)
    signature = arguments.mapping(call, "signature", signature)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in signature.items()):
        raise arguments.fail(call, "signature", "a mapping of names to Triton types", signature)
    constexprs = arguments.mapping(call, "constexprs", constexprs)
    num_warps = arguments.integer(call, "num_warps", num_warps, low=1, high=32)
    num_stages = arguments.integer(call, "num_stages", num_stages, low=0, high=64)
    arguments.dims(call, "grid", grid)
    args = arguments.mapping(call, "args", args)
    arch = arguments.integer(call, "arch", arch, low=10, high=999)
    if not isinstance(specialize, bool):
        raise arguments.fail(call, "specialize", "True or False", specialize)
    if keep is not None:
        keep = arguments.path(call, "keep", keep)
    check_parameters(fn, signature, constexprs or {}, args or {})
    given = by_name(signature, args or {})
    order = parameter_order(fn, signature, constexprs or {})
    fixed, unaligned = not_specialized(fn)
    attrs = divisibility(signature, given, order, unaligned) if specialize else None
    ones = unit_arguments(signature, given) - fixed if specialize else set()
    consts = dict(constexprs or {})

    def build(folder: Path) -> TraceResult:
        named = compile_entry(
            fn, signature, consts, folder,
            num_warps=num_warps, num_stages=num_stages, arch=arch, attrs=attrs, ones=ones,
        )  # fmt: skip
        # a named TTGIR lacks the compiled-in parameters; an older one is named by them
        kept = {k: v for k, v in given.items() if not (named and k in ones)}
        return trace(folder, grid=grid, args=kept)

    if keep is not None:
        return build(Path(keep))
    with tempfile.TemporaryDirectory(prefix="shmem-triton-") as tmp:
        return build(Path(tmp))
