"""A kernel's parameters as a launch names them: each one's position, offset and size (from
the cubin), its name (from the CUDA source) and type (from the demangled signature); which
parameter ``--arg KEY=`` means; the table ``--list-params`` prints."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...cuda.launch.values import LaunchError
from ...plumbing.errors import shorten
from ...plumbing.frozen import frozen
from .cubin import Kernel

_POSITION = re.compile(r"[0-9]{1,9}\Z")


@frozen
class Param:
    """A kernel parameter with what the launch knows about it."""

    ordinal: int
    offset: int
    size: int
    name: str | None
    type: str | None  # from the demangled signature or the source, where known

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
) -> list[Param]:
    """The kernel's parameters with their names (from the source) and types: the demangled
    signature's, else (an ``extern "C"`` kernel's name has none) ``declared``, the source's."""
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
            )
        )
    return out


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
    hint = (
        f" (names: {known})"
        if known
        else " (no parameter names were found in the source: a .cu file's, or the sources a "
        "cubin's line table names, which needs nvcc -lineinfo)"
    )
    raise LaunchError(
        f"--arg {shorten(k)}: no parameter of that name{hint}; use its position 0-based"
    )


def param_table(params: Sequence[Param]) -> list[tuple[str, str, str, str, str]]:
    """Rows for ``--list-params``: position, name, type, offset, size."""
    return [
        (str(p.ordinal), p.name or "?", p.type or "?", f"0x{p.offset:x}", str(p.size))
        for p in params
    ]
