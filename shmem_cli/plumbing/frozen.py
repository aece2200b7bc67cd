"""``@frozen``: shmem's immutable data class, ``@dataclass(frozen=True)`` for the type
checker and cheaper to create at run time.

Type checkers see exactly ``@dataclass(frozen=True)`` (``dataclass_transform`` with
``frozen_default``): assigning a field of a frozen class is an error mypy --strict
reports. At run time the class is a plain dataclass with the same ``__eq__`` and the
same field hash (``unsafe_hash``), without the guard against assignment, and the same
``repr``, written once here: Python 3.11 writes and compiles six methods for a frozen
dataclass and three (``__init__``, ``__eq__``, ``__hash__``) for this one, and
shmem creates some forty-five such classes on the way to a first ``shmem analyze``
(about 11 ms of its start-up, docs/performance.md). Its ``__init__`` also sets the
fields directly rather than through ``object.__setattr__``.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")


@overload
def frozen(cls: type[T], /) -> type[T]: ...
@overload
def frozen(*, eq: bool = True, kw_only: bool = False) -> Callable[[type[T]], type[T]]: ...
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[T] | None = None, /, *, eq: bool = True, kw_only: bool = False) -> Any:
    """``@frozen``, ``@frozen(kw_only=True)``, ``@frozen(eq=False)``: as
    ``@dataclass(frozen=True, ...)`` to the type checker (module docstring)."""
    make = dataclasses.dataclass(eq=eq, unsafe_hash=eq, kw_only=kw_only, repr=False)

    def apply(c: type[T]) -> type[T]:
        own_repr = "__repr__" in c.__dict__
        made = make(c)
        if not own_repr:
            made.__repr__ = _repr  # type: ignore[method-assign]
        return made

    return apply if cls is None else apply(cls)


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    """The dataclass ``repr``, ``Name(a=1, b='x')`` (fields with ``repr=False`` left out),
    written once for every class instead of compiled for each."""
    shown = (f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
    return f"{type(self).__qualname__}({', '.join(shown)})"
