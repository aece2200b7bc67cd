"""Hostile Triton cache entries (issue 28): metadata checked like the command line (types,
ranges, nesting), TTGIR read in linear time, a ``#loc`` naming a file outside the source tree
never read, long lists of names cut. Each entry is a copy of one of the project's own,
changed in one place."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.triton import ttgir
from shmem_cli.trace.triton.cache import read_entry
from shmem_cli.trace.triton.roots import open_entry
from shmem_cli.trace.triton.ttgir import MAX_SIGNATURE, tensor_shapes, ttgir_params

from .conftest import HANG_S, TEST_DATA, needs_nvdisasm
from .hostile import quiet, refused, shmem

CACHE = TEST_DATA / "triton" / "cache"
MATMUL = CACHE / "UIAVWYKFMI46K2QIXDERSSIUTU46SKZUSQ6O7N3QILUNPZ6GU44A"
# Triton 3.4.0 writes %arg0...: the names come from the Python file its first #loc names
OLD = TEST_DATA / "triton/versions/3.4.0/cache/JMBKJ6OENSROKUPQMIYVR7LEGDBOFN664SR6NSSLGI2OOZWPVMIA"


def entry(tmp_path: Path, source: Path = MATMUL, **changes: Any) -> Path:
    """A copy of ``source`` whose metadata has ``changes`` (a value of ... removes the key)."""
    folder = tmp_path / "entry"
    shutil.copytree(source, folder)
    meta_path = folder / "matmul_tiles.json"
    meta = json.loads(meta_path.read_text())
    for key, value in changes.items():
        if value is ...:
            meta.pop(key, None)
        else:
            meta[key] = value
    meta_path.write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"num_warps": 0}, "'num_warps' is 0; a launch takes 1 to 32"),
        ({"num_warps": None}, "'num_warps' is None, not an integer"),
        ({"num_warps": 10**30}, "'num_warps' is a 100-bit number; a launch takes 1 to 32"),
        ({"num_warps": "4"}, "'num_warps' is a str (4), not an integer"),
        ({"warp_size": "32"}, "'warp_size' is a str (32), not an integer"),
        ({"warp_size": [32]}, "'warp_size' is a list ([32]), not an integer"),
        ({"shared": 1 << 40}, "'shared' is 1099511627776; a launch takes 0 to 232,448"),
        ({"cluster_dims": [65536] * 3}, "'cluster_dims[0]' is 65536; a launch takes 1 to 16"),
        ({"cluster_dims": [4, 4, 4]}, "'cluster_dims' [4, 4, 4] is a cluster of 64 blocks"),
        ({"cluster_dims": "1,1,1"}, "'cluster_dims' is a str (1,1,1), not 3 integers"),
        ({"num_ctas": 1 << 20}, "'num_ctas' is 1048576; a launch takes 1 to 16"),
        ({"global_scratch_size": -1}, "'global_scratch_size' is -1"),
        ({"num_warps": 32, "warp_size": 64}, "'warp_size' is 64; a launch takes 32"),
        ({"name": "k" * 100_000}, "'name' is a str (kkkkk"),
        ({"name": 5}, "'name' is an int (5), not a kernel's name"),
    ],
)
def test_metadata_is_checked_like_the_command_line(
    tmp_path: Path, changes: dict[str, Any], fragment: str
) -> None:
    folder = entry(tmp_path, **changes)
    with pytest.raises(ShmemError) as err:
        read_entry(folder / "matmul_tiles.json")
    assert f"unexpected metadata: {fragment}" in err.value.message, err.value.message
    assert err.value.path == str(folder / "matmul_tiles.json")
    assert len(err.value.message) < 300


def test_metadata_that_is_not_json(tmp_path: Path) -> None:
    folder = entry(tmp_path)
    meta = folder / "matmul_tiles.json"
    for text, fragment in [
        ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
        ('{"name": "m", "num_warps": ' + "9" * 5000 + "}", "thousands of digits"),
        ("\xff\xfe{", "not JSON"),
        ('{"name": "m"}', "has 'name' and 'num_warps'"),
    ]:
        meta.write_text(text, errors="surrogateescape")
        with pytest.raises(ShmemError, match=fragment):
            read_entry(meta)


def test_metadata_json_errors_are_located(tmp_path: Path) -> None:
    """JSON's own error is placed at its line and column (it was told as the exception's
    text, 'line 1 column 1 (char 0)', with no position)."""
    folder = entry(tmp_path)
    meta = folder / "matmul_tiles.json"
    for text, line, column in [("", 1, 1), ('{\n  "name": "m",\n  "num_warps": 4,\n}', 4, 1)]:
        meta.write_text(text)
        with pytest.raises(ShmemError) as err:
            read_entry(meta)
        assert err.value.pos is not None and (err.value.pos.line, err.value.pos.column) == (
            line,
            column,
        ), str(err.value)
        assert "not Triton metadata (not JSON: " in err.value.message


@pytest.mark.slow
@needs_nvdisasm
def test_hostile_metadata_on_the_command_line(tmp_path: Path) -> None:
    for n, (changes, fragment) in enumerate(
        [
            ({"shared": 1 << 40}, "'shared' is 1099511627776"),
            ({"cluster_dims": [65536] * 3}, "'cluster_dims[0]' is 65536"),
            ({"num_warps": 10**30}, "'num_warps' is a 100-bit number"),
            ({"warp_size": "32"}, "'warp_size' is a str (32)"),
        ]
    ):
        folder = entry(tmp_path / str(n), **changes)
        refused(shmem("trace", str(folder), "--grid", "1"), "unexpected metadata: ", fragment)
    deep = entry(tmp_path / "deep")
    (deep / "matmul_tiles.json").write_text("[" * 100_000 + "]" * 100_000)
    refused(shmem("trace", str(deep / "matmul_tiles.json")), "JSON nested too deeply")


# --- TTGIR ------------------------------------------------------------------------------------


def test_tensor_shapes_are_read_in_linear_time() -> None:
    """4 MB of ``tensor<1x1x...`` without a closing ``>``: quadratic for the old pattern
    (``tensor<((?:[0-9]+x)+)[^>]*>`` backtracked over every ``1x``: hours). A regular
    expression's steps cannot be counted, so HANG_S, a liveness guard, tells hours apart."""
    text = "tensor<" + "1x" * 2_000_000
    start = time.monotonic()
    assert tensor_shapes(text) == ("1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1",)
    many = "tensor<64x64xf16> tensor<" * 200_000
    assert tensor_shapes(many) == ("64x64",)
    assert time.monotonic() - start < HANG_S
    assert tensor_shapes("tensor<128x64xf16, #blocked> tensor<f32> tensor<1024xi32>") == (
        "128x64",
        "1024",
    )


