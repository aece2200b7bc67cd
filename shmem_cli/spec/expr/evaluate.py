"""Vectorized evaluation with CUDA's integer semantics, over NumPy int64 arrays.

Every node has its static C type (:mod:`shmem_cli.spec.expr.typecheck`). A value is a
Python ``int`` or an int64 array broadcast over threads and loop iterations, and
holds the C value exactly: ``int``, ``unsigned`` and ``long long`` values as
themselves, ``unsigned long long`` values as their two's-complement bit pattern.

* unsigned arithmetic wraps modulo 2^32 or 2^64; conversions wrap the same way;
* signed overflow, division or modulo by zero, ``INT_MIN / -1`` and a shift count
  outside ``0..width-1`` are undefined behaviour in C: they raise :class:`EvalFault`
  with the elements at fault (only elements that are *live* count: ``&&``, ``||`` and
  ``?:`` evaluate their right/branch operands only where C would);
* ``/`` and ``%`` truncate toward zero; ``>>`` of a negative value is arithmetic and
  ``<<`` of a signed value wraps into the sign bit, as CUDA (and C++20) do.

The walk uses an explicit stack, so it never recurses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from . import interval
from .ctype import CType
from .interval import Range
from .tree import BoolArray, EvalFault, IntArray, Node, Value

_I64_MIN = -(1 << 63)
_MOD64 = 1 << 64
_BIG = 1 << 62


def _wrap64(v: int) -> int:
    return ((v + (1 << 63)) % _MOD64) - (1 << 63)


def _is_array(v: Value) -> bool:
    return not isinstance(v, int)


def _arr(v: Any) -> IntArray:
    out: IntArray = np.asarray(v, dtype=np.int64)
    return out


def _fault(message: str, node: Node, bad: Any, live: BoolArray | None) -> None:
    """Raise if ``bad`` (a bool or a bool array) holds anywhere ``live``."""
    if isinstance(bad, (bool, np.bool_)):
        if bad and (live is None or bool(np.any(live))):
            raise EvalFault(message, node, True if live is None else live)
        return
    where = bad if live is None else (bad & live)
    if np.any(where):
        raise EvalFault(message, node, where)


def to_storage(v: Value, t: CType) -> Value:
    """A value converted to type ``t`` (modulo 2^bits), in the storage form above."""
    if t.bits == 64:
        if isinstance(v, int):
            return _wrap64(v)
        return v  # int64 storage already holds the 64-bit pattern
    if isinstance(v, int):
        return t.wrap(v)
    masked = _arr(v) & 0xFFFFFFFF
    if t.signed:
        return masked - ((masked >> 31) << 32)
    return masked


def true_value(v: Value, t: CType) -> Value:
    """What C sees: storage of an unsigned long long value above 2^63 is negative; as an
    int64 array it stays so (callers read it as out of range), as an int it is exact."""
    if t is CType.ULLONG and isinstance(v, int) and v < 0:
        return v + _MOD64
    return v


def _tv(v: int, t: CType) -> int:
    """The C value of a scalar in storage form."""
    return v + _MOD64 if t is CType.ULLONG and v < 0 else v


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
        stored = _wrap64(v) if t.bits == 64 else v
        return stored, interval.of_scalar(stored, t)
    a = _arr(v)
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


def _overflow(node: Node, t: CType) -> str:
    fix = (
        "compute in long long, e.g. with a (long long) cast of an operand"
        if t.bits == 32
        else "the values are too large even for long long; compute in unsigned long long"
    )
    what = node.op or node.kind
    return (
        f"signed integer overflow: the result of {what!r} does not fit in {t.spelling} "
        f"(undefined behaviour in CUDA); {fix}"
    )


def _arith(node: Node, a: Value, b: Value, t: CType, live: BoolArray | None) -> Value:
    """``+ - *`` in type ``t`` on operands already converted to ``t``."""
    op = node.op
    if not _is_array(a) and not _is_array(b):
        assert isinstance(a, int) and isinstance(b, int)
        ta, tb = _tv(a, t), _tv(b, t)
        r = ta + tb if op == "+" else ta - tb if op == "-" else ta * tb
        if t.signed:
            _fault(_overflow(node, t), node, not t.fits(r), live)
        return to_storage(r, t)  # (wraps only a value whose fault was masked off)
    aa, bb = _arr(a), _arr(b)
    with np.errstate(over="ignore"):
        rr: IntArray = aa + bb if op == "+" else aa - bb if op == "-" else aa * bb
    return _arith_array(node, aa, bb, rr, t, live)


def _arith_array(
    node: Node, aa: IntArray, bb: IntArray, r: IntArray, t: CType, live: BoolArray | None
) -> Value:
    """Reduce or check the int64 result ``r`` of ``aa op bb`` for type ``t``."""
    op = node.op
    if t.bits == 32:
        if t.signed:
            _fault(_overflow(node, t), node, (r < t.min) | (r > t.max), live)
            return r
        return r & 0xFFFFFFFF
    if t.signed:
        if op == "+":
            bad = ((aa ^ r) & (bb ^ r)) < 0
        elif op == "-":
            bad = ((aa ^ bb) & (aa ^ r)) < 0
        else:
            # r is the product wrapped to 64 bits: it is the true product exactly when
            # dividing it by aa gives bb back (an exact division has no rounding), apart
            # from -1 * INT64_MIN, whose wrapped quotient is INT64_MIN again
            with np.errstate(over="ignore", divide="ignore"):
                nonzero = aa != 0
                back = r // np.where(nonzero, aa, 1)
            bad = nonzero & ((back != bb) | ((aa == -1) & (bb == t.min)))
        _fault(_overflow(node, t), node, bad, live)
    return r


def _divide(node: Node, a: Value, b: Value, t: CType, live: BoolArray | None) -> Value:
    mod = node.op == "%"
    what = "modulo by zero" if mod else "division by zero"
    if not _is_array(a) and not _is_array(b):
        assert isinstance(a, int) and isinstance(b, int)
        ta, tb = _tv(a, t), _tv(b, t)
        if tb == 0:
            _fault(what, node, True, live)
            return 0
        if t.signed and ta == t.min and tb == -1:
            _fault(_overflow(node, t), node, True, live)
            return 0
        q = abs(ta) // abs(tb)
        q = q if (ta >= 0) == (tb >= 0) else -q
        return to_storage(ta - tb * q if mod else q, t)
    aa, bb = _arr(a), _arr(b)
    _fault(what, node, bb == 0, live)
    safe = _arr(np.where(bb == 0, 1, bb))
    if not t.signed and t.bits == 64:
        ua, ub = aa.astype(np.uint64), safe.astype(np.uint64)
        out: IntArray = (ua % ub if mod else ua // ub).astype(np.int64)
        return out
    if t.signed:
        _fault(_overflow(node, t), node, (aa == t.min) & (bb == -1), live)
        safe = _arr(np.where((aa == t.min) & (safe == -1), 1, safe))
    if isinstance(b, int) and b > 0 and aa.size and aa.min() >= 0:
        if b & (b - 1) == 0:  # the common, fast case: a power of two
            return aa & (b - 1) if mod else aa >> (b.bit_length() - 1)
        return _arr(aa % b if mod else aa // b)
    fq: IntArray = aa // safe  # floor; C truncates: step back toward zero where signs differ
    rest: IntArray = aa - safe * fq
    fq = fq + ((rest != 0) & ((aa < 0) != (safe < 0))).astype(np.int64)
    return _arr(aa - safe * fq if mod else fq)


def _shift(node: Node, a: Value, b: Value, t: CType, tb: CType, live: BoolArray | None) -> Value:
    width = t.bits
    count = true_value(b, tb)
    message = (
        f"shift count outside 0..{width - 1} for a {width}-bit {t.spelling} "
        "(undefined behaviour in CUDA); use a (long long) operand or a smaller count"
    )
    if not _is_array(count):
        assert isinstance(count, int)
        _fault(message, node, not 0 <= count < width, live)
        c = count if 0 <= count < width else 0
    else:
        cc = _arr(count)
        bad = (cc < 0) | (cc >= width)
        _fault(message, node, bad, live)
        c_arr = np.where(bad, 0, cc)
    left = node.op == "<<"
    if not _is_array(a) and not _is_array(b):
        assert isinstance(a, int)
        ta = _tv(a, t)
        return to_storage(ta << c if left else ta >> c, t)
    aa = _arr(a)
    cnt: Any = c_arr if _is_array(count) else c
    if width == 32:
        r = (aa << cnt) if left else (aa >> cnt)
        return to_storage(r, t) if left else r
    ua = aa.astype(np.uint64)
    ucount = np.asarray(cnt).astype(np.uint64)
    if left:
        out: IntArray = (ua << ucount).astype(np.int64)
        return out
    if t.signed:
        out = aa >> cnt
        return out
    out = (ua >> ucount).astype(np.int64)
    return out


def _compare(op: str, a: Value, b: Value, t: CType) -> Value:
    if t is CType.ULLONG:  # order unsigned 64-bit patterns by flipping the sign bit
        if _is_array(a) or _is_array(b):
            a, b = _arr(a) ^ np.int64(_I64_MIN), _arr(b) ^ np.int64(_I64_MIN)
        else:
            a, b = true_value(a, t), true_value(b, t)
    x: Any = a
    y: Any = b
    r = {
        "<": lambda: x < y,
        "<=": lambda: x <= y,
        ">": lambda: x > y,
        ">=": lambda: x >= y,
        "==": lambda: x == y,
        "!=": lambda: x != y,
    }[op]()
    return int(r) if isinstance(r, bool) else _arr(r)


def _truth(v: Value) -> Any:
    return v != 0 if isinstance(v, int) else _arr(v) != 0


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
            stop = _truth(a) if node.op == "||" else ~_truth(a) if _is_array(a) else a == 0
            if not _is_array(a):
                return None if stop else (node.args[1], live)
            return node.args[1], _and_live(live, ~stop)
        return None
    if kind == "ternary":
        if n == 0:
            return node.args[0], live
        c = vals[0]
        if not _is_array(c):
            return (node.args[1] if c != 0 else node.args[2], live) if n == 1 else None
        if n == 1:
            return node.args[1], _and_live(live, _truth(c))
        if n == 2:
            return node.args[2], _and_live(live, ~_truth(c))
        return None
    return (node.args[n], live) if n < len(node.args) else None


def checked(node: Node, vals: list[Value], live: BoolArray | None) -> Value:
    """The value of ``node`` from its operands' values, every fault checked."""
    kind, op = node.kind, node.op
    t = node.optype or node.ctype
    assert t is not None
    if kind == "num":
        return to_storage(node.value, t)
    if kind == "cast":
        return to_storage(vals[0], t)
    args = [a.ctype for a in node.args]
    conv = [to_storage(v, t) if ty is not t else v for v, ty in zip(vals, args, strict=False)]
    if kind == "unop":
        x = conv[0]
        if op == "!":
            return int(x == 0) if isinstance(x, int) else (_arr(x) == 0).astype(np.int64)
        if op == "+":
            return x
        if op == "~":
            return to_storage(~x, t)
        if t.signed:
            _fault(_overflow(node, t), node, _arr(x) == t.min if _is_array(x) else x == t.min, live)
        with np.errstate(over="ignore"):
            return to_storage(-x, t) if isinstance(x, int) else to_storage(-_arr(x), t)
    if kind == "ternary":
        c = vals[0]
        if not _is_array(c):
            chosen = args[1] if c != 0 else args[2]
            return to_storage(vals[1], t) if chosen is not t else vals[1]
        yes = to_storage(vals[1], t) if args[1] is not t else vals[1]
        no = to_storage(vals[2], t) if args[2] is not t else vals[2]
        return _arr(np.where(_truth(c), yes, no))
    if kind == "call":
        if op == "abs":
            x = conv[0]
            _fault(_overflow(node, t), node, _arr(x) == t.min if _is_array(x) else x == t.min, live)
            with np.errstate(over="ignore"):
                return to_storage(abs(x), t) if isinstance(x, int) else np.abs(_arr(x))
        less = _compare("<", conv[0], conv[1], t)
        pick_first = less if op == "min" else _compare(">", conv[0], conv[1], t)
        if isinstance(pick_first, int) and not _is_array(conv[0]) and not _is_array(conv[1]):
            return conv[0] if pick_first else conv[1]
        return _arr(np.where(_arr(pick_first) != 0, conv[0], conv[1]))
    # binop
    if op in ("&&", "||"):
        a = vals[0]
        if len(vals) == 1:  # short-circuited on a scalar
            return int(op == "||")
        ta, tb = _truth(a), _truth(vals[1])
        r = (ta & tb) if op == "&&" else (ta | tb)
        return int(r) if isinstance(r, bool) else _arr(r)
    if op in ("<<", ">>"):
        tb = args[1]
        assert tb is not None
        return _shift(node, conv[0], vals[1], t, tb, live)
    a, b = conv
    if op in ("+", "-", "*"):
        return _arith(node, a, b, t, live)
    if op in ("/", "%"):
        return _divide(node, a, b, t, live)
    if op in ("&", "|", "^"):
        p: Any = a
        q: Any = b
        bits: Value = p & q if op == "&" else p | q if op == "|" else p ^ q
        return bits
    return _compare(op, a, b, t)


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
        aa = _arr(a)
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
        if not interval.fits(r3, t) or (op == "*" and t.bits == 64 and max(-r3[0], r3[1]) >= _BIG):
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
