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
through ``object.__setattr__``, and is written when the class makes its first object
(the dataclass's ``__init__`` for the same fields, see :func:`_dataclass_init`): most
classes of a module never make one in a given run. Until then ``inspect.signature`` of the
class still gives the dataclass's parameters (writing the ``__init__`` to read them). A
class without a docstring gets its ``__init__`` at once (dataclass writes such a class's
docstring from the ``__init__``'s signature). Comparing and hashing cost a call more (no
record is compared or hashed on a hot path).
"""

from __future__ import annotations

import dataclasses
import inspect  # dataclasses imports it: no cost
import operator
import reprlib
import types
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

    def apply(c: type[T]) -> type[T]:
        # what the class writes itself is kept, as dataclass keeps it; a __hash__ of None
        # beside an __eq__ of its own is Python's doing, not the class's (dataclass's rule)
        own = set(c.__dict__)
        if c.__dict__.get("__hash__", 0) is None and "__eq__" in c.__dict__:
            own.discard("__hash__")
        later = "__init__" not in own and bool(c.__doc__)
        made = dataclasses.dataclass(init=not later, eq=False, repr=False, kw_only=kw_only)(c)
        methods: dict[str, Any] = {"__repr__": _repr}
        if later:
            _check_defaults(dataclasses.fields(made))  # type: ignore[arg-type]
            methods["__init__"] = _FirstInit(made)
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


def _check_defaults(fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """dataclass's error, at the class's creation: a positional field without a default
    after one with a default."""
    seen_default = False
    for f in fields:
        if not f.init or f.kw_only:
            continue
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


class _FirstInit:
    """The ``__init__`` a class has until its first object: writes the real one
    (:func:`_dataclass_init`), puts it on the class in its place and calls it. Bound like a
    method; its ``__signature__`` is the real one's (``inspect.signature``, ``help``)."""

    def __init__(self, cls: type[Any]) -> None:
        self._cls = cls
        self.__qualname__ = f"{cls.__qualname__}.__init__"

    def _written(self) -> Callable[..., None]:
        """The class's real ``__init__``, written and put on the class the first time."""
        now: Callable[..., None] = self._cls.__dict__["__init__"]
        if now is not self:  # written already (a stale binding of the stand-in)
            return now
        init = _dataclass_init(self._cls)
        setattr(self._cls, "__init__", init)  # noqa: B010 (mypy refuses to assign a method)
        return init

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)

    def __call__(self, obj: Any, /, *args: Any, **kwargs: Any) -> None:
        self._written()(obj, *args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self._written())


class _Factory:
    """The default of a parameter whose field has a ``default_factory``."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _dataclass_init(cls: type[Any]) -> Callable[..., None]:
    """The ``__init__`` that ``@dataclass`` writes for the fields of ``cls`` (neither
    frozen nor slotted, no ``InitVar``): the fields with ``init`` as parameters in their
    order, the keyword-only ones after a ``*``; every field set on ``self``, a factory
    called when its parameter was not given, a field without ``init`` set only from its
    factory; then ``__post_init__()`` if the class has one."""
    fields = dataclasses.fields(cls)
    names = {f.name for f in fields}
    me = "__dataclass_self__" if "self" in names else "self"
    space: dict[str, Any] = {"__dataclass_factory__": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for f in fields:
        value = f"__dataclass_dflt_{f.name}__"
        if f.default_factory is not dataclasses.MISSING:
            space[value] = f.default_factory
            if f.init:
                param = f"{f.name}=__dataclass_factory__"
                body.append(
                    f"{me}.{f.name} = {value}() if {f.name} is __dataclass_factory__ else {f.name}"
                )
            else:
                body.append(f"{me}.{f.name} = {value}()")
        elif f.init:
            param = f.name
            if f.default is not dataclasses.MISSING:
                space[value] = f.default
                param = f"{f.name}={value}"
            body.append(f"{me}.{f.name} = {f.name}")
        if f.init:
            (keyword if f.kw_only else positional).append(param)
    if hasattr(cls, "__post_init__"):
        body.append(f"{me}.__post_init__()")
    params = ", ".join([me, *positional, *(["*", *keyword] if keyword else [])])
    lines = "\n".join(f"  {line}" for line in body or ["pass"])
    exec(f"def __init__({params}):\n{lines}", space)  # shmem's own text, never a user's
    init: Callable[..., None] = space["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
    return init
