"""``@frozen``: shmem's immutable data class, ``@dataclass(frozen=True)`` for the type
checker and cheaper to create at run time.

Type checkers see exactly ``@dataclass(frozen=True)`` (``dataclass_transform`` with
``frozen_default``): assigning a field of a frozen class is an error mypy --strict
reports. At run time the class is a plain dataclass without the guard against
assignment, whose ``__eq__``, ``__hash__`` and ``repr`` are the frozen dataclass's,
written once here for every class: Python 3.11 writes and compiles six methods for each
frozen dataclass, one (``__init__``) for this, and shmem creates some forty-five such
classes on the way to a first ``shmem analyze`` (36 ms of its start-up down to about
12, docs/performance.md). Its ``__init__`` also sets the fields directly rather than
through ``object.__setattr__``. Comparing and hashing cost a call more (no record is
compared or hashed on a hot path).
"""

from __future__ import annotations

import dataclasses
import operator
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
    make = dataclasses.dataclass(eq=False, repr=False, kw_only=kw_only)

    def apply(c: type[T]) -> type[T]:
        # what the class writes itself is kept, as dataclass keeps it; a __hash__ of None
        # beside an __eq__ of its own is Python's doing, not the class's (dataclass's rule)
        own = set(c.__dict__)
        if c.__dict__.get("__hash__", 0) is None and "__eq__" in c.__dict__:
            own.discard("__hash__")
        made = make(c)
        methods: dict[str, Any] = {"__repr__": _repr}
        if eq:
            fields = dataclasses.fields(made)  # type: ignore[arg-type]
            hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
            methods.update(__eq__=_eq, __hash__=_hash)
            compared = [f.name for f in fields if f.compare]
            methods.update(_frozen_compare=staticmethod(_getter(compared)))
            methods.update(_frozen_hash=staticmethod(_getter(hashed)))
        for name, method in methods.items():
            if name not in own:
                setattr(made, name, method)
        return made

    return apply if cls is None else apply(cls)


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of these attributes of an object (attrgetter gives a lone value for one)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    return lambda obj: tuple(getattr(obj, name) for name in names)


def _eq(self: Any, other: Any) -> Any:
    """The dataclass ``==``: the compared fields of two objects of one class, as tuples."""
    if other.__class__ is self.__class__:
        return self._frozen_compare(self) == other._frozen_compare(other)
    return NotImplemented


def _hash(self: Any) -> int:
    """The dataclass hash (``unsafe_hash``): of the tuple of the hashed fields."""
    return hash(self._frozen_hash(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    """The dataclass ``repr``, ``Name(a=1, b='x')`` (fields with ``repr=False`` left out),
    written once for every class instead of compiled for each."""
    shown = (f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
    return f"{type(self).__qualname__}({', '.join(shown)})"
