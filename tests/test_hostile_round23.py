"""Hostile inputs of the twenty-third adversarial round (docs/robustness.md, "What was found
and fixed", item 23).

A file name that is not UTF-8 reached every JSON output (``analyze``, ``sweep``, ``lint``'s
JSON, SARIF and baselines) as a lone surrogate escape (``"bad\\udcff.yaml"``), which strict
JSON parsers refuse; each stray byte is written as the text ``\\xff`` now
(``plumbing.json_text``), and a baseline matches its findings by the same spelling.

``shmem analyze /`` walked the whole machine and analyzed every YAML file it found, and a link
named like a spec was read wherever it led; FIFOs and links to nothing were passed over
unsaid. One walk (``spec.spec_files``) for ``analyze``, ``lint`` and ``verify`` now: bounded
(names looked at, specs taken: past either the folder is one error, the other paths still
analyzed), regular files only, no link out of the folder given, each name like a spec's that is
skipped said on standard error, the lint's excluded folders not entered.

``analyze`` did not confine the files a spec's ``kernel:`` names (its source, ``@FILE``
values, a map's ``data=@FILE``, ``kernel.params``) as the lint does: it took a spec the lint
refused, and the lint said the first file out of the tree only. The spec's compile confines
each now, at its value, with the lint's roots ([tool.shmem] source-roots, which ``analyze``
reads too).

Found hunting: the controls of bidirectional text in a name reached the terminal raw; an ELF
file of another class or byte order was taken for a host executable, and a host program without
device code was "cuobjdump failed (exit status 255)"; a Triton entry whose .json's num_warps
is not its cubin's block was said as a --block never given.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain
from shmem_cli.plumbing import json_text
from shmem_cli.spec import spec_files

from .conftest import TEST_DATA, needs_nvdisasm
from .hostile import CUBIN, refused, shmem

ROOT = Path(__file__).resolve().parent.parent
COLUMN = ROOT / "access_specs" / "column_read_32x32.yaml"
TRITON_ENTRY = (
    TEST_DATA / "triton" / "cache" / "DEKKSS6LMVZRLUWHJITG765ALDXAATTMELW7NBX6MBSYHAQKZNMA"
)
#: a name with a byte that is no UTF-8 (0xff), as os.fsdecode gives it
BAD = os.fsdecode(b"bad\xff.yaml")


def _strict(text: str) -> object:
    """The JSON text read as a strict parser reads it: UTF-8 and no lone surrogate."""
    text.encode("utf-8")  # raises on a lone surrogate written raw
    unpaired = re.sub(r"\\ud[89ab][0-9a-f]{2}\\ud[c-f][0-9a-f]{2}", "", text.replace("\\\\", ""))
    assert not re.search(r"\\ud[89a-f]", unpaired), text[:2000]
    return json.loads(text)


def _conflicting(folder: Path) -> Path:
    spec = folder / BAD
    spec.write_text(COLUMN.read_text().replace("{max_ways: 32}", "{conflict_free: true}"))
    return spec


def test_a_stray_byte_is_spelled_and_other_text_kept() -> None:
    assert json_text.spelled(os.fsdecode(b"a\xff\x80b")) == "a\\xff\\x80b"
    assert json_text.spelled("\ud800x") == "\\ud800x"
    assert json_text.spelled("caf\u00e9 \U0001f600") == "caf\u00e9 \U0001f600"
    doc = {BAD: [BAD, {"k": BAD}], "n": 1, "e": "\U0001f600"}
    for ascii_only in (True, False):
        text = json_text.dumps(doc, ensure_ascii=ascii_only)
        assert _strict(text) == {
            "bad\\xff.yaml": ["bad\\xff.yaml", {"k": "bad\\xff.yaml"}],
            "n": 1,
            "e": "\U0001f600",
        }


@pytest.mark.parametrize(
    "args",
    [
        ("analyze", "--format", "json", "."),
        ("lint", "--format", "json", "."),
        ("lint", "--format", "sarif", "."),
        ("sweep", BAD, "--pad", "0,1", "--format", "json"),
    ],
)
def test_every_json_output_names_a_non_utf8_file_in_valid_json(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    _conflicting(tmp_path)
    ran = shmem(*args, cwd=tmp_path)
    assert ran.code in (0, 1), ran.text[-2000:]
    doc = _strict(ran.stdout)
    said = json.dumps(doc)
    assert "bad%FF.yaml" in said if "sarif" in args else "bad\\\\xff.yaml" in said


def test_a_baseline_of_a_non_utf8_name_is_valid_json_and_still_matches(tmp_path: Path) -> None:
    _conflicting(tmp_path)
    wrote = shmem("lint", "--write-baseline", "b.json", ".", cwd=tmp_path)
    assert wrote.code == 0, wrote.text[-2000:]
    doc = _strict((tmp_path / "b.json").read_text())
    assert isinstance(doc, dict)
    assert [f["file"] for f in doc["findings"]] == ["bad\\xff.yaml"]
    ran = shmem("lint", "--baseline", "b.json", ".", cwd=tmp_path)
    assert ran.code == 0, ran.text[-2000:]
    assert "1 accepted by the baseline" in ran.text
    shutil.copy(tmp_path / BAD, tmp_path / "other.yaml")  # not baselined: still a finding
    assert shmem("lint", "--baseline", "b.json", ".", cwd=tmp_path).code == 1


def _tree(tmp_path: Path) -> Path:
    """A folder of one spec, a link to it, and names like a spec's that are no spec to read:
    a FIFO, a link out of the folder, a link to itself; and a link to a folder outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(COLUMN, outside / "secret.yaml")
    tree = tmp_path / "t"
    tree.mkdir()
    shutil.copy(COLUMN, tree / "good.yaml")
    (tree / "in.yaml").symlink_to("good.yaml")
    (tree / "out.yaml").symlink_to(outside / "secret.yaml")
    (tree / "loop.yaml").symlink_to("loop.yaml")
    (tree / "folder").symlink_to(outside)
    os.mkfifo(tree / "fifo.yaml")
    return tree


