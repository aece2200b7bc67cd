"""C index expressions with CUDA's integer semantics: one entry, :func:`compile_expr`.

An expression such as ``threadIdx.y + 8*k`` is parsed once into a typed tree and
then evaluated over NumPy arrays that cover every thread and loop iteration at once
(:meth:`Expr.evaluate`). Types follow C: see docs/spec-format.md and
:mod:`shmem_cli.spec.expr.ctype`. User text is never passed to ``eval``.

Two parsers give the same trees (numpy's ``kind=`` style): ``"fast"`` (a hand-written
operator-precedence parser, no import of lark), ``"lark"`` (the grammar, the
definition of the language) and ``"auto"`` (fast, then lark to explain an error).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from functools import lru_cache
from typing import Literal

from ...plumbing.errors import ShmemError, SourcePos, shorten
from ...plumbing.frozen import frozen
from . import evaluate as _evaluate
from . import fast, grammar, typecheck
from .ctype import CType
from .plan import planned
from .tree import MAX_LENGTH, BoolArray, EvalFault, Node, SyntaxFault, Value

__all__ = ["MAX_LENGTH", "CType", "EvalFault", "Expr", "Node", "Value", "compile_expr"]

Kind = Literal["auto", "fast", "lark"]


@frozen
class Expr:
    """A compiled expression: the typed tree of ``text``."""

    text: str
    root: Node = field(compare=False, repr=False)

    @property
    def ctype(self) -> CType:
        assert self.root.ctype is not None
        return self.root.ctype

    def evaluate(self, env: Mapping[str, Value], live: BoolArray | None = None) -> Value:
        """The value over ``env`` (arrays broadcast together; names hold their C values).

        ``live`` masks the elements whose faults matter. An ``unsigned long long`` result
        of 2^63 or more (only possible through wraparound) comes back as the largest
        int64, which every caller treats as out of range. Raises :class:`EvalFault`.
        """
        return self.evaluate_with_range(env, live)[0]

    def evaluate_with_range(
        self, env: Mapping[str, Value], live: BoolArray | None = None
    ) -> tuple[Value, tuple[int, int] | None]:
        """:meth:`evaluate`, and a range ``(lo, hi)`` that holds every element of the value
        (live or not), or None where the evaluation could not tell."""
        import numpy as np

        value, known = planned(self.root)(env, live)
        if self.ctype is CType.ULLONG:  # (a known range is below 2^63: nothing to change)
            if isinstance(value, int):
                return (value if value >= 0 else (1 << 63) - 1), known
            return np.where(value < 0, np.int64((1 << 63) - 1), value), known
        return value, known

    def constant(self, params: Mapping[str, int]) -> int:
        """The exact C value of an expression over ``params`` only. Raises EvalFault."""
        import numpy as np

        value = _evaluate.true_value(planned(self.root)(params, None)[0], self.ctype)
        if not isinstance(value, int):
            return int(np.asarray(value).reshape(-1)[0])
        return value


def compile_expr(
    text: str | int | bool,
    names: Mapping[str, CType] | None = None,
    *,
    kind: Kind = "auto",
    path: str | None = None,
    pos: SourcePos | None = None,
) -> Expr:
    """Parse and type-check a C expression; ShmemError at ``path``/``pos`` on any fault.

    ``names`` maps every allowed bare name to its C type (None: any name, typed
    ``int``). ``pos`` is where the expression's first character sits in the file; an
    integer (a YAML number) is a decimal literal.
    """
    if isinstance(text, bool):
        text = int(text)
    if isinstance(text, int):
        return _from_int(text, path, pos)
    problem = None
    if not isinstance(text, str):
        problem = f"expected an expression, found {shorten(text)}"
    elif len(text) > MAX_LENGTH:
        problem = f"expression is {len(text)} characters long; the limit is {MAX_LENGTH}"
    elif not text.strip():
        problem = "empty expression"
    if problem is not None:
        raise ShmemError(problem, path=path, pos=pos)
    assert isinstance(text, str)
    try:
        return _compiled(text, names, kind)
    except SyntaxFault as exc:
        message = exc.message
        if "in expression" not in message:
            message += f" (in expression {shorten(text)!r})"
        raise ShmemError(message, path=path, pos=pos.shifted(exc.col) if pos else None) from None


def _compiled(text: str, names: Mapping[str, CType] | None, kind: Kind) -> Expr:
    """The typed expression; trees are immutable, so a text seen before with the same types
    for the names it uses (specs repeat ``threadIdx.x``, ``k``, ``N``) is not parsed again.
    Faults are raised afresh each time (their messages may name every known name)."""
    root, used = _parsed(text, kind)
    if names is None:
        types = None
    elif all(n in names for n in used):
        types = tuple(names[n] for n in used)
    else:
        return Expr(text, typecheck.check(root, names, text))  # raises: an unknown name
    key = (text, kind, types)
    expr = _TYPED.get(key)
    if expr is None:
        if len(_TYPED) >= _CACHE_SIZE:
            _TYPED.clear()
        expr = _TYPED[key] = Expr(text, typecheck.check(root, names, text))
    return expr


_CACHE_SIZE = 4096
_TYPED: dict[tuple[str, Kind, tuple[CType, ...] | None], Expr] = {}


@lru_cache(maxsize=_CACHE_SIZE)
def _parsed(text: str, kind: Kind) -> tuple[Node, tuple[str, ...]]:
    """The untyped tree of ``text`` and the names it uses, in order of first use."""
    root = _parse(text, kind)
    used: dict[str, None] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind == "name":
            used.setdefault(node.op)
        stack.extend(node.args)
    return root, tuple(used)


def _parse(text: str, kind: Kind) -> Node:
    if kind == "lark":
        return grammar.parse(text)
    try:
        return fast.parse(text)
    except fast.Reject as exc:
        if kind == "fast":
            bad = text[exc.col : exc.col + 10] or "the end"
            raise SyntaxFault(
                f"unexpected {bad!r} in expression {shorten(text)!r}", exc.col
            ) from None
    return grammar.parse(text)  # explains the error (or, in theory, parses what fast missed)


def _from_int(value: int, path: str | None, pos: SourcePos | None) -> Expr:
    """A YAML integer: typed as a decimal literal; a negative one as ``-literal``."""
    ctype = next((t for t in (CType.INT, CType.LLONG) if t.fits(value)), None)
    if ctype is None:
        raise ShmemError(f"integer {shorten(value)} does not fit in long long", path=path, pos=pos)
    return Expr(str(value), Node("num", 0, value=value, ctype=ctype))
