"""The fast parser: operator precedence by two explicit stacks (no recursion).

It builds the same :class:`~shmem_cli.spec.expr.tree.Node` tree as the lark grammar
(:mod:`shmem_cli.spec.expr.grammar`) for every well-formed expression, and never
recurses, so a chain of 2,000 operators or 1,000 nested parentheses parses in
linear time. On text that is not well formed it raises :class:`Reject` with the
column where it stopped; the caller may ask lark for a fuller message.
"""

from __future__ import annotations

import re

from . import tree
from .ctype import CAST_WORDS
from .tree import Node

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<int>(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)[uUlL]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|<<|>>|[-+*/%<>&|^~!?:(),.])
    """,
    re.VERBOSE,
)
_LEVEL_OF = {op: level for level, ops in enumerate(tree.BINARY_LEVELS) for op in ops}


class Reject(Exception):
    """Not a well-formed expression; ``col`` is where parsing stopped."""

    def __init__(self, col: int) -> None:
        super().__init__(col)
        self.col = col


Token = tuple[str, str, int]  # kind, text, column


def tokens(text: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise Reject(pos)
        kind = m.lastgroup or ""
        if kind != "ws":
            after = text[m.end() : m.end() + 1]
            if kind == "int" and (after.isalnum() or after == "_"):
                raise Reject(m.end())  # e.g. 0x without digits, 3x
            out.append((kind, m.group(), pos))
        pos = m.end()
    out.append(("end", "", len(text)))
    return out


def _cast_words(toks: list[Token], i: int) -> list[str] | None:
    """The type words of a cast whose ``(`` is toks[i], or None when it is no cast."""
    words: list[str] = []
    j = i + 1
    while toks[j][0] == "name" and toks[j][1] in CAST_WORDS:
        words.append(toks[j][1])
        j += 1
    if words and toks[j][:2] == ("op", ")"):
        return words
    return None


class _Stacks:
    """Operands and pending operators. An operator entry is a list:
    [tag, op, col, extra] with tag bin, un, cast, (, call, ? or :."""

    def __init__(self) -> None:
        self.operands: list[Node] = []
        self.ops: list[list[object]] = []

    def reduce_top(self) -> None:
        tag, op, col, extra = self.ops.pop()
        assert isinstance(op, str) and isinstance(col, int)
        out = self.operands
        if tag == "un":
            out.append(Node("unop", col, op=op, args=(out.pop(),)))
        elif tag == "cast":
            assert isinstance(extra, list)
            out.append(tree.cast(extra, col, out.pop()))
        elif tag == "bin":
            right = out.pop()
            out.append(Node("binop", col, op=op, args=(out.pop(), right)))
        else:  # ":" (a complete ?:)
            no, yes = out.pop(), out.pop()
            out.append(Node("ternary", col, args=(out.pop(), yes, no)))

    def reduce_while(self, tags: tuple[str, ...], min_level: int = -1) -> None:
        while self.ops and self.ops[-1][0] in tags:
            top = self.ops[-1]
            if top[0] == "bin" and isinstance(top[3], int) and top[3] < min_level:
                return
            self.reduce_top()


def parse(text: str) -> Node:
    """The tree of a well-formed expression; Reject or SyntaxFault otherwise."""
    toks = tokens(text)
    st = _Stacks()
    i = 0
    operand = True  # an operand comes next (else an operator)
    while True:
        kind, tok, col = toks[i]
        i += 1
        if operand:
            if kind == "int":
                st.operands.append(tree.number(tok, col))
                operand = False
            elif kind == "name":
                if toks[i][:2] == ("op", "."):
                    if toks[i + 1][0] != "name":
                        raise Reject(toks[i + 1][2])
                    st.operands.append(tree.member(tok, toks[i + 1][1], col))
                    i += 2
                    operand = False
                elif toks[i][:2] == ("op", "("):
                    st.ops.append(["call", tok, col, 0])
                    i += 1
                    if toks[i][:2] == ("op", ")"):  # no arguments
                        st.ops.pop()
                        st.operands.append(tree.call(tok, col, ()))
                        i += 1
                        operand = False
                else:
                    st.operands.append(Node("name", col, op=tok))
                    operand = False
            elif kind == "op" and tok in tree.UNARY_OPS:
                st.ops.append(["un", tok, col, None])
            elif kind == "op" and tok == "(":
                words = _cast_words(toks, i - 1)
                if words is None:
                    st.ops.append(["(", tok, col, None])
                else:
                    st.ops.append(["cast", "", col, words])
                    i += len(words) + 1
            else:
                raise Reject(col)
            continue
        # an operator (or the end) comes next
        if kind == "op" and tok in _LEVEL_OF:
            level = _LEVEL_OF[tok]
            st.reduce_while(("un", "cast", "bin"), level)
            st.ops.append(["bin", tok, col, level])
            operand = True
        elif kind == "op" and tok == "?":
            st.reduce_while(("un", "cast", "bin"))
            st.ops.append(["?", tok, col, None])
            operand = True
        elif kind == "op" and tok == ":":
            st.reduce_while(("un", "cast", "bin", ":"))
            if not st.ops or st.ops[-1][0] != "?":
                raise Reject(col)
            st.ops[-1][0] = ":"
            operand = True
        elif kind == "op" and tok in "),":
            st.reduce_while(("un", "cast", "bin", ":"))
            if not st.ops or st.ops[-1][0] not in ("(", "call"):
                raise Reject(col)
            top = st.ops[-1]
            if top[0] == "(":
                if tok == ",":
                    raise Reject(col)
                st.ops.pop()
            else:
                assert isinstance(top[3], int)
                top[3] += 1
                if tok == ")":
                    st.ops.pop()
                    count = top[3]
                    args = tuple(st.operands[len(st.operands) - count :])
                    del st.operands[len(st.operands) - count :]
                    assert isinstance(top[1], str) and isinstance(top[2], int)
                    st.operands.append(tree.call(top[1], top[2], args))
                else:
                    operand = True
        elif kind == "end":
            st.reduce_while(("un", "cast", "bin", ":"))
            if st.ops:
                raise Reject(col)
            assert len(st.operands) == 1
            return st.operands[0]
        else:
            raise Reject(col)
