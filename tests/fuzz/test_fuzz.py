"""Fuzz targets for the spec loader and the expression parser (``make fuzz``).

Every input must end in a result or in shmem's own error naming the file, with a
bounded message; any other exception is a bug. ``pytest tests/fuzz`` runs each
target for ``--fuzz-seconds`` (1 s by default).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shmem_cli.plumbing.errors import ShmemError, SourcePos
from shmem_cli.spec.compile import THREAD_NAMES
from shmem_cli.spec.expr import CType, compile_expr

from .harness import analyze_bytes, check_error, remember, run_for

FUZZ = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
EXAMPLES = sorted((Path(__file__).parents[2] / "access_specs").glob("*.yaml"))
SEEDS = [p.read_bytes() for p in EXAMPLES]

# --- expressions -------------------------------------------------------------------------

C_TOKENS = [
    *"()+-*/%&|^!~?:,<>.",
    "<<",
    ">>",
    "&&",
    "||",
    "==",
    "!=",
    "<=",
    ">=",
    "lane",
    "tid",
    "warp",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx",
    "blockDim.z",
    "blockDim.w",
    "x",
    "i",
    "P",
    "N",
    "min",
    "max",
    "abs",
    "min(",
    "abs(",
    "__import__",
    "os",
    "'os'",
    '"',
    "\\",
    "0",
    "1",
    "7",
    "32",
    "-1",
    "0x1F",
    "0X",
    "0b101",
    "0b2",
    "077",
    "08",
    "1u",
    "1ULL",
    "1e5",
    "1.5",
    "9223372036854775807",
    "4611686018427387904",
    "99999999999999999999999",
    "1 << 62",
    "1 << 63",
    " ",
    "\t",
    "\n",
    "é",
    "∑",
    "\x00",
    "\u2028",
    ";",
    "=",
    "[",
    "]",
    "{",
    "}",
    "#",
    "@",
    "$",
    "`",
]
NAMES = {**THREAD_NAMES, "P": CType.INT, "N": CType.INT, "i": CType.INT}
EXPR_SLOTS: list[tuple[Any, ...]] = [
    ("accesses", 0, "index", 0),
    ("accesses", 0, "index", 1),
    ("accesses", 0, "when"),
    ("arrays", "a", "shape", 0),
    ("arrays", "a", "pad"),
    ("arrays", "a", "offset"),
    ("block", 0),
]
EXPR_BASE: dict[str, Any] = {
    "block": [64, 2],
    "params": {"P": 3, "N": 64},
    "arrays": {"a": {"dtype": "float32", "shape": [64, 8], "pad": 1}},
    "accesses": [
        {"array": "a", "index": ["lane", "i"], "loop": {"i": "0..3"}, "when": "tid < 100"}
    ],
}

expression_text = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(C_TOKENS), max_size=30).map("".join),
    st.lists(st.sampled_from(C_TOKENS), max_size=8).map(" ".join),
)


def put(doc: Any, where: tuple[Any, ...], value: Any) -> None:
    for key in where[:-1]:
        doc = doc[key]
    doc[where[-1]] = value


@FUZZ
@given(expression_text, st.sampled_from(EXPR_SLOTS))
def expression_target(text: str, slot: tuple[Any, ...]) -> None:
    remember((text, slot))
    try:
        compile_expr(text, NAMES, path="e.yaml", pos=SourcePos(1, 1))
    except ShmemError as err:
        check_error(err, "e.yaml")
        assert err.pos is not None and err.pos.line == 1
        assert 1 <= err.pos.column <= len(text) + 1, (err.pos, len(text))
    doc = copy.deepcopy(EXPR_BASE)
    put(doc, slot, text)
    analyze_bytes(yaml.safe_dump(doc, allow_unicode=True).encode(), "e.yaml")


# --- YAML text ---------------------------------------------------------------------------

YAML_TOKENS = [
    ":",
    ": ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "<<: *a\n",
    "? ",
    "|\n",
    ">\n",
    "!!python/object/apply:os.system ['true'] ",
    "!!python/name:os.system ",
    "!!binary ",
    "!!int ",
    "!!str ",
    "!!float ",
    "!!map ",
    "!!set ",
    "!!omap ",
    "!custom ",
    "!<tag:x> ",
    "'",
    '"',
    "\\",
    "#",
    "\t",
    "\n",
    "  ",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "%TAG ! tag:x,2000:\n",
    "~",
    "null",
    "true",
    "no",
    "0x1F",
    "0o17",
    "1e309",
    ".inf",
    ".nan",
    "-",
    "99999999999999999999999",
    "1..0",
    "0..99999999",
    "0..4:0",
    "lane",
    "warp / 0",
    "(((",
    ")))",
    "2024-01-01",
    "=",
    "<<",
    "@",
    "`",
    "%",
    "\r\n",
    "é",
    "\u2028",
    "\x85",
    "\x07",
    "\ufeff",
    '"\\ud800"',
    '"\\x00"',
    '"\\U0001F600"',
]
RAW_TOKENS = [b"\xff", b"\x00", b"\xef\xbb\xbf", b"\xfe\xff", b"\xc3", b"\x80"]


@st.composite
def mutated_yaml(draw: st.DrawFn) -> bytes:
    """An example spec with a few random edits: insertions, deletions, repeats."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.integers(0, 4))
        if edit == 0:
            data[at:at] = draw(st.sampled_from(YAML_TOKENS)).encode()
        elif edit == 1:
            data[at:at] = draw(st.sampled_from(RAW_TOKENS))
        elif edit == 2:
            del data[at : at + draw(st.integers(1, 40))]
        elif edit == 3:
            data[at:at] = data[at : at + draw(st.integers(1, 80))] * draw(st.integers(1, 3))
        else:
            data[at : at + 1] = draw(st.binary(min_size=1, max_size=3))
    return bytes(data)


