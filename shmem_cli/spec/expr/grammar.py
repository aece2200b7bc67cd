"""The reference parser: the expression language as a lark LALR grammar.

The grammar is the definition of the language; :mod:`shmem_cli.spec.expr.fast` must
build the same trees. Lark explains syntax errors (the fast parser only says where
it stopped). Trees are built by lark's non-recursive transformer, so operator
chains thousands of nodes deep do not exhaust Python's stack.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from . import tree
from .ctype import CAST_WORDS
from .tree import Node, SyntaxFault

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
      | LPAR TYPEWORD+ ")" unary           -> cast
?atom: INT                                 -> number
     | NAME "." NAME                       -> member
     | NAME "(" [ternary ("," ternary)*] ")" -> call
     | NAME                                -> name
     | "(" ternary ")"

LPAR: "("
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
TYPEWORD.2: /(WORDS)(?![A-Za-z0-9_])/
NAME: /[A-Za-z_][A-Za-z0-9_]*/
%ignore /[ \t\r\n]+/
""".replace("WORDS", "|".join(sorted(CAST_WORDS, key=lambda w: (-len(w), w))))


@lru_cache(maxsize=1)
def _parser() -> Any:
    from lark import Lark

    return Lark(GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def _builder() -> Any:
    from lark import Transformer_NonRecursive, v_args

    @v_args(inline=False)
    class Build(Transformer_NonRecursive):  # type: ignore[type-arg]
        def number(self, kids: list[Any]) -> Node:
            return tree.number(str(kids[0]), kids[0].start_pos)

        def name(self, kids: list[Any]) -> Node:
            return Node("name", kids[0].start_pos, op=str(kids[0]))

        def member(self, kids: list[Any]) -> Node:
            return tree.member(str(kids[0]), str(kids[1]), kids[0].start_pos)

        def call(self, kids: list[Any]) -> Node:
            return tree.call(str(kids[0]), kids[0].start_pos, tuple(kids[1:]))

        def unop(self, kids: list[Any]) -> Node:
            return Node("unop", kids[0].start_pos, op=str(kids[0]), args=(_node(kids[1]),))

        def cast(self, kids: list[Any]) -> Node:
            words = [str(k) for k in kids[1:-1]]
            return tree.cast(words, kids[0].start_pos, _node(kids[-1]))

        def binop(self, kids: list[Any]) -> Node:
            left, op, right = kids
            return Node("binop", op.start_pos, op=str(op), args=(_node(left), _node(right)))

        def ternary(self, kids: list[Any]) -> Node:
            cond, q, yes, no = kids
            return Node("ternary", q.start_pos, args=(_node(cond), _node(yes), _node(no)))

    return Build()


def _node(item: Any) -> Node:
    """A child: a built node, or a bare INT/NAME token that no rule wrapped."""
    if isinstance(item, Node):
        return item
    if item.type == "INT":
        return tree.number(str(item), item.start_pos)
    return Node("name", item.start_pos, op=str(item))


def parse(text: str) -> Node:
    """The tree of ``text``; SyntaxFault with a column and a message otherwise."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

    short = text if len(text) <= 60 else text[:57] + "..."
    try:
        parsed = _parser().parse(text)
    except UnexpectedCharacters as exc:
        col = exc.column - 1
        raise SyntaxFault(
            f"unexpected character {text[col : col + 1]!r} in expression {short!r}", col
        ) from None
    except UnexpectedToken as exc:
        if exc.token.type == "$END":
            raise SyntaxFault(f"expression {short!r} ends too early", len(text)) from None
        col = exc.column - 1 if isinstance(exc.column, int) and exc.column > 0 else 0
        token = str(exc.token)[:40]
        raise SyntaxFault(f"unexpected {token!r} in expression {short!r}", col) from None
    except UnexpectedInput:
        raise SyntaxFault(f"expression {short!r} is incomplete", len(text)) from None
    try:
        return _node(_builder().transform(parsed))
    except VisitError as exc:
        if isinstance(exc.orig_exc, SyntaxFault):
            raise exc.orig_exc from None
        raise
