"""Names and static C types: every node gets the type C gives it, once, at compile time.

Integer promotion changes nothing here (every type is at least ``int``); binary
arithmetic, bitwise operators, comparisons, ``?:``, ``min`` and ``max`` use the usual
arithmetic conversions; a shift has the type of its left operand; comparisons,
``!``, ``&&`` and ``||`` give ``int``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from .ctype import CType, common
from .tree import Node, SyntaxFault

_COMPARISONS = frozenset(("<", "<=", ">", ">=", "==", "!="))


def _typed(node: Node, args: tuple[Node, ...], names: Mapping[str, CType] | None) -> Node:
    kind, op = node.kind, node.op
    types = [a.ctype for a in args]
    assert all(t is not None for t in types)
    ts: list[CType] = [t for t in types if t is not None]
    if kind == "num" or kind == "cast":
        return replace(node, args=args)
    if kind == "name":
        ctype = CType.INT if names is None else names[op]
        return replace(node, ctype=ctype)
    if kind == "unop":
        ctype = CType.INT if op == "!" else ts[0]
        return replace(node, args=args, ctype=ctype, optype=ts[0])
    if kind == "ternary":
        ctype = common(ts[1], ts[2])
        return replace(node, args=args, ctype=ctype, optype=ctype)
    if kind == "call":
        if op == "abs":
            if not ts[0].signed:
                raise SyntaxFault(
                    f"abs() of an unsigned value (its type is {ts[0].spelling}) does not "
                    "compile in CUDA; cast the argument, e.g. abs((int)(x))",
                    node.col,
                )
            return replace(node, args=args, ctype=ts[0], optype=ts[0])
        ctype = common(ts[0], ts[1])
        return replace(node, args=args, ctype=ctype, optype=ctype)
    # binop
    if op in ("&&", "||"):
        return replace(node, args=args, ctype=CType.INT)
    if op in ("<<", ">>"):
        return replace(node, args=args, ctype=ts[0], optype=ts[0])
    optype = common(ts[0], ts[1])
    ctype = CType.INT if op in _COMPARISONS else optype
    return replace(node, args=args, ctype=ctype, optype=optype)


def check(root: Node, names: Mapping[str, CType] | None, text: str = "") -> Node:
    """``root`` with every node typed. SyntaxFault for an unknown name (``names`` given)
    or an operation C rejects. Iterative: trees may be thousands of nodes deep."""
    if names is not None:
        _check_names(root, names, text)
    done: dict[int, Node] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if not expanded and node.args:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args)
            continue
        done[id(node)] = _typed(node, tuple(done.pop(id(a)) for a in node.args), names)
    return done[id(root)]


def _check_names(root: Node, names: Mapping[str, CType], text: str) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind == "name" and node.op not in names:
            import difflib  # only for the message (keeps start-up short)

            hint = difflib.get_close_matches(node.op, list(names), n=1)
            allowed = ", ".join(sorted(names)) if len(names) <= 16 else "see docs/spec-format.md"
            extra = f" (did you mean {hint[0]!r}?)" if hint else f"; known names: {allowed}"
            short = text if len(text) <= 60 else text[:57] + "..."
            raise SyntaxFault(
                f"unknown name {node.op[:40]!r} in expression {short!r}{extra}", node.col
            )
        stack.extend(node.args)
