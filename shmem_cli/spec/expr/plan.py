"""A typed tree turned once into nested functions: the same steps as
:func:`shmem_cli.spec.expr.evaluate.evaluate` (same children, same order, same live lanes, same
checks), without walking the tree again at every evaluation.

Index expressions are evaluated once per chunk of every access, so the walk's bookkeeping
cost more than the arithmetic on small blocks. Trees deeper than :data:`MAX_DEPTH` (the
nested functions would recurse that deep) keep the iterative walk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, TypeAlias

from .checked import checked
from .evaluate import combine, evaluate, name_value, next_child
from .interval import Range, of_scalar
from .tree import BoolArray, Node, Value

Step: TypeAlias = Callable[[Mapping[str, Value], Any], tuple[Value, Range]]
MAX_DEPTH = 64


class _TooDeep(Exception):
    pass


@lru_cache(maxsize=4096)
def planned(root: Node) -> Callable[[Mapping[str, Value], BoolArray | None], tuple[Value, Range]]:
    """The evaluator of ``root`` (trees are immutable: one plan per tree): the value in
    storage form and a range that holds every element's value (None when not known)."""
    try:
        step = _plan(root, 0)
    except _TooDeep:
        return lambda env, live: (evaluate(root, env, live), None)
    return step


def _plan(node: Node, depth: int) -> Step:
    if depth > MAX_DEPTH:
        raise _TooDeep
    kind = node.kind
    if kind == "name":
        return lambda env, live: name_value(node, env)
    if kind == "num":
        value = checked(node, [], None)  # a constant in its type: never faults
        assert node.ctype is not None
        known = (value, of_scalar(value, node.ctype) if isinstance(value, int) else None)
        return lambda env, live: known
    children = {id(a): _plan(a, depth + 1) for a in node.args}
    if kind == "binop" and node.op not in ("&&", "||"):
        first, second = (children[id(a)] for a in node.args)

        def binary(env: Mapping[str, Value], live: Any) -> tuple[Value, Range]:
            a, ra = first(env, live)
            b, rb = second(env, live)
            return combine(node, [a, b], [ra, rb], env, live)

        return binary
    if kind in ("unop", "cast"):
        only = children[id(node.args[0])]

        def unary(env: Mapping[str, Value], live: Any) -> tuple[Value, Range]:
            a, ra = only(env, live)
            return combine(node, [a], [ra], env, live)

        return unary

    def general(env: Mapping[str, Value], live: Any) -> tuple[Value, Range]:
        # short-circuits, ?: and calls: the walk's own choice of the next child and its lanes
        vals: list[Value] = []
        rngs: list[Range] = []
        while (step := next_child(node, live, vals)) is not None:
            v, r = children[id(step[0])](env, step[1])
            vals.append(v)
            rngs.append(r)
        return combine(node, vals, rngs, env, live)

    return general
