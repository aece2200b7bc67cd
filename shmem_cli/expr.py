"""C index expressions: parsed with a lark grammar, evaluated vectorized with NumPy.

An expression such as ``threadIdx.y + 8*k`` is parsed once into a small AST
(:class:`Expr`). It is then evaluated over NumPy arrays that cover every thread
and loop iteration at once. Semantics follow C on ``long long``: ``/`` and ``%``
truncate toward zero, comparisons and logical operators give 0 or 1, ``&&``,
``||`` and ``?:`` only evaluate (and so only fault on) the elements they select.

User text is never passed to ``eval``; the grammar is the only way in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from .errors import ShmemError, SourcePos, shorten

IntArray: TypeAlias = "npt.NDArray[np.int64]"
BoolArray: TypeAlias = "npt.NDArray[np.bool_]"
Value: TypeAlias = "IntArray | int"

MAX_LENGTH = 4096
MAX_DEPTH = 200

GRAMMAR = r"""
?start: ternary

?ternary: lor
        | lor QMARK ternary ":" ternary   -> ternary

?lor: land | lor OROR land                 -> binop
?land: bor | land ANDAND bor               -> binop
?bor: bxor | bor BAR bxor                  -> binop
?bxor: band | bxor CARET band              -> binop
?band: eq | band AMP eq                    -> binop
?eq: rel | eq EQOP rel                     -> binop
?rel: shift | rel RELOP shift              -> binop
?shift: add | shift SHIFTOP add            -> binop
?add: mul | add ADDOP mul                  -> binop
?mul: unary | mul MULOP unary              -> binop
?unary: atom | UNOP unary                  -> unop
      | ADDOP unary                        -> unop
?atom: INT                                 -> number
     | NAME "." NAME                       -> member
     | NAME "(" [ternary ("," ternary)*] ")" -> call
     | NAME                                -> name
     | "(" ternary ")"

QMARK: "?"
OROR: "||"
ANDAND: "&&"
BAR: /\|(?!\|)/
CARET: "^"
AMP: /&(?!&)/
EQOP: "==" | "!="
RELOP: "<=" | ">=" | /<(?!<)/ | />(?!>)/
SHIFTOP: "<<" | ">>"
ADDOP: "+" | "-"
MULOP: "*" | "/" | "%"
UNOP: "~" | /!(?!=)/
INT: /(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)[uUlL]*/
NAME: /[A-Za-z_][A-Za-z0-9_]*/
%ignore /[ \t\r\n]+/
"""

FUNCTIONS = {"min": 2, "max": 2, "abs": 1}
THREAD_MEMBERS = {"threadIdx": ("x", "y", "z"), "blockDim": ("x", "y", "z")}


class EvalFault(Exception):
    """Raised during evaluation; carries the flat index of the first bad element."""

    def __init__(self, message: str, node: Expr, where: BoolArray) -> None:
        super().__init__(message)
        self.message = message
        self.node = node
        self.where = where


@dataclass(frozen=True)
class Expr:
    """One node of a parsed expression. ``col`` is the 0-based offset in the source text."""

    kind: str  # num, name, unop, binop, ternary, call
    col: int
    op: str = ""
    value: int = 0
    args: tuple[Expr, ...] = ()

    def evaluate(self, env: Mapping[str, Value], live: BoolArray | None = None) -> Value:
        """Evaluate over ``env`` (arrays broadcast together). ``live`` masks
        the elements whose faults (division by zero, bad shifts) matter."""
        try:
            result = _eval(self, env, live)
        except OverflowError:  # a Python int beyond 64 bits met a NumPy array
            result = None
        if result is None or (isinstance(result, int) and not -(2**63) <= result < 2**63):
            raise EvalFault(
                "integer overflow: a value does not fit in 64 bits", self, np.array(True)
            )
        return result

    def constant(self, params: Mapping[str, int]) -> int:
        """Evaluate an expression that may only use ``params``."""
        result = _eval(self, params, None)
        return int(np.asarray(result).reshape(-1)[0]) if not isinstance(result, int) else result


@lru_cache(maxsize=1)
def _parser() -> Any:
    from lark import Lark

    return Lark(GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def _check_shape(text: str, path: str | None, pos: SourcePos | None) -> None:
    if len(text) > MAX_LENGTH:
        raise ShmemError(
            f"expression is {len(text)} characters long; the limit is {MAX_LENGTH}",
            path=path,
            pos=pos,
        )
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
            if depth > MAX_DEPTH:
                raise ShmemError(
                    f"expression nests parentheses deeper than {MAX_DEPTH}",
                    path=path,
                    pos=pos.shifted(i) if pos else None,
                )
        elif ch == ")":
            depth -= 1


def parse(
    text: str | int | bool,
    *,
    path: str | None = None,
    pos: SourcePos | None = None,
    names: Mapping[str, str] | None = None,
) -> Expr:
    """Parse a C expression. ``names`` maps every allowed bare name to a short
    description; an unknown name is an error at its column with a suggestion.
    ``pos`` is where the expression's first character sits in the file."""
    if isinstance(text, bool):
        return Expr("num", 0, value=int(text))
    if isinstance(text, int):
        if not -(2**62) < text < 2**62:
            raise ShmemError(f"integer {shorten(text)} is too large", path=path, pos=pos)
        return Expr("num", 0, value=text)
    if not isinstance(text, str):
        raise ShmemError(f"expected an expression, found {shorten(text)}", path=path, pos=pos)
    _check_shape(text, path, pos)
    if not text.strip():
        raise ShmemError("empty expression", path=path, pos=pos)
    from .exprfast import parse_well_formed

    # well-formed text needs no lark (fast start-up); lark parses the rest and explains errors
    expr = parse_well_formed(text)
    if expr is None:
        expr = _parse_with_lark(text, path, pos)
    if names is not None:
        _check_names(expr, text, names, path, pos)
    return expr


