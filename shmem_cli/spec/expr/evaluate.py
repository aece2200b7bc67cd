"""Vectorized evaluation with CUDA's integer semantics, over NumPy int64 arrays.

Every node has its static C type (:mod:`shmem_cli.spec.expr.typecheck`); each node's
operation is C's, every fault checked (:mod:`shmem_cli.spec.expr.checked`: wraparound,
undefined behaviour as located faults). ``&&``, ``||`` and ``?:`` evaluate their
right/branch operands only where C would (the *live* elements). Each value travels with
its range (:mod:`shmem_cli.spec.expr.interval`): an operation whose operands' ranges
prove it cannot fault or wrap runs as the plain int64 operation, with the same result.

The walk uses an explicit stack, so it never recurses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from . import interval
from .checked import BIG, as_array, checked, is_array, to_storage, true_value, truth, wrap64
from .ctype import CType
from .interval import Range
from .tree import BoolArray, EvalFault, IntArray, Node, Value

__all__ = ["combine", "evaluate", "name_value", "next_child", "true_value"]


def name_value(node: Node, env: Mapping[str, Value]) -> tuple[Value, Range]:
    try:
        v = env[node.op]
    except KeyError:
        raise EvalFault(f"name {node.op!r} has no value here", node, True) from None
    t = node.ctype
    assert t is not None
    lo, hi = t.min, t.max
    if isinstance(v, (bool, np.integer)):
        v = int(v)
    if isinstance(v, int):
        if not lo <= v <= hi:
            raise EvalFault(f"value {v} of {node.op!r} does not fit in {t.spelling}", node, True)
        stored = wrap64(v) if t.bits == 64 else v
        return stored, interval.of_scalar(stored, t)
    a = as_array(v)
    if not a.size:
        return a, None
    amin, amax = _extent(a)
    if t.bits == 32 and (amin < lo or amax > hi):
        raise EvalFault(
            f"a value of {node.op!r} does not fit in {t.spelling}", node, (a < lo) | (a > hi)
        )
    return a, interval.within((amin, amax), t)


_EXTENTS: dict[int, tuple[IntArray, int, int]] = {}
_EXTENT_ELEMENTS = 1 << 12  # remembered arrays stay small: at most 256 x 32 KiB held


def _extent(a: IntArray) -> tuple[int, int]:
    """(min, max) of ``a``, remembered for a read-only array that owns its data (it cannot
    change; the entry holds it, so its id is not reused): the thread and loop arrays of a
    chunk are read by every expression of the access."""
    known = _EXTENTS.get(id(a))
    if known is not None and known[0] is a:
        return known[1], known[2]
    flags = a.flags
    if flags.writeable or not flags.owndata or a.size > _EXTENT_ELEMENTS:
        return int(a.min()), int(a.max())  # (on a large array the reduction costs little)
    if len(_EXTENTS) >= 256:
        _EXTENTS.clear()
    lo, hi = int(a.min()), int(a.max())
    _EXTENTS[id(a)] = (a, lo, hi)
    return lo, hi


def _and_live(live: BoolArray | None, cond: Any) -> BoolArray:
    c: BoolArray = np.asarray(cond, dtype=bool)
    return c if live is None else (live & c)


def next_child(node: Node, live: BoolArray | None, vals: list[Value]) -> tuple[Node, Any] | None:
    """The next child to evaluate, with the lanes where it counts; None when done."""
    kind, n = node.kind, len(vals)
    if kind == "binop" and node.op in ("&&", "||"):
        if n == 0:
            return node.args[0], live
        if n == 1:
            a = vals[0]
            stop = truth(a) if node.op == "||" else ~truth(a) if is_array(a) else a == 0
            if not is_array(a):
                return None if stop else (node.args[1], live)
            return node.args[1], _and_live(live, ~stop)
        return None
    if kind == "ternary":
        if n == 0:
            return node.args[0], live
        c = vals[0]
        if not is_array(c):
            return (node.args[1] if c != 0 else node.args[2], live) if n == 1 else None
        if n == 1:
            return node.args[1], _and_live(live, truth(c))
        if n == 2:
            return node.args[2], _and_live(live, ~truth(c))
        return None
    return (node.args[n], live) if n < len(node.args) else None


def _convert(v: Value, r: Range, t: CType) -> tuple[Value, Range]:
    """``v`` converted to ``t``; a value whose range fits ``t`` is stored as itself."""
    if interval.fits(r, t):
        return v, r
    out = to_storage(v, t)
    return out, interval.of_scalar(out, t) if isinstance(out, int) else None


def _unchecked(node: Node, vals: list[Value], rngs: list[Range], t: CType) -> tuple[Value, Range]:
    """The value and range of an operation that the operands' ranges prove cannot fault or
    wrap (the plain int64 operation is then exact); ``(0, None)`` otherwise.
    Only arrays come here: scalars take the checked path, which is cheap for them."""
    kind, op = node.kind, node.op
    if kind == "cast":
        return _convert(vals[0], rngs[0], t) if interval.fits(rngs[0], t) else (0, None)
    if kind == "unop" and op in ("-", "~") and t.signed:
        r = rngs[0]
        if r is None or r[0] <= t.min:
            return 0, None
        x: Any = vals[0]
        return (-x, (-r[1], -r[0])) if op == "-" else (~x, (-r[1] - 1, -r[0] - 1))
    if kind != "binop" or op in ("&&", "||"):
        return 0, None
    args = node.args
    ra, rb = rngs
    a, b = vals
    if args[0].ctype is not t and not interval.fits(ra, t):
        return 0, None
    if op in ("<<", ">>"):
        if ra is None or rb is None or rb[0] < 0 or rb[1] >= t.bits:
            return 0, None
        aa = as_array(a)
        if op == ">>":
            lo, hi = ra
            return aa >> b, (min(lo >> rb[0], lo >> rb[1]), max(hi >> rb[0], hi >> rb[1]))
        r2 = (ra[0] << rb[0], ra[1] << rb[1])
        return (aa << b, r2) if ra[0] >= 0 and interval.fits(r2, t) else (0, None)
    if args[1].ctype is not t and not interval.fits(rb, t):
        return 0, None
    if ra is None or rb is None:
        return 0, None
    p: Any = a
    q: Any = b
    if op in ("+", "-", "*"):
        r3 = interval.arith(op, ra, rb)
        if not interval.fits(r3, t) or (op == "*" and t.bits == 64 and max(-r3[0], r3[1]) >= BIG):
            return 0, None  # (near 2^63 the checked 64-bit product decides)
        return (p + q if op == "+" else p - q if op == "-" else p * q), r3
    if op in ("/", "%"):
        if ra[0] < 0 or rb[0] <= 0:
            return 0, None
        mod = op == "%"
        r4 = (0, min(ra[1], rb[1] - 1)) if mod else (ra[0] // rb[1], ra[1] // rb[0])
        if isinstance(q, int) and q & (q - 1) == 0:  # a power of two: a mask or a shift
            return (p & (q - 1) if mod else p >> (q.bit_length() - 1)), r4
        return (p % q if mod else p // q), r4
    return 0, None


_FAST_KINDS = frozenset(("cast", "unop", "binop"))


def combine(
    node: Node,
    vals: list[Value],
    rngs: list[Range],
    env: Mapping[str, Value],
    live: BoolArray | None,
) -> tuple[Value, Range]:
    """The value of ``node`` and its range: unchecked where the ranges prove it safe."""
    kind = node.kind
    if kind == "name":
        return name_value(node, env)
    t = node.optype or node.ctype
    assert t is not None
    # (these kinds have one or two operands; scalars take the checked path, cheap for them)
    if kind in _FAST_KINDS and not (isinstance(vals[0], int) and isinstance(vals[-1], int)):
        value, r = _unchecked(node, vals, rngs, t)
        if r is not None:
            return value, r
    value = checked(node, vals, live)
    out = node.ctype
    assert out is not None
    if isinstance(value, int):
        return value, interval.of_scalar(value, out)
    return value, _result_range(node, vals, rngs, out)


def _result_range(node: Node, vals: list[Value], rngs: list[Range], out: CType) -> Range:
    """The range of a checked array result, where it is cheap to know."""
    kind, op = node.kind, node.op
    if kind == "binop" and op in _BOOLEAN or kind == "unop" and op == "!":
        return (0, 1)
    if kind == "binop" and op in ("&", "|", "^") and all(a.ctype is out for a in node.args):
        return interval.within(interval.bitwise(op, rngs[0], rngs[1]), out)
    if kind == "unop" and op == "+":
        return rngs[0]
    if kind == "ternary":
        if len(vals) == 2:  # a scalar condition: only the chosen branch ran
            chosen = node.args[1] if vals[0] != 0 else node.args[2]
            return rngs[1] if chosen.ctype is out else None
        if all(a.ctype is out for a in node.args[1:]):
            return interval.within(interval.union(rngs[1], rngs[2]), out)
    if kind == "call" and all(a.ctype is out for a in node.args):
        if op == "abs":  # an element at the minimum (a fault masked off) would stay negative
            r = rngs[0]
            return interval.magnitude(r) if r is not None and r[0] > out.min else None
        return interval.within(interval.pick(op, rngs[0], rngs[1]), out)
    return None


_BOOLEAN = frozenset(("&&", "||", "<", "<=", ">", ">=", "==", "!="))


def evaluate(root: Node, env: Mapping[str, Value], live: BoolArray | None = None) -> Value:
    """The value of a typed tree over ``env`` (storage form; see :func:`true_value`).

    Each value travels with its range (:mod:`shmem_cli.spec.expr.interval`): an operation whose
    operands' ranges prove it cannot fault or wrap runs unchecked, with the same result."""
    if root.kind == "name":  # a leaf alone (a loop bound, a param): no walk
        return name_value(root, env)[0]
    if root.kind == "num":
        return checked(root, [], live)
    stack: list[tuple[Node, Any, list[Value], list[Range]]] = [(root, live, [], [])]
    while True:
        node, lv, vals, rngs = stack[-1]
        step = next_child(node, lv, vals)
        if step is not None:
            stack.append((step[0], step[1], [], []))
            continue
        result, r = combine(node, vals, rngs, env, lv)
        stack.pop()
        if not stack:
            return result
        stack[-1][2].append(result)
        stack[-1][3].append(r)
