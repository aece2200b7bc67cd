"""The expression tree both parsers build, and the faults it can raise.

A :class:`Node` is one operation with its column in the source text; after type
checking each node also carries its static C type (``ctype``) and, for binary
operators, the type the operation is done in (``optype``, after the usual arithmetic
conversions). Trees can be thousands of nodes deep (``a+0+0+...``), so no code walks
them recursively.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from ...plumbing.frozen import frozen
from .ctype import CType, cast_type, literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

IntArray: TypeAlias = "npt.NDArray[np.int64]"
BoolArray: TypeAlias = "npt.NDArray[np.bool_]"
Value: TypeAlias = "IntArray | int"

MAX_LENGTH = 4096  # characters in one expression
FUNCTIONS = {"min": 2, "max": 2, "abs": 1}
THREAD_MEMBERS = {"threadIdx": ("x", "y", "z"), "blockDim": ("x", "y", "z")}
# binary operators by precedence level, loosest first; all are left-associative
BINARY_LEVELS = (
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
UNARY_OPS = ("~", "!", "+", "-")


@frozen(eq=False)
class Node:
    """One node: ``kind`` is num, name, unop, cast, binop, ternary or call.

    ``col`` is the 0-based offset of the node's operator (or first character) in the text.
    """

    kind: str
    col: int
    op: str = ""
    value: int = 0
    args: tuple[Node, ...] = ()
    ctype: CType | None = None
    optype: CType | None = None

    def shape(self) -> tuple[object, ...]:
        """Everything of the tree but the types, flattened (for comparing two parses)."""
        out: list[object] = []
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            out.append((node.kind, node.col, node.op, node.value, len(node.args)))
            stack.extend(reversed(node.args))
        return tuple(out)


class SyntaxFault(Exception):
    """A problem with the text at 0-based column ``col`` (the caller locates it)."""

    def __init__(self, message: str, col: int) -> None:
        super().__init__(message)
        self.message = message
        self.col = col


class EvalFault(Exception):
    """Raised during evaluation; ``where`` marks the elements (threads, iterations) at fault."""

    def __init__(self, message: str, node: Node, where: BoolArray | bool) -> None:
        super().__init__(message)
        self.message = message
        self.node = node
        self.where = where


# --- node constructors shared by both parsers (same checks, same messages) ---------------


def number(token: str, col: int) -> Node:
    """A literal with its C type; SyntaxFault on a bad suffix, digit or size."""
    try:
        value, ctype = literal(token)
    except ValueError as exc:
        raise SyntaxFault(str(exc), col) from None
    return Node("num", col, value=value, ctype=ctype)


def member(base: str, name: str, col: int) -> Node:
    """``threadIdx.x`` and the like: the only names with a dot."""
    if name not in THREAD_MEMBERS.get(base, ()):
        valid = ", ".join(f"{b}.{m}" for b, ms in THREAD_MEMBERS.items() for m in ms)
        raise SyntaxFault(f"unknown name {base + '.' + name!r}; valid: {valid}", col)
    return Node("name", col, op=f"{base}.{name}")


def call(name: str, col: int, args: tuple[Node, ...]) -> Node:
    if name not in FUNCTIONS:
        available = ", ".join(sorted(FUNCTIONS))
        raise SyntaxFault(f"unknown function {name[:40]!r}; available: {available}", col)
    if len(args) != FUNCTIONS[name]:
        raise SyntaxFault(f"{name}() takes {FUNCTIONS[name]} argument(s), got {len(args)}", col)
    return Node("call", col, op=name, args=args)


def cast(words: list[str], col: int, arg: Node) -> Node:
    try:
        ctype = cast_type(words)
    except ValueError as exc:
        raise SyntaxFault(str(exc), col) from None
    return Node("cast", col, op=ctype.spelling, args=(arg,), ctype=ctype)
