"""Hostile names of files (an adversarial round of 2026-12-05): a name the file system
refuses to look up (a part longer than 255 bytes: ``ENAMETOOLONG``; a folder without
permission: ``EACCES``) is a file that is not there, never a traceback. Python's
``Path.is_file``, ``is_dir``, ``exists`` and ``is_symlink`` raise ``OSError`` for these (before
Python 3.14), where ``os.path.isfile`` and its kin answer False; so shmem asks ``os.path``,
and a line table, a Triton cache or the command line may name anything."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from shmem_cli.cuda.named_sources import locate_source, read_sources

from .conftest import TEST_DATA
from .hostile import CUBIN, quiet, refused, shmem
from .test_fatbin import _entry, _host_elf
from .test_hostile_readers import _fat

ROOT = Path(__file__).resolve().parent.parent
#: one path part longer than any file system takes (NAME_MAX is 255 bytes)
TOO_LONG = "z" * 300
ENTRY = TEST_DATA / "triton" / "cache" / "DEKKSS6LMVZRLUWHJITG765ALDXAATTMELW7NBX6MBSYHAQKZNMA"


def test_a_line_table_naming_a_file_too_long_to_look_up_is_a_source_not_found(
    tmp_path: Path,
) -> None:
    # a cubin's line table names whatever `#line 1 "<3,000 characters>"` made it name;
    # looking it up (as named, then its trailing parts under each root) raised OSError
    (tmp_path / "k.cu").write_text("__global__ void k(float *p, int n) {}\n")
    for name in (TOO_LONG + ".cu", f"/src/{TOO_LONG}/m.cu", f"{TOO_LONG}/{TOO_LONG}.cu"):
        assert locate_source(name, [tmp_path]) is None
    # the file's own name is still found under the root, past the part too long
    assert locate_source(f"/src/{TOO_LONG}/k.cu", [tmp_path]) == tmp_path / "k.cu"
    read: list[Path] = []
    texts = read_sources([TOO_LONG + ".cu", str(tmp_path / "k.cu")], [tmp_path], read=read)
    assert texts == ["__global__ void k(float *p, int n) {}\n"]
    assert read == [tmp_path / "k.cu"]


def test_a_triton_metadata_file_whose_cubin_name_is_too_long(tmp_path: Path) -> None:
    # a 250-character stem: its .json name has 255 bytes, its .cubin's and .ttgir's 256;
    # looking for them raised OSError from the entry, its cache root and the .json itself
    root = tmp_path / "cache"
    folder = root / "entry"
    shutil.copytree(ENTRY, folder)
    stem = "t" * 250
    (folder / "transpose_tiles.json").rename(folder / f"{stem}.json")
    for suffix in (".cubin", ".ttgir", ".ptx"):
        (folder / f"transpose_tiles{suffix}").unlink()
    for given in (folder, root):
        refused(shmem("trace", str(given), "-b", "128"), "no Triton cache entry is in it")
    # named itself: the same refusal as an entry without a cubin (the line holds the long
    # name twice, so it is longer than refused() takes)
    ran = shmem("trace", str(folder / f"{stem}.json"))
    assert ran.code == 2, ran.text[-2000:]
    assert "Traceback" not in ran.text
    assert f"error: the entry has no {stem}.cubin beside its metadata" in ran.text
    quiet(ran)


def test_an_executable_whose_name_takes_all_255_bytes(tmp_path: Path) -> None:
    # its cubins were extracted as "<its name>.0.sm_90.cubin": a name too long to write,
    # so a valid executable was refused ("cannot write: the name is too long")
    from shmem_cli.trace.kernel.binaries import extract_cubins

    cubin = CUBIN.read_bytes()
    entries = _entry(2, 90, cubin)
    app = tmp_path / ("a" * 255)
    app.write_bytes(_host_elf(_fat(entries) + entries))
    folder = tmp_path / "out"
    folder.mkdir()
    (found,) = extract_cubins(app, "sm_90", folder)
    assert found.path.parent == folder and found.path.read_bytes() == cubin
    assert found.origin == f"extracted from {app} (fat binary entry 0)"


def test_an_include_folder_too_long_to_look_up_is_no_such_folder(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("__global__ void k(float *o) { o[0] = 1; }\n")
    folder = f"--nvcc-arg=-I{tmp_path / TOO_LONG}"
    refused(shmem("trace", str(tmp_path / "k.cu"), "-b", "32", folder), "no such folder")


def test_verify_emit_into_a_folder_name_too_long(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    shutil.copy(ROOT / "access_specs" / "column_read_32x32.yaml", spec)
    ran = shmem("verify", "s.yaml", "--emit", TOO_LONG, cwd=tmp_path)
    # (not refused(): its one write, the mkdir of the folder asked for, is what --emit does)
    assert ran.code == 2, ran.text[-2000:]
    assert "Traceback" not in ran.text
    assert f"{TOO_LONG}: error: cannot create the folder: the name is too long" in ran.text
    assert ran.paths("write") == [str(tmp_path / TOO_LONG)]


def _nested(top: Path, depth: int, name: str) -> Path:
    """``top/name/name/.../s.yaml`` (``depth`` folders), made one folder at a time from the
    last (a path longer than the system takes cannot be made whole); the spec's folder."""
    top.mkdir()
    here = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=here)
            inner = os.open(name, os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = inner
        spec = os.open("s.yaml", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=here)
        os.write(spec, (ROOT / "access_specs" / "column_read_32x33.yaml").read_bytes())
        os.close(spec)
    finally:
        os.close(here)
    return top


def _flatten(top: Path, name: str) -> None:
    """Remove what :func:`_nested` made, one level at a time from the top (shutil.rmtree, as
    pytest cleans up, recurses once a level too)."""
    while os.path.isdir(top / name):
        os.rename(top / name, top / "gone")
        for entry in os.listdir(top / "gone"):
            if entry == name:
                os.rename(top / "gone" / name, top / name)
            else:
                os.remove(top / "gone" / entry)
        os.rmdir(top / "gone")


@pytest.fixture()
def deep(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "deep"
    _flatten(tmp_path / "deep", "d")
    _flatten(tmp_path / "deep", "d" * 30)


@pytest.mark.slow
def test_a_folder_of_specs_2000_deep_is_walked_without_recursion(
    tmp_path: Path, deep: Path
) -> None:
    # Path.rglob recursed once a level: RecursionError past about 1,000 folders
    _nested(deep, 1900, "d")
    (deep / "loop.yaml").symlink_to("loop.yaml")  # no file: skipped, as before
    shutil.copy(ROOT / "access_specs" / "column_read_32x33.yaml", tmp_path / "good.yaml")
    ran = shmem("analyze", "deep", "good.yaml", "--format", "json", cwd=tmp_path)
    assert ran.code == 0, ran.text[-2000:]
    assert ran.stdout.count('"path": ') == 2, ran.stdout[-2000:]
    assert '"path": "deep/' + "d/" * 1900 + 's.yaml"' in ran.stdout


def test_a_folder_too_deep_to_list_is_reported_and_the_others_analyzed(
    tmp_path: Path, deep: Path
) -> None:
    # past 4,096 bytes of path, listing a folder fails (ENAMETOOLONG): Path.rglob's OSError
    # was a traceback and lost every other file's result; now that folder is the one error
    _nested(deep, 250, "d" * 30)
    shutil.copy(ROOT / "access_specs" / "column_read_32x33.yaml", tmp_path / "good.yaml")
    for command in ("analyze", "lint"):
        ran = shmem(command, "deep", "good.yaml", cwd=tmp_path)
        assert ran.code == 2, ran.text[-2000:]
        assert "Traceback" not in ran.text
        assert "error: cannot look into this folder: File name too long" in ran.text
        assert ("2 specs, 2 accesses" if command == "analyze" else "1 of 2 files") in ran.text


def test_no_module_asks_pathlib_whether_a_file_exists() -> None:
    """``Path.is_file()`` and its kin raise where ``os.path``'s answer False (see above)."""
    asks = re.compile(r"\.(is_file|is_dir|exists|is_symlink|is_fifo|is_socket)\(\)")
    found = []
    for source in sorted((ROOT / "shmem_cli").rglob("*.py")):
        for n, line in enumerate(source.read_text().splitlines(), 1):
            if asks.search(line):
                found.append(f"{source.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []
