"""``@frozen``: shmem's immutable data class, ``@dataclass(frozen=True)`` for the type
checker and cheaper to create at run time.

Type checkers see exactly ``@dataclass(frozen=True)`` (``dataclass_transform`` with
``frozen_default``): assigning a field of a frozen class is an error mypy --strict
reports. At run time the class is a plain dataclass with the same ``__eq__`` and the
same field hash (``unsafe_hash``), without the guard against assignment: Python 3.11
writes and compiles six methods for a frozen dataclass and three for this one, and
shmem creates some forty-five such classes on the way to a first ``shmem analyze``
(about 11 ms of its start-up, docs/performance.md). Its ``__init__`` also sets the
fields directly rather than through ``object.__setattr__``.
"""

from __future__ import annotations

import dataclasses
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
    make = dataclasses.dataclass(eq=eq, unsafe_hash=eq, kw_only=kw_only)
    return make if cls is None else make(cls)
