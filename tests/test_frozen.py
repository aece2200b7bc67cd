"""``@frozen`` (shmem_cli/plumbing/frozen.py) against the standard library's
``@dataclass(frozen=True)``: the same fields, equality, hash, ``replace`` and keyword-only
fields; and every immutable class of the package uses it (its start-up cost is the reason)."""

from __future__ import annotations

import dataclasses
import re

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
