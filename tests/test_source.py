"""Tests for shmem_cli.spec.source: safe YAML loading with positions, and schema validation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from shmem_cli.plumbing.errors import ShmemError, SourcePos
from shmem_cli.spec.compile import load_spec
from shmem_cli.spec.schema import spec_schema as schema
from shmem_cli.spec.schema import validate
from shmem_cli.spec.source import (
    MAX_ALIASES,
    MAX_ANCHORS,
    MAX_DEPTH,
    MAX_NODES,
    Document,
    load_file,
    load_yaml,
)

from .conftest import ROOT as REPO

SMALL = """\
name: demo
block: [32, 8]
arrays:
  tile:
    dtype: float32
    shape: [32, 33]
accesses:
  - array: tile
    index: [ty, "tx + 1"]
"""

VALID = """\
# A tiled transpose with padding, ldmatrix and an atomic histogram.
name: transpose_tiles
block: [32, 8]
arch: sm_90
params:
  TILE: 32
  PAD: 1
  ROWS: 8
expect:
  max_ways: 2
arrays:
  tile:
    dtype: float32
    shape: [TILE, TILE + PAD]
    pad: 0
  frag:
    dtype: float16
    shape: [64, 64]
    swizzle: 128B
  acc:
    dtype: int32
    shape: [256]
    offset: 8192
    swizzle: {bits: 3, base: 4, shift: 3}
accesses:
  - name: load rows
    array: tile
    op: load
    index: ["ty + ROWS*i", tx]
    loop: {i: 0..4}
  - name: store cols
    array: tile
    op: store
    index: [tx, "ty + ROWS*i"]
    loop:
      i: 0..32:8
      j: [0, 1, 3]
    expect: {conflict_free: true}
  - name: ldsm
    array: frag
    op: ldmatrix
    matrices: 4
    trans: false
    index: ["lane % 16", "(lane / 16) * 8"]
  - name: count
    array: acc
    op: atomic
    atomic: add
    index: ["tid % 256"]
    when: "lane < 16"
"""


def load_error(source: str | bytes) -> ShmemError:
    with pytest.raises(ShmemError) as info:
        load_yaml(source, "spec.yaml")
    err = info.value
    assert err.path == "spec.yaml"
    return err


def messages(text: str) -> list[tuple[int | None, int | None, str]]:
    return [(e.line, e.column, e.message) for e in validate(load_yaml(text, "spec.yaml"))]


# --------------------------------------------------------------------------
# Values and positions


def test_small_document_data() -> None:
    doc = load_yaml(SMALL, "small.yaml")
    assert doc.path == "small.yaml"
    assert doc.data == {
        "name": "demo",
        "block": [32, 8],
        "arrays": {"tile": {"dtype": "float32", "shape": [32, 33]}},
        "accesses": [{"array": "tile", "index": ["ty", "tx + 1"]}],
    }
    assert type(doc.data["block"][0]) is int


def test_value_positions() -> None:
    doc = load_yaml(SMALL, "small.yaml")
    assert doc.pos() == SourcePos(1, 1)
    assert doc.pos("name") == SourcePos(1, 7)
    assert doc.pos("block") == SourcePos(2, 8)
    assert doc.pos("block", 1) == SourcePos(2, 13)
    assert doc.pos("arrays") == SourcePos(4, 3)
    assert doc.pos("arrays", "tile") == SourcePos(5, 5)
    assert doc.pos("arrays", "tile", "shape", 0) == SourcePos(6, 13)
    assert doc.pos("accesses", 0) == SourcePos(8, 5)
    assert doc.pos("accesses", 0, "array") == SourcePos(8, 12)
    # A quoted scalar starts at its opening quote.
    assert doc.pos("accesses", 0, "index", 1) == SourcePos(9, 17)


def test_missing_paths_fall_back_to_nearest_ancestor() -> None:
    doc = load_yaml(SMALL, "small.yaml")
    assert doc.pos("accesses", 0, "index", 7) == SourcePos(9, 12)
    assert doc.pos("accesses", 0, "loop", "i") == SourcePos(8, 5)
    assert doc.pos("nope", "deeper") == SourcePos(1, 1)


def test_key_positions() -> None:
    doc = load_yaml(SMALL, "small.yaml")
    assert doc.key_pos("name") == SourcePos(1, 1)
    assert doc.key_pos("arrays", "tile") == SourcePos(4, 3)
    assert doc.key_pos("arrays", "tile", "shape") == SourcePos(6, 5)
    assert doc.key_pos("accesses", 0, "index") == SourcePos(9, 5)
    # List items have no key: fall back to the value's position.
    assert doc.key_pos("accesses", 0) == SourcePos(8, 5)
    assert doc.key_pos("arrays", "tile", "shpae") == SourcePos(5, 5)


def test_document_without_positions() -> None:
    doc = Document("hand.yaml", {"a": 1})
    assert doc.pos("a") is None
    assert doc.key_pos("a") is None


def test_scalars_resolve_like_safe_load() -> None:
    text = (
        "i: 12\nh: 0x1f\nf: 1.5\ne: 1e3\nt: true\nn: ~\ns: '12'\nneg: -3\n"
        "inf: .inf\ndate: 2024-01-01\nexplicit: !!str 7\nint: !!int '8'\n"
    )
    data = load_yaml(text, "s.yaml").data
    assert data["i"] == 12 and type(data["i"]) is int
    assert data["h"] == 31
    assert data["f"] == 1.5
    assert data["e"] == "1e3"  # YAML 1.1 float needs a dot; same as yaml.safe_load
    assert data["t"] is True
    assert data["n"] is None
    assert data["s"] == "12"
    assert data["neg"] == -3
    assert data["inf"] == float("inf")
    # Dates stay strings: a spec holds only plain JSON-like values.
    assert data["date"] == "2024-01-01"
    assert data["explicit"] == "7"
    assert data["int"] == 8


def test_base_60_numbers_stay_text() -> None:
    """YAML 1.1 reads ``1:30`` as 90 (base 60): a pad of 90, a loop ``{j: 8:32}`` of one
    value 512. They stay the text written, which the spec's checks then refuse."""
    data = load_yaml("a: 1:30\nb: -1:30.5\nc: 8:32\nd: 190:20:30\ne: 1_000\n", "s.yaml").data
    assert data == {"a": "1:30", "b": "-1:30.5", "c": "8:32", "d": "190:20:30", "e": 1000}