def test_parameter_types_are_read_in_linear_time() -> None:
    """A megabyte of one parameter's type: a pattern that backtracks over it is quadratic
    (hours); HANG_S, a liveness guard, tells that apart, not a speed target."""
    spaces = " " * 1_000_000
    for text in [
        f"tt.func public @k(%x: !tt.ptr<f32{spaces}) {{",
        f"tt.func public @k(%x: !tt.ptr<f32{spaces}loc(#l)) {{",
        f"tt.func public @k(%x: !tt.tensordesc<tensor<1x{'1' * 1_000_000}) {{",
        f"tt.func public @k(%x: i32{spaces}, %y: f32) {{",
    ]:
        start = time.monotonic()
        try:
            ttgir_params(text, "k", Path("k.ttgir"))
        except ShmemError as exc:
            assert "which shmem cannot pass yet" in exc.message
            assert len(exc.message) < 300
        assert time.monotonic() - start < HANG_S


class _Spy:
    """A compiled pattern that records the (start, end) of each piece of text it searches."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.pieces: list[tuple[int, int]] = []

    def findall(self, text: str, start: int, end: int) -> list[Any]:
        self.pieces.append((start, min(end, len(text))))
        return self.pattern.findall(text, start, end)

    def finditer(self, text: str, start: int, end: int) -> Iterator[re.Match[str]]:
        self.pieces.append((start, min(end, len(text))))
        return self.pattern.finditer(text, start, end)


def test_tensor_shapes_search_each_character_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated ``tensor<1x`` (64 MiB of it took 10 s, a Python step per shape): the text is
    searched by the pattern engine in pieces that follow each other, each cut before a
    ``tensor<``, so every character is searched once and no shape is cut in two."""
    spy = _Spy(ttgir._SHAPE)
    monkeypatch.setattr(ttgir, "_SHAPE", spy)
    monkeypatch.setattr(ttgir, "SHAPE_CHUNK", 1000)
    unit = "tensor<1x"  # 9 characters: a piece ends at the first tensor< past 1,000 on
    text = "tensor<64x32xf16> " + unit * 100_000 + "tensor<8x" + "2x" * 20 + "f32>"
    assert tensor_shapes(text) == ("64x32", "1", "8" + "x2" * 15)
    starts = [a for a, _ in spy.pieces]
    assert starts[0] == 0 and spy.pieces[-1][1] == len(text)
    assert all(b == a2 for (_, b), (a2, _) in pairwise(spy.pieces))  # no gap, no overlap
    assert all(text.startswith("tensor<", a) for a in starts[1:])
    assert all(b - a <= 1000 + len(unit) for a, b in spy.pieces[:-1])
    # the shapes start at 18 + 9k: each piece ends at the first past 1,000 characters, 1,008 on
    assert len(spy.pieces) == -(-len(text) // 1008)


def test_a_parameter_list_without_its_end_is_refused_at_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tt.func public @k(`` and 64 MiB of ``tensor<1x`` (the parameter list was walked a
    character at a time to the file's end): only :data:`MAX_SIGNATURE` characters from its
    ``(`` are searched, then it is refused, placed at the ``(``."""
    spy = _Spy(ttgir._PARENS)
    monkeypatch.setattr(ttgir, "_PARENS", spy)
    head = "#loc = loc(unknown)\ntt.func public @k("
    text = head + "tensor<1x" * (2 * MAX_SIGNATURE // 9) + ")"
    with pytest.raises(ShmemError) as err:
        ttgir_params(text, "k", Path("k.ttgir"))
    said = err.value.message
    assert f"the parameter list of @k runs on past {MAX_SIGNATURE:,} characters" in said
    assert (err.value.line, err.value.column) == (2, 18)  # the "(" of line 2
    open_paren = len(head) - 1
    assert spy.pieces == [(open_paren, open_paren + MAX_SIGNATURE)]
    spy.pieces.clear()  # a list that ends inside the bound is read as before
    assert [p.name for p in ttgir_params(head + "%x: i32, %y: f32) {", "k", Path("k.ttgir"))] == [
        "x",
        "y",
    ]
    # an unclosed list that ends with the file, inside the bound: said so, at its "("
    with pytest.raises(ShmemError, match="the parameter list of @k is not closed") as err:
        ttgir_params(head + "%x: i32", "k", Path("k.ttgir"))
    assert (err.value.line, err.value.column) == (2, 18)


@needs_nvdisasm
def test_a_64_mib_ttgir_of_tensor_types_is_refused(tmp_path: Path) -> None:
    folder = entry(tmp_path)
    ttgir_file = folder / "matmul_tiles.ttgir"
    head = b"tt.func public @matmul_tiles("
    ttgir_file.write_bytes(head + b"tensor<1x" * ((64 << 20) // 9 - 4))
    ran = shmem("trace", str(folder), "--grid", "1")
    refused(ran, "matmul_tiles.ttgir:1:29: ", "runs on past 1,048,576 characters")


def _old_entry(tmp_path: Path, loc: Path) -> Path:
    """The Triton 3.4.0 entry (parameters %arg0...) with its first #loc naming ``loc``."""
    folder = tmp_path / "old"
    shutil.copytree(OLD, folder)
    ttgir = folder / "matmul_tiles.ttgir"
    lines = ttgir.read_text().splitlines(keepends=True)
    lines[1] = f'#loc = loc("{loc}":56:0)\n'
    ttgir.write_text("".join(lines))
    return folder


PYTHON = "def matmul_tiles(SECRET_C, SECRET_A, SECRET_B, SECRET_M, SECRET_N, SECRET_K):\n    pass\n"


def test_a_loc_outside_the_source_tree_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "secret.py"
    outside.parent.mkdir()
    outside.write_text(PYTHON)
    folder = _old_entry(tmp_path, outside)
    names = [p.name for p in open_entry(folder, None).params]
    assert names[:6] == ["arg0", "arg1", "arg2", "arg3", "arg4", "arg5"]
    inside = folder / "kernels.py"  # the same file inside the entry's own tree is read
    inside.write_text(PYTHON)
    (folder / "matmul_tiles.ttgir").write_text(
        (folder / "matmul_tiles.ttgir").read_text().replace(str(outside), str(inside))
    )
    assert [p.name for p in open_entry(folder, None).params][:2] == ["SECRET_C", "SECRET_A"]


@needs_nvdisasm
def test_a_loc_outside_the_source_tree_is_never_printed(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "secret.py"
    outside.parent.mkdir()
    outside.write_text(PYTHON)
    ran = shmem("trace", str(_old_entry(tmp_path, outside)), "--list-params")
    assert ran.code == 0, ran.text
    assert "SECRET" not in ran.text and "arg0" in ran.text
    assert not ran.opened(outside)
    quiet(ran)  # nothing else read outside the entry either, nothing written or left


def test_python_that_cannot_be_parsed_keeps_the_ttgir_names(tmp_path: Path) -> None:
    folder = _old_entry(tmp_path, tmp_path / "old" / "deep.py")
    (folder / "deep.py").write_text("def matmul_tiles(a: " + "(" * 100_000 + "):\n  pass\n")
    assert open_entry(folder, None).params[0].name == "arg0"


def test_a_cache_root_with_many_kernels_lists_some(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    for n in range(60):
        folder = root / f"H{n:03d}"
        folder.mkdir(parents=True)
        name = f"kernel_{n:03d}_" + "x" * 500
        (folder / "k.json").write_text(json.dumps({"name": name, "num_warps": 4}))
        (folder / "k.cubin").write_bytes(b"")
    with pytest.raises(ShmemError) as err:
        open_entry(root, "nope")
    assert "there are: kernel_000_" in err.value.message
    assert "and 40 more" in err.value.message
    assert len(err.value.message) < 2000


@needs_nvdisasm
# the metadata in `make test`; the TTGIR and the cubin slow (each a run of shmem)
@pytest.mark.parametrize(
    "suffix",
    [
        pytest.param(".ttgir", marks=pytest.mark.slow),
        ".json",
        pytest.param(".cubin", marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_an_entry_file_linked_outside_its_tree_is_not_read(tmp_path: Path, suffix: str) -> None:
    """A committed cache entry whose file is a link to a file elsewhere: refused by name,
    the file never opened (its TTGIR would give the parameters --list-params prints)."""
    folder = entry(tmp_path / "repo")
    (tmp_path / "repo" / ".git").mkdir()
    elsewhere = tmp_path / "elsewhere" / f"secret{suffix}"
    elsewhere.parent.mkdir()
    shutil.copy(folder / f"matmul_tiles{suffix}", elsewhere)
    if suffix == ".ttgir":  # the parameters' names would be printed
        elsewhere.write_text(elsewhere.read_text().replace("%a_ptr", "%SECRET_ptr"))
    (folder / f"matmul_tiles{suffix}").unlink()
    (folder / f"matmul_tiles{suffix}").symlink_to(elsewhere)
    ran = shmem("trace", str(folder), "--list-params")
    refused(
        ran,
        f"matmul_tiles{suffix} is a link to a file outside the entry's source tree",
        "copy the file into the entry",
    )
    assert "SECRET" not in ran.text
    assert not ran.opened(elsewhere)
    inside = tmp_path / "repo" / f"kept{suffix}"  # a link inside the repository is read
    shutil.move(elsewhere, inside)
    (folder / f"matmul_tiles{suffix}").unlink()
    (folder / f"matmul_tiles{suffix}").symlink_to(inside)
    assert shmem("trace", str(folder), "--list-params").code == 0


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("suffix", [".ttgir", ".cubin"])
def test_an_entry_file_that_is_a_fifo_or_a_folder_is_said_so(tmp_path: Path, suffix: str) -> None:
    """Not "the entry has no .ttgir": the file is there, and is not a plain file; it is never
    opened (a FIFO would block the read)."""
    for kind in ("fifo", "folder"):
        folder = entry(tmp_path / kind)
        target = folder / f"matmul_tiles{suffix}"
        target.unlink()
        if kind == "fifo":
            os.mkfifo(target)
        else:
            target.mkdir()
        ran = shmem("trace", str(folder), "--list-params")
        refused(ran, f"matmul_tiles{suffix} is not a regular file", "a real cache entry")


# --- tensordesc_meta -------------------------------------------------------------------------

HOST = next((TEST_DATA / "triton" / "jit36" / "cache_abi7").glob("*/matmul_host_desc.json"))


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("block_size", [10**4000, 32], "block_size is not 2 integers from 1 to 256 (a TMA box)"),
        ("block_size", [0, 32], "block_size is not 2 integers from 1 to 256"),
        ("elem_type", 10**4000, "element type code 10000000000000000000"),
    ],
    ids=["huge-box", "empty-box", "huge-type"],
)
def test_descriptor_metadata_numbers_are_bounded_and_never_echoed_whole(
    tmp_path: Path, field: str, value: Any, fragment: str
) -> None:
    """A tensordesc_meta number of 4,001 digits (JSON reads up to 4,300) was said whole."""
    from shmem_cli.trace.triton import descriptors

    folder = tmp_path / "entry"
    shutil.copytree(HOST.parent, folder)
    meta_path = folder / HOST.name
    meta = json.loads(meta_path.read_text())
    meta["tensordesc_meta"][0][field] = value
    meta_path.write_text(json.dumps(meta))
    got = read_entry(meta_path)
    own = list(got.params)
    first = next(k for k, p in enumerate(own) if p.is_desc)
    with pytest.raises(ShmemError) as err:
        descriptors.expand(got, own, first, "tensordesc:shape=128x128,strides=128x1")
    assert fragment in err.value.message and len(err.value.message) < 200, err.value.message
