"""The Python API's arguments, checked before any work: each wrong one is a
:class:`~shmem_cli.plumbing.errors.ShmemError` (code ``invalid-argument``) that names the call,
the parameter and what it must be, never a ``TypeError`` from deep inside.

``shmem_cli.trace(block=32.5)`` says ``trace(): block must be a positive integer or 1 to 3 of
them, got a float (32.5)``; a value is shown short (a 5,000-digit integer by its size).
"""

from __future__ import annotations

import itertools
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import ShmemError, shorten

CODE = "invalid-argument"


class ArgumentError(ShmemError):
    """A Python API argument of the wrong type or out of range."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=CODE)


def shown(value: Any) -> str:
    """``a float (32.5)``: the type of ``value`` and a short rendering of it."""
    kind = type(value).__name__
    if value is None:
        return "None"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an int of {value.bit_length()} bits"
    try:
        text = shorten(value if isinstance(value, str) else repr(_head(value)))
    except Exception:  # a repr that fails: the type says enough
        return f"a {kind}"
    article = "an" if kind[:1] in "aeiou" else "a"
    return f"{article} {kind} ({text})"


def _head(value: Any) -> Any:
    """Enough of ``value`` to show it: the repr of a 1 GiB ``bytes`` or of a list of 10^8
    items would be made whole before it is cut (gigabytes, seconds)."""
    if isinstance(value, bytes | bytearray | memoryview | list | tuple) and len(value) > 100:
        return value[:100]
    if isinstance(value, Mapping) and len(value) > 100:
        return dict(itertools.islice(value.items(), 100))
    return value


def fail(call: str, name: str, what: str, value: Any) -> ArgumentError:
    return ArgumentError(f"{call}(): {name} must be {what}, got {shown(value)}")


def path(call: str, name: str, value: Any) -> Path:
    """A file path: a ``str`` or an ``os.PathLike`` naming text."""
    if isinstance(value, str | os.PathLike) and not isinstance(value, bytes):
        text = os.fspath(value)
        if isinstance(text, str) and text and "\0" not in text:
            return Path(text)
    raise fail(call, name, "a file path (a str or a pathlib.Path)", value)


def optional_text(call: str, name: str, value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise fail(call, name, "a str or None", value)


def whole(value: Any) -> bool:
    """An integer: an ``int`` or a NumPy integer (``numbers.Integral``), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def integer(call: str, name: str, value: Any, *, low: int = 0, high: int | None = None) -> int:
    """An integer (:func:`whole`) between ``low`` and ``high``."""
    ok = whole(value)
    if ok and value >= low and (high is None or value <= high):
        return int(value)
    bounds = f"at least {low:,}" if high is None else f"between {low:,} and {high:,}"
    raise fail(call, name, f"an integer {bounds}", value)


def optional_integer(
    call: str, name: str, value: Any, *, low: int = 0, high: int | None = None
) -> int | None:
    return None if value is None else integer(call, name, value, low=low, high=high)


def optional_seconds(
    call: str, name: str, value: Any, low: float = 0.0, high: float = math.inf
) -> float | None:
    """None, or a finite number of seconds above 0, between ``low`` and ``high``."""
    if value is None:
        return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    # an int is compared as it is: math.isfinite(10**400) raises OverflowError
    finite = number and (isinstance(value, int) or math.isfinite(value))
    if finite and value > 0 and low <= value <= high:
        return float(value)
    bounds = f" between {low:g} and {high:g}" if math.isfinite(high) else ""
    raise fail(call, name, f"a positive number of seconds{bounds}", value)


def dims(call: str, name: str, value: Any) -> tuple[int, int, int]:
    """A block or grid: an ``int`` or a sequence of 1 to 3 of them (their values are checked
    by the launch's own rule, :func:`shmem_cli.cuda.launch.values.check_dims`)."""
    items = [value] if whole(value) else value
    listed = isinstance(items, Sequence) and not isinstance(items, str | bytes)
    if listed and 1 <= len(items) <= 3 and all(whole(v) for v in items):
        full = [int(v) for v in items] + [1] * (3 - len(items))
        return full[0], full[1], full[2]
    raise fail(call, name, "a positive integer or a sequence of 1 to 3 of them", value)