def test_base_60_pad_is_an_error_at_its_colon(tmp_path: Path) -> None:
    path = tmp_path / "pad.yaml"
    path.write_text(
        "block: [32]\narrays:\n  a: {dtype: float, shape: [32], pad: 1:30}\n"
        "accesses:\n  - {array: a, index: [threadIdx.x]}\n"
    )
    with pytest.raises(ShmemError) as err:
        load_spec(path)
    assert f"{path}:3:40: error: unexpected ':' in expression '1:30'" in str(err.value)


def test_matches_yaml_safe_load_on_valid_spec() -> None:
    doc = load_yaml(VALID, "valid.yaml")
    assert doc.data == yaml.safe_load(VALID)
    assert list(doc.data["arrays"]) == ["tile", "frag", "acc"]


def test_bytes_with_bom_and_crlf() -> None:
    doc = load_yaml(b"\xef\xbb\xbfname: x\r\nblock: [1]\r\n", "bom.yaml")
    assert doc.data == {"name": "x", "block": [1]}
    assert doc.pos("name") == SourcePos(1, 7)
    assert doc.pos("block", 0) == SourcePos(2, 9)


def test_str_with_bom() -> None:
    doc = load_yaml("\ufeffa: 1\n", "bom.yaml")
    assert doc.data == {"a": 1}
    assert doc.pos("a") == SourcePos(1, 4)


def test_anchors_and_aliases_expand() -> None:
    text = "shape: &s [32, 33]\narrays:\n  a: {dtype: f32, shape: *s}\n"
    doc = load_yaml(text, "alias.yaml")
    assert doc.data["arrays"]["a"]["shape"] == [32, 33]
    # An alias's value is placed where its anchor's content is written.
    assert doc.pos("arrays", "a", "shape", 1) == SourcePos(1, 16)
    # The converted lists are separate objects, not shared.
    assert doc.data["shape"] is not doc.data["arrays"]["a"]["shape"]


def test_merge_keys_follow_the_yaml_merge_spec() -> None:
    text = (
        "base: &b {dtype: f32, shape: [8], pad: 1}\n"
        "other: &o {pad: 2, offset: 64}\n"
        "arr:\n"
        "  <<: [*b, *o]\n"
        "  shape: [16]\n"
    )
    doc = load_yaml(text, "merge.yaml")
    # The YAML merge-key spec: keys written in the mapping win, then the merged
    # mappings in sequence order (the first one wins). PyYAML releases disagree on
    # that order, so the expectation is written out rather than taken from safe_load.
    assert doc.data["arr"] == {"dtype": "f32", "shape": [16], "pad": 1, "offset": 64}
    assert doc.key_pos("arr", "shape") == SourcePos(5, 3)
    assert doc.pos("arr", "pad") == SourcePos(1, 40)


