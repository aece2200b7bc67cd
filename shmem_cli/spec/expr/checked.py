"""C's integer operations on values, every fault checked: wraparound and undefined behaviour.

A value is a Python ``int`` or an int64 array broadcast over threads and loop iterations, and
holds the C value exactly: ``int``, ``unsigned`` and ``long long`` values as themselves,
``unsigned long long`` values as their two's-complement bit pattern.

* unsigned arithmetic wraps modulo 2^32 or 2^64; conversions wrap the same way;
* signed overflow, division or modulo by zero, ``INT_MIN / -1`` and a shift count
  outside ``0..width-1`` are undefined behaviour in C: they raise :class:`EvalFault`
  with the elements at fault (only elements that are *live* count);
* ``/`` and ``%`` truncate toward zero; ``>>`` of a negative value is arithmetic and
  ``<<`` of a signed value wraps into the sign bit, as CUDA (and C++20) do.

:func:`checked` is one node's operation; the walk over a tree is
:mod:`shmem_cli.spec.expr.evaluate`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .ctype import CType
from .tree import BoolArray, EvalFault, IntArray, Node, Value

_I64_MIN = -(1 << 63)
_MOD64 = 1 << 64
BIG = 1 << 62


def wrap64(v: int) -> int:
    return ((v + (1 << 63)) % _MOD64) - (1 << 63)


def is_array(v: Value) -> bool:
    return not isinstance(v, int)


def as_array(v: Any) -> IntArray:
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
            return wrap64(v)
        return v  # int64 storage already holds the 64-bit pattern
    if isinstance(v, int):
        return t.wrap(v)
    masked = as_array(v) & 0xFFFFFFFF
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
    if not is_array(a) and not is_array(b):
        assert isinstance(a, int) and isinstance(b, int)
        ta, tb = _tv(a, t), _tv(b, t)
        r = ta + tb if op == "+" else ta - tb if op == "-" else ta * tb
        if t.signed:
            _fault(_overflow(node, t), node, not t.fits(r), live)
        return to_storage(r, t)  # (wraps only a value whose fault was masked off)
    aa, bb = as_array(a), as_array(b)
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
    if not is_array(a) and not is_array(b):
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
    aa, bb = as_array(a), as_array(b)
    _fault(what, node, bb == 0, live)
    safe = as_array(np.where(bb == 0, 1, bb))
    if not t.signed and t.bits == 64:
        ua, ub = aa.astype(np.uint64), safe.astype(np.uint64)
        out: IntArray = (ua % ub if mod else ua // ub).astype(np.int64)
        return out
    if t.signed:
        _fault(_overflow(node, t), node, (aa == t.min) & (bb == -1), live)
        safe = as_array(np.where((aa == t.min) & (safe == -1), 1, safe))
    if isinstance(b, int) and b > 0 and aa.size and aa.min() >= 0:
        if b & (b - 1) == 0:  # the common, fast case: a power of two
            return aa & (b - 1) if mod else aa >> (b.bit_length() - 1)
        return as_array(aa % b if mod else aa // b)
    fq: IntArray = aa // safe  # floor; C truncates: step back toward zero where signs differ
    rest: IntArray = aa - safe * fq
    fq = fq + ((rest != 0) & ((aa < 0) != (safe < 0))).astype(np.int64)
    return as_array(aa - safe * fq if mod else fq)


def _shift(node: Node, a: Value, b: Value, t: CType, tb: CType, live: BoolArray | None) -> Value:
    width = t.bits
    count = true_value(b, tb)
    message = (
        f"shift count outside 0..{width - 1} for a {width}-bit {t.spelling} "
        "(undefined behaviour in CUDA); use a (long long) operand or a smaller count"
    )
    if not is_array(count):
        assert isinstance(count, int)
        _fault(message, node, not 0 <= count < width, live)
        c = count if 0 <= count < width else 0
    else:
        cc = as_array(count)
        bad = (cc < 0) | (cc >= width)
        _fault(message, node, bad, live)
        c_arr = np.where(bad, 0, cc)
    left = node.op == "<<"
    if not is_array(a) and not is_array(b):
        assert isinstance(a, int)
        ta = _tv(a, t)
        return to_storage(ta << c if left else ta >> c, t)
    aa = as_array(a)
    cnt: Any = c_arr if is_array(count) else c
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
        if is_array(a) or is_array(b):
            a, b = as_array(a) ^ np.int64(_I64_MIN), as_array(b) ^ np.int64(_I64_MIN)
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
    return int(r) if isinstance(r, bool) else as_array(r)


def truth(v: Value) -> Any:
    return v != 0 if isinstance(v, int) else as_array(v) != 0


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
            return int(x == 0) if isinstance(x, int) else (as_array(x) == 0).astype(np.int64)
        if op == "+":
            return x
        if op == "~":
            return to_storage(~x, t)
        if t.signed:
            _fault(
                _overflow(node, t), node, as_array(x) == t.min if is_array(x) else x == t.min, live
            )
        with np.errstate(over="ignore"):
            return to_storage(-x, t) if isinstance(x, int) else to_storage(-as_array(x), t)
    if kind == "ternary":
        c = vals[0]
        if not is_array(c):
            chosen = args[1] if c != 0 else args[2]
            return to_storage(vals[1], t) if chosen is not t else vals[1]
        yes = to_storage(vals[1], t) if args[1] is not t else vals[1]
        no = to_storage(vals[2], t) if args[2] is not t else vals[2]
        return as_array(np.where(truth(c), yes, no))
    if kind == "call":
        if op == "abs":
            x = conv[0]
            _fault(
                _overflow(node, t), node, as_array(x) == t.min if is_array(x) else x == t.min, live
            )
            with np.errstate(over="ignore"):
                return to_storage(abs(x), t) if isinstance(x, int) else np.abs(as_array(x))
        less = _compare("<", conv[0], conv[1], t)
        pick_first = less if op == "min" else _compare(">", conv[0], conv[1], t)
        if isinstance(pick_first, int) and not is_array(conv[0]) and not is_array(conv[1]):
            return conv[0] if pick_first else conv[1]
        return as_array(np.where(as_array(pick_first) != 0, conv[0], conv[1]))
    # binop
    if op in ("&&", "||"):
        a = vals[0]
        if len(vals) == 1:  # short-circuited on a scalar
            return int(op == "||")
        ta, tb = truth(a), truth(vals[1])
        r = (ta & tb) if op == "&&" else (ta | tb)
        return int(r) if isinstance(r, bool) else as_array(r)
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