@pytest.mark.parametrize("command", ["analyze", "lint"])
def test_a_walk_takes_regular_files_in_the_folder_and_says_what_it_skipped(
    tmp_path: Path, command: str
) -> None:
    _tree(tmp_path)
    ran = shmem(command, "t", "--format", "json", cwd=tmp_path)
    assert ran.code == 0, ran.text[-2000:]
    paths = re.findall(r'"(?:path|file)": "([^"]*)"', ran.stdout)
    # the link inside is read (the lint takes each file once, by what the link names)
    taken = ["t/good.yaml", "t/in.yaml"] if command == "analyze" else ["t/good.yaml"]
    assert sorted(set(paths)) == taken, ran.stdout[-2000:]
    assert ran.stderr.splitlines() == [
        f"shmem {command}: skipped t/out.yaml: a link to {tmp_path / 'outside' / 'secret.yaml'}"
        ", outside t",
        f"shmem {command}: skipped t/loop.yaml: a link to no file (or a loop of links)",
        f"shmem {command}: skipped t/fifo.yaml: a FIFO (named pipe), not a regular file",
    ]
    assert not ran.opened(tmp_path / "outside")


def test_a_folder_past_the_walk_s_bounds_is_one_error_and_the_others_analyzed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big"
    big.mkdir()
    for i in range(6):
        shutil.copy(COLUMN, big / f"s{i}.yaml")
    shutil.copy(COLUMN, tmp_path / "good.yaml")
    found = spec_files.find_specs([big, tmp_path / "good.yaml"])
    assert len(found.paths) == 7 and found.errors == ()
    monkeypatch.chdir(tmp_path)
    for limit, what in (
        ("MAX_SPECS", "5 spec files"),
        ("MAX_NAMES", "5 names of files and folders"),
    ):
        with monkeypatch.context() as patched:
            patched.setattr(spec_files, limit, 5)
            for command in ("analyze", "lint"):
                ran = CliRunner().invoke(main, [command, "big", "good.yaml"])
                assert ran.exit_code == 2, ran.output
                said = ran.stdout + ran.stderr
                assert (
                    f"big: error: the search for spec files stopped at {what} in this folder "
                    "(the limit), and none of its specs is analyzed: name the folders that hold "
                    "your specs"
                ) in said
                assert "s0.yaml" not in said
                assert ("2 specs, 2 accesses" if command == "analyze" else "of 2 files") in said


def test_the_lint_does_not_walk_into_an_excluded_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "specs").mkdir()
    shutil.copy(COLUMN, tmp_path / "specs" / "good.yaml")
    (tmp_path / "node_modules").mkdir()
    for i in range(6):
        (tmp_path / "node_modules" / f"f{i}.js").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(spec_files, "MAX_NAMES", 5)
    ran = CliRunner().invoke(main, ["lint", ".", "--exclude", "node_modules", "--no-config"])
    assert ran.exit_code == 0, ran.output
    assert "no findings in 1 file, 2 accesses" in ran.stdout
    ran = CliRunner().invoke(main, ["lint", ".", "--no-config"])
    assert ran.exit_code == 2, ran.output
    assert "(or leave the others out: --exclude, [tool.shmem] exclude)" in ran.stdout


