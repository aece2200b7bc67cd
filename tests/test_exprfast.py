"""The hand-written parser (shmem_cli/exprfast.py) against the lark grammar.

Whatever the fast parser accepts, lark must accept too, with the same tree
(node kinds, operators, values and columns); and it must accept ordinary
well-formed expressions, or the fast path would never be taken.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shmem_cli.errors import ShmemError
from shmem_cli.expr import Expr, _parse_with_lark, parse
from shmem_cli.exprfast import parse_well_formed

BINARY = [
    "||",
    "&&",
    "|",
    "^",
    "&",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "<<",
    ">>",
    "+",
    "-",
    "*",
    "/",
    "%",
]
UNARY = ["-", "+", "~", "!"]
LEAVES = [
    "x",
    "k",
    "threadIdx.x",
    "blockDim.y",
    "tid",
    "0",
    "7",
    "0x1F",
    "0b101",
    "017",
    "12u",
    "3UL",
]
SPACE = st.sampled_from(["", " ", "  ", "\t"])


def lark(text: str) -> Expr | None:
    try:
        return _parse_with_lark(text, None, None)
    except ShmemError:
        return None


@st.composite
def well_formed(draw: st.DrawFn, depth: int = 4) -> str:
    """Expressions over every operator, with random spacing and few parentheses, so that
    precedence and associativity decide the tree."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(LEAVES))
    sp = draw(SPACE)
    form = draw(st.integers(0, 6))
    if form <= 2:
        return f"{draw(well_formed(depth - 1))}{sp}{draw(st.sampled_from(BINARY))}{sp}{draw(well_formed(depth - 1))}"
    if form == 3:
        return f"{draw(st.sampled_from(UNARY))}{sp}{draw(well_formed(depth - 1))}"
    if form == 4:
        parts = [draw(well_formed(depth - 1)) for _ in range(3)]
        return f"{parts[0]}{sp}?{sp}{parts[1]}{sp}:{sp}{parts[2]}"
    if form == 5:
        fn = draw(st.sampled_from(["min", "max", "abs"]))
        args = [draw(well_formed(depth - 1)) for _ in range(1 if fn == "abs" else 2)]
        return f"{fn}{sp}({sp}{f',{sp}'.join(args)}{sp})"
    return f"({sp}{draw(well_formed(depth - 1))}{sp})"


TOKENS = [
    *BINARY,
    *UNARY,
    "?",
    ":",
    "(",
    ")",
    ",",
    ".",
    "x",
    "threadIdx",
    "y",
    "min",
    "abs",
    "0",
    "08",
    "0x",
    "9",
    "3x",
    "=",
    "@",
    " ",
]


@settings(max_examples=400, deadline=None)
@given(well_formed())
def test_well_formed_expressions_give_lark_tree(text: str) -> None:
    fast = parse_well_formed(text)
    assert fast is not None, text
    assert fast == lark(text), text


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=9).map("".join))
def test_token_soup_is_accepted_only_as_lark_accepts(text: str) -> None:
    fast = parse_well_formed(text)
    if fast is not None:
        assert fast == lark(text), text


@pytest.mark.parametrize(
    "text",
    [
        "3x",
        "0x",
        "08",
        "a.b",
        "threadIdx.w",
        "min(1)",
        "abs(1, 2)",
        "foo(1)",
        "(a",
        "a)",
        "a ? b",
        "a b",
        "a = b",
        "!= b",
        "a <<= 2",
        "1.5",
        "a ||| b",
        "99999999999999999999",
    ],
)
def test_malformed_text_is_left_to_lark(text: str) -> None:
    assert parse_well_formed(text) is None
    with pytest.raises(ShmemError):
        parse(text)


def test_columns_and_precedence_by_hand() -> None:
    e = parse_well_formed("a - b - c * d")
    assert e == Expr(
        "binop",
        6,
        op="-",
        args=(
            Expr("binop", 2, op="-", args=(Expr("name", 0, op="a"), Expr("name", 4, op="b"))),
            Expr("binop", 10, op="*", args=(Expr("name", 8, op="c"), Expr("name", 12, op="d"))),
        ),
    )
    t = parse_well_formed("p ? q : r ? 1 : 2")
    assert t is not None and t.kind == "ternary" and t.col == 2 and t.args[2].kind == "ternary"