def test_merge_key_needs_mappings() -> None:
    err = load_error("a:\n  <<: 3\n")
    assert err.pos == SourcePos(2, 7)
    assert "merge key" in err.message


# --------------------------------------------------------------------------
# Loading errors


def test_duplicate_key_located_at_second_key() -> None:
    err = load_error("name: a\nblock: [1]\narrays:\n  t: {}\n  t: {}\n")
    assert err.pos == SourcePos(5, 3)
    assert err.message == "duplicate key 't' (first at line 4)"


def test_duplicate_key_in_flow_mapping() -> None:
    err = load_error("a: {x: 1, y: 2, x: 3}\n")
    assert err.pos == SourcePos(1, 17)
    assert err.message == "duplicate key 'x' (first at line 1)"


def test_syntax_error_position() -> None:
    err = load_error("a: 1\nb: [1, 2\nc: 3\n")
    assert err.pos == SourcePos(3, 2)
    assert err.message == (
        "invalid YAML: the [...] list opened at line 2 is not closed before this point: "
        "close it with ']', or quote an item that holds ':', '#', '?' or '!'"
    )


def test_bad_indentation_position() -> None:
    err = load_error("block: [1]\narrays:\n  t: 1\n    u: 2\n")
    assert err.pos == SourcePos(4, 6)
    assert err.message == (
        "invalid YAML: this line is indented deeper than the line above it, which is not a "
        "block (its value is already given): YAML nests by indentation, so line it up"
    )


def test_undefined_alias() -> None:
    err = load_error("a: 1\nb: *missing\n")
    assert err.pos == SourcePos(2, 4)
    assert "undefined alias 'missing'" in err.message


@pytest.mark.parametrize(
    "text", ["", "\n\n", "# only a comment\n  # and another\n", "---\n", "~\n"]
)
def test_empty_file(text: str) -> None:
    err = load_error(text)
    assert err.message == "empty spec file"


@pytest.mark.parametrize(
    ("text", "found"),
    [("- a\n- b\n", "a list"), ("just text\n", "a single value"), ("42\n", "a single value")],
)
def test_top_level_must_be_mapping(text: str, found: str) -> None:
    err = load_error(text)
    assert err.message.startswith("a spec must be a mapping")
    assert err.message.endswith(f"found {found}")
    assert err.pos == SourcePos(1, 1)


def test_more_than_one_document() -> None:
    err = load_error("a: 1\n---\nb: 2\n")
    assert err.pos == SourcePos(2, 1)
    assert "exactly one YAML document" in err.message


def test_non_utf8_bytes_located() -> None:
    err = load_error("name: ok\nblock: [1]  # caf\xe9\n".encode("latin-1"))
    assert err.message.startswith("file is not valid UTF-8 text")
    assert err.pos == SourcePos(2, 18)


def test_non_utf8_column_counts_characters() -> None:
    # "a: 'éé" is 6 characters but 8 bytes: the column counts characters.
    err = load_error("a: 'éé".encode() + b"\xff'\n")
    assert err.pos == SourcePos(1, 7)


def test_utf16_is_named() -> None:
    err = load_error("a: 1\n".encode("utf-16"))
    assert "UTF-16" in err.message
    assert err.pos == SourcePos(1, 1)


def test_binary_with_nul() -> None:
    err = load_error(b"a: 1\nxy\x00\x01\x02\xff")
    assert "NUL" in err.message and "binary" in err.message
    assert err.pos == SourcePos(2, 3)


def test_nul_in_text_input() -> None:
    err = load_error("a: 1\x00\n")
    assert "NUL" in err.message
    assert err.pos == SourcePos(1, 5)


def test_control_character_rejected() -> None:
    err = load_error("a: 1\nb: x\x07y\n")
    assert err.message == "invalid YAML: control character U+0007 is not allowed"
    assert err.pos == SourcePos(2, 5)