KERNEL_OUT = """name: t
block: [32]
kernel:
  source: ../out/k.cu
  args: {a: '@../out/data.bin', b: 'tensormap:dtype=f32,dims=64,box=64,data=@../out/d.bin'}
  const: {c: '@../out/data.bin'}
  params: '@../out/data.bin'
arrays:
  a: {dtype: float, shape: [32]}
accesses:
  - array: a
    index: [lane]
"""


@pytest.mark.parametrize("command", ["analyze", "lint"])
def test_analyze_and_lint_confine_a_spec_s_files_alike_each_at_its_value(
    tmp_path: Path, command: str
) -> None:
    repo, out = tmp_path / "repo", tmp_path / "out"
    (repo / ".git").mkdir(parents=True)
    out.mkdir()
    for name in ("data.bin", "d.bin", "k.cu"):
        (out / name).write_bytes(bytes(256))
    (repo / "k.yaml").write_text(KERNEL_OUT)
    ran = shmem(command, str(repo / "k.yaml"), cwd=repo)
    tree = f"is outside the kernel's source tree ({repo}); keep it inside, or name a wider"
    refused(
        ran,
        f"k.yaml:4:11: error: kernel.source ../out/k.cu {tree}",
        f"k.yaml:5:13: error: kernel.args a: ../out/data.bin {tree}",
        f"k.yaml:5:36: error: kernel.args b: ../out/d.bin {tree}",
        f"k.yaml:6:14: error: kernel.const c: ../out/data.bin {tree}",
        f"k.yaml:7:11: error: kernel.params: ../out/data.bin {tree}",
    )
    assert not ran.opened(out)
    # the configured roots take them, for both commands
    (repo / "pyproject.toml").write_text('[tool.shmem]\nsource-roots = [".", "../out"]\n')
    ran = shmem(command, "k.yaml", "--no-compile" if command == "lint" else "--no-tables", cwd=repo)
    assert "outside" not in ran.text, ran.text[-2000:]
    assert ran.code == 0, ran.text[-2000:]


def test_a_name_with_bidirectional_controls_is_shown_escaped(tmp_path: Path) -> None:
    # U+202E (right-to-left override) reordered the rest of the report's line on a terminal or
    # in a CI log: a spec named "\u202eevil" read "live" (C0 controls were escaped already)
    text = COLUMN.read_text().replace("name: column read, tile[32][32]", 'name: "\\u202eevil"')
    (tmp_path / "s.yaml").write_text(text)
    (tmp_path / "x.yaml").write_text('name: "\u2067x"\nblock: [32]\n')
    ran = shmem("analyze", "s.yaml", "x.yaml", "--no-tables", cwd=tmp_path)
    assert ran.code == 2, ran.text[-2000:]
    for control in ("\u202e", "\u2067"):
        assert control not in ran.text
    assert "s.yaml  \\u202eevil  block 32x32x1" in ran.stdout
    assert '1 | name: "\\u2067x"' in ran.stdout  # the error's line, quoted


@pytest.mark.parametrize(("byte", "value", "said"), [(4, 1, "32-bit little"), (5, 2, "64-bit big")])
def test_an_elf_file_of_another_class_or_byte_order_is_said_as_such(
    tmp_path: Path, byte: int, value: int, said: str
) -> None:
    # a big-endian one was taken for a host executable: "cuobjdump failed (exit status 255)"
    data = bytearray(CUBIN.read_bytes())
    data[byte] = value
    (tmp_path / "k.cubin").write_bytes(bytes(data))
    ran = shmem("trace", str(tmp_path / "k.cubin"), "-b", "32", cwd=tmp_path)
    refused(
        ran,
        f"k.cubin: error: {tmp_path / 'k.cubin'} is a {said}-endian ELF file: a cubin, and an "
        "executable or library with embedded cubins, is a 64-bit little-endian one",
    )
    assert not ran.paths("run")  # no tool asked


@pytest.mark.skipif(toolchain.which("cuobjdump") is None, reason="needs cuobjdump")
def test_a_host_program_without_device_code_is_said_to_hold_no_cubin(tmp_path: Path) -> None:
    # cuobjdump -lelf exits 255 for it, which was "cuobjdump failed (exit status 255)"
    host = tmp_path / "app"
    shutil.copy(sys.executable, host)
    ran = shmem("trace", str(host), "-b", "32", cwd=tmp_path)
    refused(
        ran,
        f"{host} holds no cubin (cuobjdump -lelf lists none): a program built for PTX only",
        "build it with -arch=sm_90, or trace the .cu",
    )
    assert "cuobjdump failed" not in ran.text


def test_a_section_without_a_name_that_runs_past_the_file_is_said_by_its_number(
    tmp_path: Path,
) -> None:
    import struct

    data = bytearray(CUBIN.read_bytes())
    (table,) = struct.unpack_from("<Q", data, 0x28)
    struct.pack_into("<Q", data, table + 0x20, 1 << 60)  # section 0's size (SHT_NULL, no name)
    (tmp_path / "k.cubin").write_bytes(bytes(data))
    ran = shmem("trace", str(tmp_path / "k.cubin"), "-b", "32", cwd=tmp_path)
    refused(ran, "error: not a valid cubin: section 0 (it has no name) runs past the end of")


