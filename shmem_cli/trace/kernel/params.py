"""A kernel's parameters as a launch names them: each one's position, offset and size (from
the cubin), its name (from the CUDA source) and type (from the demangled signature); which
parameter ``--arg KEY=`` means; the table ``--list-params`` prints."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...cuda.launch.values import LaunchError
from ...plumbing.errors import shorten
from ...plumbing.frozen import frozen
from .cubin import CubinInfo, Kernel

if TYPE_CHECKING:
    from ...cuda.sources import SourceTree

_POSITION = re.compile(r"[0-9]{1,9}\Z")


@frozen
class Param:
    """A kernel parameter with what the launch knows about it."""

    ordinal: int
    offset: int
    size: int
    name: str | None
    type: str | None  # from the demangled signature or the source, where known
    #: where the kernel's parameters have no names: why, in words (the source the line table
    #: or the TTGIR names is outside the tree, gone, or without the declaration)
    unnamed: str | None = None

    @property
    def is_pointer(self) -> bool:
        if self.type is not None:
            return self.type.rstrip().endswith("*")
        return self.size == 8  # unknown type: an 8-byte parameter is taken for a pointer

    @property
    def value_type(self) -> str | None:
        """The type without ``const`` (a by-value ``const float`` takes a float), if known."""
        if self.type is None:
            return None
        return " ".join(w for w in self.type.split() if w != "const")

    @property
    def label(self) -> str:
        return f"{self.ordinal} ({self.name})" if self.name else str(self.ordinal)


def signature_types(signature: str) -> list[str] | None:
    """The parameter types of a demangled signature, ``None`` when it has no list."""
    from .demangle import short_name
    from .signature import split_top_level

    text = signature.strip()
    name = short_name(text)
    at = text.find(name + "(") if name else -1
    if at < 0 or not text.endswith(")"):
        return None
    inner = text[at + len(name) + 1 : -1]
    return [t.strip() for t in split_top_level(inner) if t.strip()]


def kernel_params(
    kernel: Kernel,
    names: Sequence[str | None] | None,
    declared: Sequence[str | None] | None = None,
    unnamed: str | None = None,
) -> list[Param]:
    """The kernel's parameters with their names (from the source) and types: the demangled
    signature's, else (an ``extern "C"`` kernel's name has none) ``declared``, the source's;
    ``unnamed``: why there are no names (where ``names`` is None)."""
    types: Sequence[str | None] | None = signature_types(kernel.signature)
    if types is None and not kernel.signature.rstrip().endswith(")"):
        types = declared
    if types is not None and len(types) != len(kernel.params):
        types = None
    out = []
    for i, p in enumerate(kernel.params):
        out.append(
            Param(
                ordinal=p.ordinal,
                offset=p.offset,
                size=p.size,
                name=names[i] if names is not None and i < len(names) else None,
                type=types[i] if types is not None else None,
                unnamed=unnamed if names is None else None,
            )
        )
    return out


#: a line table's files whose existence outside the source tree may be said (a kernel's)
KERNEL_SOURCES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".inl", ".cpp", ".cc", ".cxx")


def named_params(
    kernel: Kernel, texts: Sequence[str], why: Callable[[], str | None]
) -> tuple[Param, ...]:
    """The kernel's parameters, named from ``texts`` (:func:`.tracer.source_texts`: the source files
    given or named by its line table in the source tree, a library's declaration); ``why``
    says why they have none (:func:`unnamed_why`), asked only then."""
    from .signature import declared_type, param_declarations

    found = param_declarations(list(texts), kernel.name, len(kernel.params))
    if found is None:
        return tuple(kernel_params(kernel, None, None, why()))
    names = [name for _, name in found]
    types = [declared_type(text, name) for text, name in found]
    return tuple(kernel_params(kernel, names, types))


def unnamed_why(
    kernel: Kernel, cubin: CubinInfo, disassembly: str, path: Path, tree: SourceTree
) -> str | None:
    """Why the sources the line table names gave the kernel no parameter names, in the words
    a Triton entry's get (:func:`.named_sources.unread_words`): its ``.cu`` outside the
    source tree (and the ``--source-root`` that reads it), not there, or found without the
    kernel's declaration; None where the table names no file (built without -lineinfo:
    :func:`.kernel.params.resolve_key` says so)."""
    from ...cuda.named_sources import GONE, NO_DECLARATION, OUTSIDE, unread_source, unread_words
    from ...cuda.sass import line_table_files
    from .signature import base_name

    files = list(dict.fromkeys(line_table_files(disassembly)))[:64]  # bounded work
    own = [f for f in files if f.lower().endswith((".cu", ".cuh"))] or files
    if not own:
        return None
    bases = [path.resolve().parent, Path(cubin.path).resolve().parent, Path.cwd()]
    seen = [unread_source(f, bases, tree.inside, KERNEL_SOURCES) for f in own]
    where, why = next(
        (s for rank in (OUTSIDE, NO_DECLARATION, GONE) for s in seen if s[1] == rank), seen[0]
    )
    suffix = path.suffix.lower()
    of = "kernel file" if suffix in (".cu", ".cuh") else "cubin" if suffix == ".cubin" else "binary"
    said = (
        "the kernel's parameters have no names, which come from its __global__ declaration "
        "in the source the line table names"
    )
    declaration = f"__global__ declaration of {shorten(base_name(kernel.name) or kernel.name)}"
    guess = (  # a .cu just built is as compiled; a cubin's source may have changed since
        "written through a macro, which shmem does not expand?"
        if of == "kernel file"
        else "edited since the compile, or written through a macro?"
    )
    words = unread_words(
        where, why, names_it="the line table", declaration=declaration, of=of, guess=guess
    )
    return said + words


def resolve_key(key: str, params: Sequence[Param]) -> Param:
    """The parameter ``--arg KEY=`` names: a 0-based position or a source name."""
    k = key.strip()
    if k.isascii() and k.isdigit():
        pos = int(k) if _POSITION.match(k) else len(params)
        if pos >= len(params):
            raise LaunchError(
                f"--arg {shorten(k)}: the kernel has {len(params)} parameter(s), positions 0-"
                f"{len(params) - 1}"
                if params
                else f"--arg {shorten(k)}: the kernel has no parameters"
            )
        return params[pos]
    for p in params:
        if p.name == k:
            return p
    known = shorten(", ".join(p.name for p in params if p.name), 200)
    why = next((p.unnamed for p in params if p.unnamed), None)
    if why and not known:  # the source that names them, out of reach: why, and what to do
        raise LaunchError(f"--arg {shorten(k)}: no parameter of that name: {why}")
    hint = (
        f" (names: {known})"
        if known
        else " (no parameter names were found in the source: a .cu file's, or the sources a "
        "cubin's line table names, which needs nvcc -lineinfo)"
    )
    raise LaunchError(
        f"--arg {shorten(k)}: no parameter of that name{hint}; use its position 0-based"
    )


def unnamed_note(params: Sequence[Param]) -> str | None:
    """The note under ``--list-params``' table and a trace's arguments where the parameters
    have no names and it is known why (:attr:`Param.unnamed`), said once."""
    why = next((p.unnamed for p in params if p.unnamed), None)
    return None if why is None else why.replace("; --list-params lists them)", ")")


def param_table(params: Sequence[Param]) -> list[tuple[str, str, str, str, str]]:
    """Rows for ``--list-params``: position, name, type, offset, size."""
    return [
        (str(p.ordinal), p.name or "?", p.type or "?", f"0x{p.offset:x}", str(p.size))
        for p in params
    ]