def texts(call: str, name: str, value: Any) -> tuple[str, ...]:
    """A sequence of ``str`` (a lone ``str`` is refused: it would be split into letters)."""
    listed = isinstance(value, Sequence) and not isinstance(value, str | bytes)
    if listed and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise fail(call, name, "a list of str", value)


def mapping(call: str, name: str, value: Any) -> Mapping[Any, Any]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return value
    raise fail(call, name, "a mapping (a dict)", value)


def plain(
    call: str, name: str, value: Mapping[Any, Any], *, nodes: int, depth: int, chars: int
) -> dict[Any, Any]:
    """A spec given as a mapping, made plain data (dict, list, str, int, float, bool, None)
    without recursion and within the bounds of a spec file: at most ``nodes`` values,
    ``depth`` levels and ``chars`` characters of text. A NumPy integer, float or array is
    its Python value; a str or int subclass its plain value; anything else (bytes, a set,
    a generator, an object) an error naming where it is, as ``source['block'][0]``."""
    root: dict[Any, Any] = {}
    stack: list[tuple[Any, Any, Any, str, int]] = [(value, None, None, name, 0)]
    count = text = 0
    while stack:
        item, parent, key, where, level = stack.pop()
        count += 1
        if count > nodes:
            raise ArgumentError(f"{call}(): {name} holds more than {nodes:,} values")
        if level > depth:
            raise ArgumentError(
                f"{call}(): {name} is nested deeper than {depth} levels (does it hold itself?)"
            )
        try:
            out, children = _plain_value(item, nodes)
        except Exception:  # a mapping or subclass whose conversion raises
            out, children = _UNREADABLE, []
        if out is _TOO_MANY:
            raise ArgumentError(f"{call}(): {where} holds more than {nodes:,} values")
        if out is _UNREADABLE:
            raise fail(call, where, "a str, number, bool, None, list or mapping", item)
        if isinstance(out, str):
            text += len(out)
            if text > chars:
                raise ArgumentError(f"{call}(): {name} holds more than {chars:,} characters")
        if parent is None:
            root = out
        elif isinstance(parent, dict):
            parent[key] = out
        else:
            parent.append(out)
        for child_key, child in reversed(children):
            if isinstance(out, dict):
                try:
                    k, _ = _plain_value(child_key, 0)
                except Exception:
                    k = _UNREADABLE
                if k is not None and not isinstance(k, str | int | float):
                    raise fail(call, f"a key of {where}", "a str, number, bool or None", child_key)
                if isinstance(k, str):
                    text += len(k)
                shown_key = f"[{shorten(repr(k), 40)}]"
                stack.append((child, out, k, where + shown_key, level + 1))
            else:
                stack.append((child, out, None, f"{where}[{child_key}]", level + 1))
    return root


_UNREADABLE = object()
_TOO_MANY = object()


def _plain_value(item: Any, limit: int) -> tuple[Any, list[tuple[Any, Any]]]:
    """(the plain value of ``item``, its children as (key, value) pairs); ``_UNREADABLE``
    for what a spec cannot hold, ``_TOO_MANY`` for a container of more than ``limit``
    items. A container's value is a new empty one, filled later."""
    import numpy as np

    sized = isinstance(item, Mapping | list | tuple | np.ndarray)
    if sized and (item.size if isinstance(item, np.ndarray) else len(item)) > limit:
        return _TOO_MANY, []
    if item is None or isinstance(item, bool | np.bool_):
        return (None if item is None else bool(item)), []
    if isinstance(item, str):
        return str.__str__(item), []
    if whole(item):
        number = int.__index__(item) if isinstance(item, int) else int(item)
        return (number if number.bit_length() <= 4096 else _UNREADABLE), []
    if isinstance(item, float | np.floating):
        return float.__float__(item) if isinstance(item, float) else float(item), []
    if isinstance(item, Mapping):
        return {}, list(item.items())
    if isinstance(item, np.ndarray):
        item = item.tolist()
    if isinstance(item, list | tuple):
        return [], list(enumerate(item))
    return _UNREADABLE, []