def _parse_with_lark(text: str, path: str | None, pos: SourcePos | None) -> Expr:
    """Parse with the grammar; every syntax error becomes a located ShmemError."""
    from lark.exceptions import (
        UnexpectedCharacters,
        UnexpectedEOF,
        UnexpectedInput,
        UnexpectedToken,
    )

    try:
        tree = _parser().parse(text)
    except UnexpectedCharacters as exc:
        col = exc.column - 1
        raise ShmemError(
            f"unexpected character {shorten(text[col : col + 1])!s} in expression "
            f"{shorten(text)!r}",
            path=path,
            pos=pos.shifted(col) if pos else None,
        ) from None
    except UnexpectedToken as exc:
        if exc.token.type == "$END":
            col = len(text)
            msg = f"expression {shorten(text)!r} ends too early"
        else:
            col = exc.column - 1 if isinstance(exc.column, int) and exc.column > 0 else 0
            msg = f"unexpected {shorten(str(exc.token))!r} in expression {shorten(text)!r}"
        raise ShmemError(msg, path=path, pos=pos.shifted(col) if pos else None) from None
    except (UnexpectedEOF, UnexpectedInput):
        raise ShmemError(
            f"expression {shorten(text)!r} is incomplete",
            path=path,
            pos=pos.shifted(len(text)) if pos else None,
        ) from None
    try:
        expr = _build(tree)
    except RecursionError:
        raise ShmemError("expression is nested too deeply", path=path, pos=pos) from None
    except _BuildError as exc:
        raise ShmemError(
            exc.message, path=path, pos=pos.shifted(exc.col) if pos else None
        ) from None
    return expr


class _BuildError(Exception):
    def __init__(self, message: str, col: int) -> None:
        super().__init__(message)
        self.message = message
        self.col = col


def _col(tree: Any) -> int:
    meta = getattr(tree, "meta", None)
    if meta is not None and not getattr(meta, "empty", True):
        return int(meta.start_pos)
    start = getattr(tree, "start_pos", None)
    return int(start) if start is not None else 0


def _parse_int(token: str, col: int) -> int:
    body = token.rstrip("uUlL")
    if body[:2] in ("0x", "0X"):
        value = int(body[2:], 16)
    elif body[:2] in ("0b", "0B"):
        value = int(body[2:], 2)
    elif len(body) > 1 and body[0] == "0":
        if any(c in "89" for c in body):
            raise _BuildError(f"invalid octal literal {shorten(token)!r}", col)
        value = int(body, 8)
    else:
        value = int(body)
    if value >= 2**62:
        raise _BuildError(f"integer literal {shorten(token)!r} is too large", col)
    return value


