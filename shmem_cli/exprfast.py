"""A small hand-written parser for well-formed C index expressions.

The lark grammar in :mod:`shmem_cli.expr` defines the language; building its
LALR tables and importing lark cost more than the rest of a one-spec run. This
precedence-climbing parser accepts only well-formed expressions and builds the
very same :class:`~shmem_cli.expr.Expr` tree (same nodes, same columns). On
anything it does not accept it returns ``None`` and the caller parses with lark,
which then reports the error. So it can only make parsing faster, never change
what is accepted or what an error says; tests/test_exprfast.py checks it against
lark on random expressions.
"""

from __future__ import annotations

import re

from .expr import FUNCTIONS, THREAD_MEMBERS, Expr, _BuildError, _parse_int

# the grammar's terminals, longest first where one is a prefix of another
_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<int>(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)[uUlL]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|<<|>>|[-+*/%<>&|^~!?:(),.])
    """,
    re.VERBOSE,
)

# binary operators by precedence level, loosest first; all are left-associative
_LEVELS = (
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", "<=", ">", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
)
_LEVEL_OF = {op: level for level, ops in enumerate(_LEVELS) for op in ops}
_UNARY = ("~", "!", "+", "-")


class _Reject(Exception):
    """Not a well-formed expression (lark will say why)."""


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, column) of every token, or _Reject on a character no terminal matches."""
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _Reject
        kind = m.lastgroup or ""
        if kind != "ws":
            if (
                kind == "int"
                and m.end() < len(text)
                and (text[m.end()].isalnum() or text[m.end()] == "_")
            ):
                raise _Reject  # e.g. 0x without digits, 3x: lark splits these differently
            out.append((kind, m.group(), pos))
        pos = m.end()
    out.append(("end", "", len(text)))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def take(self, want: str | None = None) -> tuple[str, str, int]:
        tok = self.toks[self.i]
        if want is not None and (tok[0] != "op" or tok[1] != want):
            raise _Reject
        self.i += 1
        return tok

    def is_op(self, *ops: str) -> bool:
        kind, text, _ = self.toks[self.i]
        return kind == "op" and text in ops

    def ternary(self) -> Expr:
        cond = self.binary(0)
        if not self.is_op("?"):
            return cond
        q = self.take("?")
        a = self.ternary()
        self.take(":")
        b = self.ternary()
        return Expr("ternary", q[2], args=(cond, a, b))

    def binary(self, min_level: int) -> Expr:
        """Operators of ``min_level`` or tighter; a tighter operand binds first."""
        left = self.unary()
        while True:
            kind, op, col = self.peek()
            level = _LEVEL_OF.get(op, -1) if kind == "op" else -1
            if level < min_level:
                return left
            self.take()
            right = self.binary(level + 1)  # left-associative: the right operand binds tighter
            left = Expr("binop", col, op=op, args=(left, right))

    def unary(self) -> Expr:
        if self.is_op(*_UNARY):
            _, op, col = self.take()
            return Expr("unop", col, op=op, args=(self.unary(),))
        return self.atom()

    def atom(self) -> Expr:
        kind, text, col = self.take()
        if kind == "int":
            return Expr("num", col, value=_parse_int(text, col))
        if kind == "name":
            if self.is_op("."):
                self.take(".")
                member_kind, member, _ = self.take()
                if member_kind != "name" or member not in THREAD_MEMBERS.get(text, ()):
                    raise _Reject
                return Expr("name", col, op=f"{text}.{member}")
            if self.is_op("("):
                self.take("(")
                args: list[Expr] = []
                if not self.is_op(")"):
                    args.append(self.ternary())
                    while self.is_op(","):
                        self.take(",")
                        args.append(self.ternary())
                self.take(")")
                if FUNCTIONS.get(text) != len(args):
                    raise _Reject
                return Expr("call", col, op=text, args=tuple(args))
            return Expr("name", col, op=text)
        if kind == "op" and text == "(":
            inner = self.ternary()
            self.take(")")
            return inner
        raise _Reject


def parse_well_formed(text: str) -> Expr | None:
    """The tree lark would build for ``text``, or None if ``text`` is not well formed."""
    try:
        parser = _Parser(text)
        expr = parser.ternary()
        if parser.peek()[0] != "end":
            return None
        return expr
    except (_Reject, _BuildError, RecursionError):
        return None