@FUZZ
@given(mutated_yaml())
def yaml_target(raw: bytes) -> None:
    remember(raw)
    analyze_bytes(raw)


@FUZZ
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)))
def bytes_target(raw: bytes) -> None:
    remember(raw)
    analyze_bytes(raw)


# --- values of every type at every place ---------------------------------------------------

BASES = [yaml.safe_load(raw) for raw in SEEDS]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 2**31, 2**62, 2**63, -(2**63), 10**12]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(
        [
            "0..3",
            "3..0",
            "0..2:0",
            "0..9:-1",
            "lane",
            "128B",
            "float4",
            "ldmatrix",
            "x" * 5000,
            "\ud800",
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=8,
)


def places(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += places(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            out += places(value, (*prefix, i))
    return out


@st.composite
def spec_with_wrong_value(draw: st.DrawFn) -> dict[str, Any]:
    doc = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 2))):
        put(doc, draw(st.sampled_from(places(doc))), draw(values))
    return doc


@FUZZ
@given(spec_with_wrong_value())
def values_target(doc: dict[str, Any]) -> None:
    remember(doc)
    analyze_bytes(yaml.safe_dump(doc, allow_unicode=True).encode())


# --- the pytest entry points -------------------------------------------------------------


def test_fuzz_expressions(fuzz_seconds: float) -> None:
    assert run_for(expression_target, fuzz_seconds, "expressions") > 0


def test_fuzz_yaml_text(fuzz_seconds: float) -> None:
    assert run_for(yaml_target, fuzz_seconds, "yaml text") > 0


def test_fuzz_raw_bytes(fuzz_seconds: float) -> None:
    assert run_for(bytes_target, fuzz_seconds, "raw bytes") > 0


def test_fuzz_wrong_values(fuzz_seconds: float) -> None:
    assert run_for(values_target, fuzz_seconds, "wrong values") > 0