def _build(tree: Any) -> Expr:
    from lark import Token

    if isinstance(tree, Token):  # a bare INT or NAME at the top level
        if tree.type == "INT":
            return Expr(
                "num", tree.start_pos or 0, value=_parse_int(str(tree), tree.start_pos or 0)
            )
        return Expr("name", tree.start_pos or 0, op=str(tree))
    data = tree.data
    kids = tree.children
    col = _col(tree)
    if data == "number":
        tok = kids[0]
        return Expr("num", tok.start_pos, value=_parse_int(str(tok), tok.start_pos))
    if data == "name":
        return Expr("name", kids[0].start_pos, op=str(kids[0]))
    if data == "member":
        base, member = str(kids[0]), str(kids[1])
        full = f"{base}.{member}"
        if base not in THREAD_MEMBERS or member not in THREAD_MEMBERS[base]:
            raise _BuildError(f"unknown name {full!r}", kids[0].start_pos)
        return Expr("name", kids[0].start_pos, op=full)
    if data == "call":
        fname = str(kids[0])
        args = tuple(_build(k) for k in kids[1:] if k is not None)
        if fname not in FUNCTIONS:
            raise _BuildError(
                f"unknown function {shorten(fname)!r}; available: {', '.join(sorted(FUNCTIONS))}",
                kids[0].start_pos,
            )
        if len(args) != FUNCTIONS[fname]:
            raise _BuildError(
                f"{fname}() takes {FUNCTIONS[fname]} argument(s), got {len(args)}",
                kids[0].start_pos,
            )
        return Expr("call", kids[0].start_pos, op=fname, args=args)
    if data == "unop":
        op = str(kids[0])
        return Expr("unop", kids[0].start_pos, op=op, args=(_build(kids[1]),))
    if data == "binop":
        left, optok, right = kids
        return Expr(
            "binop",
            optok.start_pos,
            op=str(optok),
            args=(_build(left), _build(right)),
        )
    if data == "ternary":
        cond, q, a, b = kids
        return Expr("ternary", q.start_pos, args=(_build(cond), _build(a), _build(b)))
    raise _BuildError(f"unsupported expression form {data!r}", col)


def _check_names(
    expr: Expr, text: str, names: Mapping[str, str], path: str | None, pos: SourcePos | None
) -> None:
    stack = [expr]
    while stack:
        node = stack.pop()
        if node.kind == "name" and node.op not in names:
            import difflib  # only for the message (keeps start-up short)

            hint = difflib.get_close_matches(node.op, list(names), n=1)
            allowed = ", ".join(sorted(names)) if len(names) <= 16 else "see docs/spec-format.md"
            extra = f" (did you mean {hint[0]!r}?)" if hint else f"; known names: {allowed}"
            raise ShmemError(
                f"unknown name {shorten(node.op)!r} in expression {shorten(text)!r}{extra}",
                path=path,
                pos=pos.shifted(node.col) if pos else None,
            )
        stack.extend(node.args)


# --- vectorized evaluation -------------------------------------------------------------


def _arr(v: Value) -> IntArray:
    return np.asarray(v, dtype=np.int64)


def _mask(live: BoolArray | None, cond: IntArray | BoolArray, negate: bool = False) -> BoolArray:
    c: BoolArray = np.asarray(cond) != 0
    if negate:
        c = ~c
    return c if live is None else (live & c)


def _is_scalar(v: Value) -> bool:
    return isinstance(v, int)


def _c_div(a: Value, b: Value, node: Expr, live: BoolArray | None, mod: bool) -> Value:
    if _is_scalar(a) and _is_scalar(b):
        assert isinstance(a, int) and isinstance(b, int)
        if b == 0:
            raise EvalFault(
                "division by zero" if not mod else "modulo by zero", node, np.array(True)
            )
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q
        return a - b * q if mod else q
    if isinstance(b, int) and b > 0 and not _is_scalar(a):
        aa = _arr(a)
        if aa.size == 0 or aa.min() >= 0:
            # a non-negative dividend: C's truncation is floor division (the common, fast case)
            if b & (b - 1) == 0:
                return aa & (b - 1) if mod else aa >> (b.bit_length() - 1)
            quotient: IntArray = aa // b
            return aa - b * quotient if mod else quotient
    aa, bb = _arr(a), _arr(b)
    zero = bb == 0
    if live is not None:
        zero = zero & live
    if np.any(zero):
        raise EvalFault(
            "division by zero" if not mod else "modulo by zero",
            node,
            np.broadcast_to(zero, np.broadcast_shapes(aa.shape, bb.shape, zero.shape)),
        )
    safe: IntArray = np.where(bb == 0, 1, bb).astype(np.int64)
    mag = np.abs(aa) // np.abs(safe)
    quot: IntArray = np.where((aa >= 0) == (safe >= 0), mag, -mag)
    return aa - safe * quot if mod else quot