def test_billion_laughs_refused_quickly() -> None:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        refs = ", ".join([f"*l{i - 1}"] * 9)
        lines.append(f"l{i}: &l{i} [{refs}]")
    text = "\n".join(lines) + "\n"
    err = load_error(text)  # how fast: bench/run.py ("refuse a billion-laughs document")
    assert err.message == (
        f"YAML document too large after expanding aliases (limit {MAX_NODES} nodes)"
    )
    assert err.pos is not None


def test_an_alias_bomb_is_refused_at_the_alias_past_the_bound() -> None:
    # 100,000 aliases of one list: 400 KB, composed for 2 s before the node bound refused it
    text = "a: &a [1]\nb: [" + ", ".join(["*a"] * 100_000) + "]\n"
    err = load_error(text)
    assert err.message.startswith("too many YAML aliases (*name): more than 4,096 in one spec")
    # "b: [" then 4 characters an alias: the 4,097th starts at column 5 + 4,096 * 4
    assert MAX_ALIASES == 4096 and err.pos == SourcePos(2, 16_389)
    # refused there, not after composing the rest (its time: bench/run.py, "refuse 100,000 aliases")


def test_an_anchor_bomb_is_refused_at_the_anchor_past_the_bound() -> None:
    text = "b: [" + ", ".join(f"&x{i} 1" for i in range(100_000)) + "]\n"
    err = load_error(text)
    assert err.message.startswith("too many YAML anchors (&name): more than 1,024 in one spec")
    column = text.index("&x1024 ") + 1
    assert MAX_ANCHORS == 1024 and err.pos == SourcePos(1, column)


def test_aliases_up_to_the_bound_load() -> None:
    text = "a: &a {k: 1}\nb: [" + ", ".join(["{<<: *a}"] * 4096) + "]\n"
    loaded = load_yaml(text, "spec.yaml")
    assert len(loaded.data["b"]) == 4096 and loaded.data["b"][-1] == {"k": 1}


def test_merge_key_bomb_is_bounded() -> None:
    lines = ["m0: &m0 {k: 1}"]
    for i in range(1, 12):
        refs = ", ".join([f"*m{i - 1}"] * 9)
        lines.append(f"m{i}: &m{i} {{<<: [{refs}]}}")
    doc = load_yaml("\n".join(lines) + "\n", "merge-bomb.yaml")  # time: bench/run.py
    assert doc.data["m11"] == {"k": 1}


def test_recursive_alias_refused() -> None:
    err = load_error("a: &x [1, *x]\n")
    assert "recursive" in err.message
    assert err.pos == SourcePos(1, 4)


def test_recursive_merge_refused() -> None:
    err = load_error("a: &x {<<: *x}\n")
    assert "recursive" in err.message


def test_python_tag_refused_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = f'block: [1]\nname: !!python/object/apply:os.system ["touch {marker}"]\n'
    err = load_error(text)
    assert err.message.startswith("unsupported YAML tag '!!python/object/apply:os.system'")
    assert err.pos == SourcePos(2, 7)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("a: !foo bar\n", "!foo"),
        ("a: !foo {b: 1}\n", "!foo"),
        ("a: !!python/name:os.system ''\n", "!!python/name:os.system"),
        ("a: !!binary aGk=\n", "!!binary"),
        ("a: !!set {x}\n", "!!set"),
        ("a: !!timestamp 2024-01-01\n", "!!timestamp"),
    ],
)
def test_nonstandard_tags_refused(text: str, tag: str) -> None:
    err = load_error(text)
    assert err.message.startswith(f"unsupported YAML tag '{tag}'")
    assert err.pos == SourcePos(1, 4)


def test_invalid_explicit_int() -> None:
    err = load_error("a: !!int nope\n")
    assert err.message == "invalid !!int value 'nope'"
    assert err.pos == SourcePos(1, 4)


def test_complex_key_refused() -> None:
    err = load_error("? [1, 2]\n: 3\n")
    assert err.message == "a mapping key must be a plain value, not a list"
    assert err.pos == SourcePos(1, 3)


def test_deep_nesting_refused() -> None:
    depth = MAX_DEPTH + 50
    err = load_error("a: " + "[" * depth + "]" * depth + "\n")
    assert "nesting too deep" in err.message
    assert err.pos is not None and err.pos.line == 1


def test_very_deep_nesting_no_recursion_error() -> None:
    err = load_error("a: " + "[" * 20_000 + "]" * 20_000 + "\n")
    assert "nesting too deep" in err.message


