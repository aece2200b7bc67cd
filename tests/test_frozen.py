"""``@frozen`` (shmem_cli/plumbing/frozen.py) against the standard library's
``@dataclass(frozen=True)``: the same fields, equality, hash, ``replace`` and keyword-only
fields; and every immutable class of the package uses it (its start-up cost is the reason)."""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest

from shmem_cli.plumbing.frozen import frozen

from .conftest import ROOT


@frozen
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    note: str = dataclasses.field(default="", repr=False)


@dataclasses.dataclass(frozen=True)
class StdPoint:
    x: int
    y: int = 0
    tags: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    note: str = dataclasses.field(default="", repr=False)


@frozen(kw_only=True)
class Labeled(Point):
    label: str


@frozen(eq=False)
class Handle:
    name: str

    def __repr__(self) -> str:
        return f"<{self.name}>"


def test_equality_hash_and_repr_are_the_standard_frozen_dataclass_ones() -> None:
    for x, y in ((0, 0), (1, 2), (-3, 7), (2**40, 5)):
        a, b, std = Point(x, y, ("a",)), Point(x, y, ("b",)), StdPoint(x, y, ("a",))
        assert a == b  # tags do not compare, as in the standard class
        assert hash(a) == hash(b) == hash(std)
        assert repr(a).removeprefix("Point") == repr(std).removeprefix("StdPoint")
    assert repr(Point(1, 2, ("a",), "n")) == "Point(x=1, y=2, tags=('a',))"
    assert repr(Labeled(1, label="a")) == "Labeled(x=1, y=0, tags=(), label='a')"
    assert Point(1, 2) != Point(2, 1)
    assert len({Point(1), Point(1), Point(2)}) == 2


def test_fields_replace_and_keyword_only_fields() -> None:
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "y", "tags", "note"]
    assert dataclasses.replace(Point(1, 2), y=5) == Point(1, 5)
    item = Labeled(1, 2, label="a")
    assert (item.x, item.y, item.label) == (1, 2, "a")
    assert item != Labeled(1, 2, label="b")


@frozen
class Nothing:
    pass


@dataclasses.dataclass(frozen=True)
class StdNothing:
    pass


@frozen
class One:
    value: object


@dataclasses.dataclass(frozen=True)
class StdOne:
    value: object


@frozen
class Weighed:
    key: str
    weight: float = dataclasses.field(default=0.0, hash=False)  # compared, not hashed
    extra: int = dataclasses.field(default=0, compare=False, hash=True)  # hashed only


@dataclasses.dataclass(frozen=True)
class StdWeighed:
    key: str
    weight: float = dataclasses.field(default=0.0, hash=False)
    extra: int = dataclasses.field(default=0, compare=False, hash=True)


@frozen
class ByName:
    name: str
    size: int

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByName) and other.name == self.name


def test_no_field_one_field_and_the_hash_and_compare_flags_as_the_standard_ones() -> None:
    assert Nothing() == Nothing() and hash(Nothing()) == hash(StdNothing())
    for value in (0, "a", (1, 2), None):
        assert One(value) == One(value) and hash(One(value)) == hash(StdOne(value))
    assert One((1, 2)) != One([1, 2])
    for key, weight, extra in (("a", 0.5, 1), ("b", 2.0, 7)):
        ours, std = Weighed(key, weight, extra), StdWeighed(key, weight, extra)
        assert hash(ours) == hash(std)
        assert ours == Weighed(key, weight, extra + 1) and ours != Weighed(key, weight + 1)
    # another class, even a subclass or the standard twin, is never equal
    assert Point(1, 2) != StdPoint(1, 2) and Point(1) != Labeled(1, label="a")
    assert Point(1).__eq__(Labeled(1, label="a")) is NotImplemented
    # a class's own __eq__ is kept, and hashing follows the fields, as dataclass does
    assert ByName("a", 1) == ByName("a", 2) and hash(ByName("a", 1)) == hash(("a", 1))


@frozen
class Unhashable:
    name: str
    __hash__ = None  # type: ignore[assignment]


@dataclasses.dataclass(frozen=True)
class StdUnhashable:
    name: str
    __hash__ = None  # type: ignore[assignment]


def test_a_class_that_sets_hash_to_none_itself_stays_unhashable_as_the_standard_one() -> None:
    for cls in (Unhashable, StdUnhashable):
        assert cls.__hash__ is None and cls("a") == cls("a")


def test_eq_false_compares_by_identity() -> None:
    one = Handle("a")
    assert one == one and one != Handle("a")
    assert repr(one) == "<a>"  # a class's own repr is kept
    assert len({one, Handle("a")}) == 2


def test_every_immutable_class_of_the_package_is_frozen_not_a_frozen_dataclass() -> None:
    # a @dataclass(frozen=True) costs Python 3.11 three more generated methods to create
    # than @frozen: start-up (docs/performance.md)
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "shmem_cli").rglob("*.py"))
        if re.search(r"^\s*@(dataclasses\.)?dataclass\(.*frozen=True", path.read_text(), re.M)
    ]
    assert offenders == []


