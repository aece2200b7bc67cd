"""The two parsers behind ``compile_expr``: ``kind="fast"`` against ``kind="lark"``.

Whatever the fast parser accepts, lark must accept too, with the same tree
(node kinds, operators, values, columns and C types); what one refuses the other
refuses; and deep expressions parse without recursion.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.spec.expr import CType, compile_expr

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
UNARY = ["-", "+", "~", "!", "(int)", "(unsigned long long)"]
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
    "0xFFFFFFFF",
    "4000000000",
    "7llu",
    "(unsigned)x",
    "(long long)k",
]
SPACE = st.sampled_from(["", " ", "  ", "\t"])


NAMES = {"x": CType.INT, "k": CType.INT, "threadIdx.x": CType.UINT}
NAMES |= {"blockDim.y": CType.UINT, "tid": CType.UINT}


def outcome(text: str, kind: str) -> tuple[object, ...]:
    """The tree's shape and type, or ('error',)."""
    try:
        e = compile_expr(text, NAMES, kind=kind)  # type: ignore[arg-type]
    except ShmemError:
        return ("error",)
    return (e.root.shape(), e.ctype)


@st.composite
def well_formed(draw: st.DrawFn, depth: int = 4) -> str:
    """Expressions over every operator, with random spacing and few parentheses, so that
    precedence and associativity decide the tree."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(LEAVES))
    sp = draw(SPACE)
    form = draw(st.integers(0, 6))
    if form <= 2:
        left, right = draw(well_formed(depth - 1)), draw(well_formed(depth - 1))
        return f"{left}{sp}{draw(st.sampled_from(BINARY))}{sp}{right}"
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


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(well_formed())
def test_well_formed_expressions_give_lark_tree(text: str) -> None:
    fast = outcome(text, "fast")
    assert fast == outcome(text, "lark"), text
    if "abs" not in text:  # abs() of an unsigned value is a (well-formed) error
        assert fast != ("error",), text


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=9).map("".join))
def test_token_soup_is_accepted_only_as_lark_accepts(text: str) -> None:
    assert outcome(text, "fast") == outcome(text, "lark"), text


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
        "18446744073709551616u",
        "1lL",
        "1uu",
        "(short)x",
        "(unsigned unsigned)x",
        "(int)",
        "abs(threadIdx.x)",
    ],
)
def test_malformed_text_is_refused_by_both(text: str) -> None:
    for kind in ("auto", "fast", "lark"):
        with pytest.raises(ShmemError):
            compile_expr(text, NAMES, kind=kind)  # type: ignore[arg-type]


def test_columns_and_precedence_by_hand() -> None:
    e = compile_expr("a - b - c * d", kind="fast").root
    assert e.shape() == (
        ("binop", 6, "-", 0, 2),
        ("binop", 2, "-", 0, 2),
        ("name", 0, "a", 0, 0),
        ("name", 4, "b", 0, 0),
        ("binop", 10, "*", 0, 2),
        ("name", 8, "c", 0, 0),
        ("name", 12, "d", 0, 0),
    )
    t = compile_expr("p ? q : r ? 1 : 2", kind="fast").root
    assert t.kind == "ternary" and t.col == 2 and t.args[2].kind == "ternary"
    c = compile_expr("(unsigned long)-x", kind="fast").root
    assert (c.kind, c.col, c.ctype, c.args[0].op) == ("cast", 0, CType.ULLONG, "-")


# issue 13: each of these raised RecursionError within the 4096-character limit
DEEP = {
    "a chain of 2,000 additions": "l" + "+0" * 2000,
    "2,000 unary minuses": "-" * 2000 + "l",
    "2,000 nested parentheses": "(" * 2000 + "l" + ")" * 2000,
    "580 nested ?: in the else branch": "l>40?l:" * 580 + "l",
    "580 nested ?: in the then branch": "l<40?" * 580 + "l" + ":0" * 580,
}


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_deep_expressions_parse_and_evaluate_without_recursion(text: str) -> None:
    import numpy as np

    assert len(text) <= 4096
    names = {"l": CType.INT}
    fast, slow = (compile_expr(text, names, kind=k) for k in ("fast", "lark"))
    assert fast.root.shape() == slow.root.shape()
    lane = np.arange(32, dtype=np.int64)
    got = np.broadcast_to(fast.evaluate({"l": lane}), (32,))
    assert list(got) == list(lane)