def _shift(a: Value, b: Value, node: Expr, live: BoolArray | None, left: bool) -> Value:
    bb = _arr(b)
    bad = (bb < 0) | (bb >= 63)
    if live is not None and bad.ndim:
        bad = bad & live
    if np.any(bad):
        raise EvalFault("shift count outside 0..62", node, np.asarray(bad))
    if _is_scalar(a) and _is_scalar(b):
        assert isinstance(a, int) and isinstance(b, int)
        return a << b if left else a >> b
    aa = _arr(a)
    safe = np.clip(bb, 0, 62)
    return np.left_shift(aa, safe) if left else np.right_shift(aa, safe)


_SIMPLE: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def _as_int(v: Any) -> Value:
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return int(v)
    out: IntArray = np.asarray(v).astype(np.int64)
    return out


def _eval(node: Expr, env: Mapping[str, Value], live: BoolArray | None) -> Value:
    kind = node.kind
    if kind == "num":
        return node.value
    if kind == "name":
        try:
            return env[node.op]
        except KeyError:
            raise EvalFault(f"name {node.op!r} has no value here", node, np.array(True)) from None
    if kind == "unop":
        x = _eval(node.args[0], env, live)
        if node.op == "-":
            return -x
        if node.op == "+":
            return x
        if node.op == "~":
            return ~x
        return _as_int(np.equal(x, 0)) if not _is_scalar(x) else int(x == 0)
    if kind == "binop":
        op = node.op
        a = _eval(node.args[0], env, live)
        if op in ("&&", "||"):
            sub = _mask(live, _arr(a), negate=(op == "||")) if not _is_scalar(a) else None
            if _is_scalar(a):
                if (op == "&&" and a == 0) or (op == "||" and a != 0):
                    return int(op == "||")
                b = _eval(node.args[1], env, live)
                return _as_int(np.not_equal(b, 0))
            b = _eval(node.args[1], env, sub)
            if op == "&&":
                return _as_int(np.logical_and(np.not_equal(a, 0), np.not_equal(b, 0)))
            return _as_int(np.logical_or(np.not_equal(a, 0), np.not_equal(b, 0)))
        b = _eval(node.args[1], env, live)
        if op in _SIMPLE:
            result: Value = _SIMPLE[op](a, b)
            return result
        if op in _COMPARE:
            return _as_int(_COMPARE[op](a, b))
        if op in ("/", "%"):
            return _c_div(a, b, node, live, mod=(op == "%"))
        if op in ("<<", ">>"):
            return _shift(a, b, node, live, left=(op == "<<"))
        raise EvalFault(f"unsupported operator {op!r}", node, np.array(True))
    if kind == "ternary":
        c = _eval(node.args[0], env, live)
        if _is_scalar(c):
            return _eval(node.args[1] if c != 0 else node.args[2], env, live)
        ca = _arr(c)
        x = _eval(node.args[1], env, _mask(live, ca))
        y = _eval(node.args[2], env, _mask(live, ca, negate=True))
        return _as_int(np.where(ca != 0, x, y))
    if kind == "call":
        vals = [_eval(a, env, live) for a in node.args]
        if all(isinstance(v, int) for v in vals):
            ints = [int(v) for v in vals]
            return {"min": min, "max": max}[node.op](ints) if node.op != "abs" else abs(ints[0])
        if node.op == "min":
            return _arr(np.minimum(vals[0], vals[1]))
        if node.op == "max":
            return _arr(np.maximum(vals[0], vals[1]))
        if node.op == "abs":
            return _arr(np.abs(vals[0]))
    raise EvalFault(f"cannot evaluate {kind!r}", node, np.array(True))