def test_a_baseline_written_before_with_a_surrogate_escape_still_matches(tmp_path: Path) -> None:
    _conflicting(tmp_path)
    wrote = shmem("lint", "--write-baseline", "b.json", ".", cwd=tmp_path)
    assert wrote.code == 0, wrote.text[-2000:]
    text = (tmp_path / "b.json").read_text()
    (tmp_path / "b.json").write_text(text.replace("bad\\\\xff.yaml", "bad\\udcff.yaml"))
    assert '"file": "bad\\udcff.yaml"' in (tmp_path / "b.json").read_text()  # as shmem wrote it
    ran = shmem("lint", "--baseline", "b.json", ".", cwd=tmp_path)
    assert ran.code == 0, ran.text[-2000:]
    assert "1 accepted by the baseline" in ran.text


@needs_nvdisasm
def test_a_triton_entry_whose_num_warps_is_not_its_cubins_block_is_said_at_num_warps(
    tmp_path: Path,
) -> None:
    # the cubin is built for 128 threads (.reqntid); the .json said num_warps 8: the trace said
    # "--block 256,1,1 (256 threads): ... leave --block out", of a --block never given
    entry = tmp_path / "entry"
    shutil.copytree(TRITON_ENTRY, entry)
    meta = entry / "transpose_tiles.json"
    meta.write_text(meta.read_text().replace('"num_warps": 4', '"num_warps": 8'))
    ran = shmem("trace", str(entry), "--no-tables", cwd=tmp_path)
    refused(
        ran,
        "transpose_tiles.json:1:138: error: unexpected metadata: 'num_warps' is 8 (a block of 256 "
        "threads), where the entry's cubin was built for a block of exactly 128x1x1 (.reqntid): "
        "the entry's files come from different compiles; give an entry folder as Triton wrote it",
    )
    assert "--block" not in ran.text


def test_an_argument_error_shows_the_value_typed_with_its_escapes_escaped(tmp_path: Path) -> None:
    # "shmem: error: no such file or directory: x<ESC>[2J.yaml" cleared the terminal
    ran = shmem("analyze", "x\x1b[2J.yaml", cwd=tmp_path)
    refused(ran, "shmem: error: no such file or directory: x\\x1b[2J.yaml")
    (tmp_path / "k.cu").write_text("__global__ void k(float *p) {}\n")
    ran = shmem("sweep", str(tmp_path / "k.cu"), "-b", "32", "--define", "PAD=\x1b]0;PWN\x07")
    assert ran.code == 2, ran.text[-2000:]
    assert "\x1b" not in ran.text and "\x07" not in ran.text
    assert "--define PAD=\\x1b]0;PWN\\x07" in ran.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("analyze", "s.yaml", "-o", ""), "--output"),
        (("analyze", "s.yaml", "--svg", ""), "--svg"),
        (("lint", "s.yaml", "--baseline", ""), "--baseline"),
        (("lint", "s.yaml", "--write-baseline", ""), "--write-baseline"),
        (("examples", "--copy", ""), "--copy"),
        (("analyze", ""), "PATHS"),
        (("trace", ""), "KERNEL"),
    ],
)
def test_an_empty_file_name_is_refused(tmp_path: Path, args: tuple[str, ...], said: str) -> None:
    # '-o ""' and '--write-baseline ""' wrote to standard output ("wrote 0 findings to "),
    # '--baseline ""' read none, 'examples --copy ""' copied into the folder shmem ran in
    shutil.copy(COLUMN, tmp_path / "s.yaml")
    ran = shmem(*args, cwd=tmp_path)
    refused(ran, f"shmem: error: {said}: the name is empty; name a file or folder")
    assert sorted(os.listdir(tmp_path)) == ["s.yaml"]
    assert ran.stdout == ""


def test_a_checkout_s_git_folder_is_not_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # its loose objects counted toward the bound on names (and a .yaml in it was a spec)
    shutil.copy(COLUMN, tmp_path / "good.yaml")
    (tmp_path / ".git" / "objects").mkdir(parents=True)
    for i in range(8):
        (tmp_path / ".git" / "objects" / f"o{i}").write_text("")
    shutil.copy(COLUMN, tmp_path / ".git" / "x.yaml")
    monkeypatch.setattr(spec_files, "MAX_NAMES", 5)
    found = spec_files.find_specs([tmp_path])
    assert found.paths == (tmp_path / "good.yaml",)
    assert found.errors == ()