def _made_later(n: int) -> int:
    return n * 2


@frozen
class Later:
    """A class whose __init__ is written at its first object (it has a docstring)."""

    a: int
    b: int = 5
    items: list[int] = dataclasses.field(default_factory=list)
    made: list[str] = dataclasses.field(default_factory=lambda: ["x"], init=False)
    fixed: int = dataclasses.field(default=9, init=False)
    name: str = dataclasses.field(default="n", kw_only=True)
    need: int = dataclasses.field(kw_only=True, default_factory=lambda: _made_later(4))

    def __post_init__(self) -> None:
        self.made.append(str(self.a))


@dataclasses.dataclass
class StdLater:
    """A class whose __init__ is written at its first object (it has a docstring)."""

    a: int
    b: int = 5
    items: list[int] = dataclasses.field(default_factory=list)
    made: list[str] = dataclasses.field(default_factory=lambda: ["x"], init=False)
    fixed: int = dataclasses.field(default=9, init=False)
    name: str = dataclasses.field(default="n", kw_only=True)
    need: int = dataclasses.field(kw_only=True, default_factory=lambda: _made_later(4))

    def __post_init__(self) -> None:
        self.made.append(str(self.a))


@frozen
class SelfField:
    """A field named self: the generated __init__ names its own first parameter otherwise."""

    self: int
    other: str = "o"


@dataclasses.dataclass
class StdSelfField:
    """A field named self: the generated __init__ names its own first parameter otherwise."""

    self: int
    other: str = "o"


def _signature(cls: type) -> str:
    return str(inspect.signature(cls.__init__))


def test_init_written_at_the_first_object_is_the_dataclass_one() -> None:
    # before its first object the class has a stand-in __init__; after, dataclass's own
    stand_ins = [Later.__dict__["__init__"], SelfField.__dict__["__init__"]]
    calls: list[tuple[tuple[object, ...], dict[str, object]]] = [
        ((1,), {}),
        ((1, 2, [3]), {"name": "m", "need": 7}),
        ((), {"a": 0, "items": [], "b": -1}),
    ]
    for args, kwargs in calls:
        ours, std = Later(*args, **kwargs), StdLater(*args, **kwargs)  # type: ignore[arg-type]
        assert vars(ours) == vars(std)
    assert _signature(Later) == _signature(StdLater)
    assert Later.__init__.__qualname__ == "Later.__init__"
    assert Later.__init__.__module__ == __name__
    assert SelfField(3).self == 3 and vars(SelfField(1, "p")) == vars(StdSelfField(1, "p"))
    assert _signature(SelfField) == _signature(StdSelfField)
    assert [Later.__dict__["__init__"], SelfField.__dict__["__init__"]] != stand_ins
    one, two = Later(1), Later(1)
    assert one.items is not two.items and one.made is not two.made  # each call its own
    for bad in (lambda: Later(), lambda: Later(1, 2, [], 4), lambda: Later(1, fixed=2)):
        with pytest.raises(TypeError):
            bad()


def test_a_plain_subclass_of_a_class_not_made_yet_gets_the_dataclass_init() -> None:
    @frozen
    class Base:
        """Its __init__ is written when a subclass makes the first object."""

        x: int
        y: int = 1

    class Sub(Base):
        pass

    assert vars(Sub(4)) == {"x": 4, "y": 1} and vars(Base(2, 3)) == {"x": 2, "y": 3}


def test_a_field_without_default_after_one_with_fails_at_once_as_in_dataclass() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @frozen
        class Wrong:
            """Wrong order."""

            a: int = 1
            b: int  # type: ignore[misc]


def test_a_class_without_docstring_keeps_the_docstring_dataclass_writes() -> None:
    @frozen
    class Bare:
        x: int
        y: str = "a"

    @dataclasses.dataclass
    class StdBare:
        x: int
        y: str = "a"

    assert Bare.__doc__ == "Bare" + StdBare.__doc__.removeprefix("StdBare")  # type: ignore[union-attr]


def test_the_signature_before_the_first_object_is_the_dataclass_one() -> None:
    # inspect.signature and help() read the stand-in __init__: they must see the fields
    @frozen
    class Early:
        """Not made yet when its signature is asked."""

        a: int
        b: str = "x"
        c: list[int] = dataclasses.field(default_factory=list, kw_only=True)

    @dataclasses.dataclass
    class StdEarly:
        """Not made yet when its signature is asked."""

        a: int
        b: str = "x"
        c: list[int] = dataclasses.field(default_factory=list, kw_only=True)

    class Plain(Early):
        pass

    want = "(a: 'int', b: 'str' = 'x', *, c: 'list[int]' = <factory>) -> None"
    assert str(inspect.signature(Plain)) == want  # the base's, before its first object
    assert str(inspect.signature(Early)) == str(inspect.signature(StdEarly))
    assert vars(Early(1)) == vars(StdEarly(1))
    assert vars(Plain(2, "y")) == {"a": 2, "b": "y", "c": []}