def test_deep_nesting_through_aliases_refused() -> None:
    inner = "[" * 90 + "]" * 90
    outer = "[" * 30 + "*a" + "]" * 30
    err = load_error(f"a: &a {inner}\nb: {outer}\n")
    assert "nesting too deep after expanding aliases" in err.message


def test_nesting_at_limit_is_fine() -> None:
    depth = MAX_DEPTH - 2
    doc = load_yaml("a: " + "[" * depth + "]" * depth + "\n", "deep.yaml")
    value: Any = doc.data["a"]
    levels = 0
    while value:
        value = value[0]
        levels += 1
    assert levels == depth - 1


def test_error_messages_shorten_user_data() -> None:
    long_key = "k" * 1000  # YAML allows implicit keys up to 1024 characters
    err = load_error(f"{long_key}: 1\n{long_key}: 2\n")
    assert err.message.startswith("duplicate key 'kkk")
    assert len(err.message) < 150


# --------------------------------------------------------------------------
# load_file


def test_load_file_reads_bytes(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(VALID.encode())
    doc = load_file(spec)
    assert doc.path == str(spec)
    assert doc.data["name"] == "transpose_tiles"
    assert validate(doc) == []


def test_load_file_errors_carry_the_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"a: \xff\n")
    with pytest.raises(ShmemError) as info:
        load_file(bad)
    assert info.value.path == str(bad)
    assert info.value.pos == SourcePos(1, 4)
    assert info.value.render() == f"{bad}:1:4: error: {info.value.message}"


def test_load_file_missing(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ShmemError) as info:
        load_file(missing)
    assert info.value.path == str(missing)
    assert "no such file" in info.value.message


def test_load_file_directory(tmp_path: Path) -> None:
    with pytest.raises(ShmemError) as info:
        load_file(tmp_path)
    assert "directory" in info.value.message


# --------------------------------------------------------------------------
# Schema


