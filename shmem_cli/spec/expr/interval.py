"""Value ranges that prove an operation cannot fault or wrap, so it needs no check.

The evaluator carries, beside each value, a range ``(lo, hi)`` that holds every element's
C value, or None when nothing is known. A range is only kept where the value's storage form
equals its C value (:mod:`shmem_cli.spec.expr.evaluate`): inside the type, and below 2^63 for
``unsigned long long``. When the ranges of the operands put the whole result inside its
type (and divisors away from zero, shift counts inside the width), the plain int64
operation gives exactly what the checked one gives, and no element can be undefined
behaviour. Ranges are computed with Python integers, so they never overflow themselves.
"""

from __future__ import annotations

from typing import TypeAlias

from .ctype import CType

Range: TypeAlias = "tuple[int, int] | None"

_I64_MAX = (1 << 63) - 1


def fits(r: Range, t: CType) -> bool:
    """Whether every value in ``r`` is stored as itself in type ``t``: inside the type,
    and below 2^63 for ``unsigned long long``."""
    return r is not None and t.min <= r[0] and r[1] <= t.max and r[1] <= _I64_MAX


def of_scalar(v: int, t: CType) -> Range:
    """The range of a scalar in storage form (None for an unsigned long long of 2^63 or more)."""
    return (v, v) if fits((v, v), t) else None


def within(r: Range, t: CType) -> Range:
    """``r`` if it fits ``t``, else None."""
    return r if fits(r, t) else None


def arith(op: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The range of ``a op b`` for ``+ - *`` (exact integers)."""
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[1], a[1] - b[0]
    corners = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(corners), max(corners)


def union(a: Range, b: Range) -> Range:
    if a is None or b is None:
        return None
    return min(a[0], b[0]), max(a[1], b[1])


def bitwise(op: str, a: Range, b: Range) -> Range:
    """``& | ^`` of two non-negative ranges (None if either may be negative)."""
    if a is None or b is None or a[0] < 0 or b[0] < 0:
        return None
    if op == "&":
        return 0, min(a[1], b[1])
    return 0, (1 << max(a[1].bit_length(), b[1].bit_length())) - 1


def magnitude(r: tuple[int, int]) -> tuple[int, int]:
    """The range of ``abs`` over ``r``."""
    lo, hi = r
    top = max(abs(lo), abs(hi))
    return (0, top) if lo <= 0 <= hi else (min(abs(lo), abs(hi)), top)


def pick(op: str, a: Range, b: Range) -> Range:
    """The range of ``min(a, b)`` or ``max(a, b)``."""
    if a is None or b is None:
        return None
    if op == "min":
        return min(a[0], b[0]), min(a[1], b[1])
    return max(a[0], b[0]), max(a[1], b[1])
