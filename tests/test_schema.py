"""shmem_cli.spec.schema: its two algorithms (``kind="fast"``, ``kind="jsonschema"``) agree.

On every document, valid or broken, the quick walk must say what jsonschema says,
and ``kind="auto"`` must give jsonschema's explained errors: the bundled
examples, the hardware cases, random valid specs and random mutations of them (a
value replaced, a key dropped, an unknown key added).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shmem_cli.spec.schema import spec_schema, validate
from shmem_cli.spec.schema.fast import conforms
from shmem_cli.spec.source import Document, load_yaml

from .conftest import ROOT
from .hwtruth import case_to_spec, public_cases
from .test_reference import specs

REPO_SCHEMA = ROOT / "shmem_cli" / "spec_schema.json"

SCHEMA = spec_schema()


def jsonschema_valid(data: Any) -> bool:
    return not validate(Document("spec.yaml", data), kind="jsonschema")


def agree(data: Any) -> bool:
    """Every kind gives the same verdict; "auto" the very errors of "jsonschema"."""
    doc = Document("spec.yaml", data)
    by_jsonschema = [e.render() for e in validate(doc, kind="jsonschema")]
    by_auto = [e.render() for e in validate(doc, kind="auto")]
    fast = validate(doc, kind="fast")
    return by_auto == by_jsonschema and bool(fast) == bool(by_jsonschema)


def test_every_example_and_case_agrees() -> None:
    docs = [
        load_yaml(p.read_bytes(), str(p)).data
        for p in sorted((ROOT / "access_specs").glob("*.yaml"))
    ]
    docs += [case_to_spec(c) for c in public_cases()]
    assert docs
    for data in docs:
        assert conforms(data, SCHEMA) is jsonschema_valid(data)
        assert agree(data)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 300),
    st.floats(-2, 40, allow_nan=False),
    st.sampled_from(["", "x", "0..3", "1..", "sm_90", "32B", "float4", "a b", "tid % 32", "9x"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["dtype", "shape", "x", "1", "bits", "op", "index"]), inner, max_size=3
        ),
    ),
    max_leaves=6,
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    data = copy.deepcopy(draw(specs()))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(data)))
        if not where:
            continue
        parent = data
        for key in where[:-1]:
            parent = parent[key]
        action = draw(st.integers(0, 2))
        if action == 0:
            parent[where[-1]] = draw(VALUES)
        elif action == 1 and isinstance(parent, dict):
            del parent[where[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["pad", "when", "zzz", "loop", "swizzle", "expect"]))] = (
                draw(VALUES)
            )
    return data


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs())
def test_random_valid_specs_conform(data: Any) -> None:
    assert jsonschema_valid(data)
    assert conforms(data, SCHEMA) is True


@pytest.mark.slow  # 400 examples; test_random_valid_specs_conform is the fast one of its kind
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_random_broken_specs_agree(data: Any) -> None:
    assert conforms(data, SCHEMA) is jsonschema_valid(data)
    assert agree(data)


def test_fast_kind_says_invalid_without_a_place() -> None:
    errors = validate(Document("spec.yaml", {"name": "x"}), kind="fast")
    assert [e.render() for e in errors] == [
        "spec.yaml: error: the spec does not match the spec schema"
    ]


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="kind must be"):
        validate(Document("spec.yaml", {}), kind="quick")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "keyword",
    [{"not": {}}, {"oneOf": [{}]}, {"items": [{}]}, {"$ref": "other.json#/x"}, {"const": 1}],
)
def test_unknown_schema_forms_defer_to_jsonschema(keyword: dict[str, Any]) -> None:
    assert conforms([1], {"type": "array", **keyword}) is None


def test_by_hand() -> None:
    s = {
        "type": "object",
        "required": ["n"],
        "properties": {"n": {"type": "integer", "minimum": 1}},
    }
    assert conforms({"n": 2}, s) is True
    assert conforms({"n": 0}, s) is False
    assert conforms({"n": True}, s) is False  # a bool is not an integer
    assert conforms({"n": 2.0}, s) is False  # nor is 2.0, for a spec
    assert conforms({}, s) is False
    e = {"enum": [1, 2, 4]}
    assert [conforms(v, e) for v in (2, 2.0, True, "2", 3)] == [True, True, False, False, False]


def test_the_schema_is_read_from_the_file_beside_the_package() -> None:
    # the start-up path: a plain open() of the package's file, not importlib.resources
    from shmem_cli.spec.schema.document import SCHEMA_FILE

    assert Path(SCHEMA_FILE).resolve() == (REPO_SCHEMA).resolve()
    assert Path(SCHEMA_FILE).is_file()