def test_schema_is_valid_draft7_with_descriptions() -> None:
    s = schema()
    jsonschema.Draft7Validator.check_schema(s)
    assert s["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert s["$id"]
    assert set(s["required"]) == {"block", "arrays", "accesses"}
    assert schema() is s  # loaded once

    missing: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for name, sub in node.get("properties", {}).items():
                if "description" not in sub:
                    missing.append(f"{where}.{name}")
            for name, sub in node.items():
                walk(sub, f"{where}/{name}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{where}[{i}]")

    walk(s, "#")
    assert missing == []


def test_valid_spec_has_no_errors() -> None:
    assert validate(load_yaml(VALID, "valid.yaml")) == []
    assert validate(load_yaml(SMALL, "small.yaml")) == []


def test_unknown_key_with_suggestion_at_key() -> None:
    text = "block: [32]\narrays:\n  tile:\n    dtype: f32\n    shpae: [4]\naccesses: []\n"
    errors = validate(load_yaml(text, "spec.yaml"))
    by_message = {e.message: e for e in errors}
    unknown = by_message["unknown key 'shpae' in arrays.tile (did you mean 'shape'?)"]
    assert unknown.pos == SourcePos(5, 5)
    assert unknown.path == "spec.yaml"
    # The typo explains the missing 'shape': it is not reported a second time.
    assert "arrays.tile: missing required key 'shape'" not in by_message


def test_missing_key_reported_when_no_typo_explains_it() -> None:
    text = (
        "block: [32]\narrays:\n  tile:\n    dtype: f32\n    colour: red\n"
        "accesses: [{array: tile, index: [0]}]\n"
    )
    got = messages(text)
    assert got == [
        (4, 5, "arrays.tile: missing required key 'shape'"),
        (
            5,
            5,
            "unknown key 'colour' in arrays.tile (allowed: dtype, shape, pad, offset, swizzle)",
        ),
    ]


def test_unknown_top_level_key() -> None:
    got = messages(
        "block: [1]\nnmae: x\nzzzz: 1\narrays: {t: {dtype: f, shape: [1]}}\n"
        "accesses: [{array: t, index: [0]}]\n"
    )
    assert got == [
        (2, 1, "unknown key 'nmae' at top level (did you mean 'name'?)"),
        (
            3,
            1,
            "unknown key 'zzzz' at top level "
            "(allowed: name, block, params, arch, kernel, expect, arrays, accesses)",
        ),
    ]


def test_wrong_type_located_at_value() -> None:
    text = (
        "block: [32]\n"
        "arrays:\n"
        "  t: {dtype: f32, shape: [8]}\n"
        "accesses:\n"
        "  - array: t\n"
        "    index: tx\n"
    )
    assert messages(text) == [
        (6, 12, "accesses[0].index: expected a list, found the string 'tx'"),
    ]


def test_float_is_not_an_integer() -> None:
    got = messages(
        "block: [32]\nparams: {N: 2.0}\narrays: {t: {dtype: f, shape: [1]}}\n"
        "accesses: [{array: t, index: [0]}]\n"
    )
    assert got == [(2, 13, "params.N: expected an integer or a mapping, found the number 2.0")]


def test_enum_error_message() -> None:
    text = (
        "block: [32]\n"
        "arrays:\n"
        "  t: {dtype: f32, shape: [8]}\n"
        "accesses:\n"
        "  - array: t\n"
        "    op: lod\n"
        "    index: [0]\n"
    )
    [(line, column, message)] = messages(text)
    assert (line, column) == (6, 9)
    assert message.startswith(
        "accesses[0].op: 'lod' is not one of load, store, atomic, ldmatrix, stmatrix"
    )
    assert message.endswith("(did you mean 'load'?)")


def test_alternatives_pick_the_meant_branch() -> None:
    text = (
        "block: [32, 0, 1.5]\n"
        "arrays:\n"
        "  t: {dtype: f32, shape: [8], swizzle: 16B}\n"
        "  u: {dtype: f32, shape: [8], swizzle: {bits: 3, base: 4}}\n"
        "accesses:\n"
        "  - array: t\n"
        "    index: [0]\n"
        "    loop: {i: 0-4, j: [1, x], 3k: 0..2}\n"
    )
    assert messages(text) == [
        (1, 13, "block[1]: must be at least 1, found 0"),
        (1, 16, "block[2]: expected an integer or a string, found the number 1.5"),
        (3, 40, "arrays.t.swizzle: '16B' is not one of none, 32B, 64B, 128B (did you mean '64B'?)"),
        (4, 40, "arrays.u.swizzle: missing required key 'shift'"),
        (
            8,
            15,
            "accesses[0].loop.i: '0-4' is not a valid range "
            "(write 'start..stop' or 'start..stop:step', e.g. '0..3' or '0..30:2')",
        ),
        (8, 27, "accesses[0].loop.j[1]: expected an integer, found the string 'x'"),
        (
            8,
            31,
            "accesses[0].loop: '3k' is not a valid name "
            "(use letters, digits and '_', not starting with a digit)",
        ),
    ]


def test_missing_top_level_keys_and_empty_lists() -> None:
    got = messages("name: x\nblock: []\naccesses: []\n")
    assert got == [
        (1, 1, "missing required top-level key 'arrays'"),
        (2, 8, "block: must not be an empty list"),
        (3, 11, "accesses: must not be an empty list"),
    ]


def test_errors_sorted_and_deduplicated() -> None:
    text = (
        "block: [1, 2, 3, 4]\n"
        "arrays: {t: {dtype: f, shape: [1]}}\n"
        "accesses:\n"
        "  - {array: t, index: [0], matrices: 3}\n"
        "  - {}\n"
    )
    got = messages(text)
    assert got == sorted(got, key=lambda m: (m[0], m[1]))
    assert len(got) == len(set(got))
    assert got == [
        (1, 8, "block: allows at most 3 items, found 4"),
        (4, 38, "accesses[0].matrices: 3 is not one of 1, 2, 4"),
        (5, 5, "accesses[1]: missing required key 'array'"),
        (5, 5, "accesses[1]: missing required key 'index'"),
    ]


def test_non_string_names() -> None:
    got = messages(
        "block: [1]\nparams: {1: 2}\narrays: {t: {dtype: f, shape: [1]}}\n"
        "accesses: [{array: t, index: [0]}]\n"
    )
    assert got == [(2, 10, "params: the name 1 must be a string")]


def test_long_values_are_shortened_in_schema_errors() -> None:
    got = messages(
        "block: [1]\narrays: {t: {dtype: f, shape: [1]}}\n"
        f"accesses: [{{array: t, index: [0], op: {'x' * 3000}}}]\n"
    )
    [(_, _, message)] = got
    assert "..." in message
    assert len(message) < 200


# --------------------------------------------------------------------------
# Speed and imports


def test_import_does_not_load_jsonschema() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    code = (
        "import sys, shmem_cli.spec.source, shmem_cli.spec.schema; "
        "print('jsonschema' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
