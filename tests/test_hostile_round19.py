"""Hostile inputs of the nineteenth adversarial round (docs/robustness.md, "What was found and
fixed", item 19).

Standard output and standard error that cannot be written (a full disk, a reader gone away):
every command's output, its ``--help`` and ``shmem --version`` included, is said as a failed
output with exit status 2, and a message that cannot be written never changes the exit status.
Worker counts (``-j``) are bounded. A project's config names only its own files. A CSV line
is bounded before Python's csv reader splits it.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.commands.common import MAX_JOBS

from .conftest import TEST_DATA
from .hostile import CUBIN, REPO

FULL = "/dev/full"
needs_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full")


def _run(*args: str, stdout: int | None = None, stderr: int | None = None) -> tuple[int, str]:
    """``shmem ARGS`` as its own process, this checkout's code; its status and standard error
    (or output, where standard error is the one that fails)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "shmem_cli.cli", *args],
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE if stderr is None else stderr,
        timeout=60,
        check=False,
        env=env,
    )
    said = done.stderr if stderr is None else done.stdout
    return done.returncode, said.decode(errors="replace")


def _name(args: tuple[str, ...]) -> str:
    return " ".join(os.path.basename(arg) for arg in args)


#: commands whose output did not go through the report's guarded write
OUTPUTS = [
    ("--help",),
    ("--version",),
    ("analyze", "--help"),
    ("schema",),
    ("rules",),
    ("rules", "SH001"),
    ("examples",),
    ("examples", "--path"),
    ("trace", str(CUBIN), "--list-params"),
]


@pytest.mark.slow
@needs_full
@pytest.mark.parametrize("args", OUTPUTS, ids=_name)
def test_output_on_a_full_device_is_said_with_status_2(args: tuple[str, ...]) -> None:
    # schema, rules, examples, --list-params and subcommands' --help: "internal error:
    # OSError"; the group's --help and --version: a traceback, exit status 1
    with open(FULL, "wb") as full:
        code, said = _run(*args, stdout=full.fileno())
    assert code == 2, said
    assert "<standard output>: error: cannot write the report: no space left" in said, said
    assert "Traceback" not in said and "internal error" not in said, said


@pytest.mark.parametrize("args", OUTPUTS[:3], ids=_name)
def test_output_to_a_closed_pipe_is_said_with_status_2(args: tuple[str, ...]) -> None:
    # the group's --help was exit status 1 (click's own handling of a broken pipe), the others
    # "internal error: BrokenPipeError"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        code, said = _run(*args, stdout=write_end)
    finally:
        os.close(write_end)
    assert code == 2, said
    assert "cannot write the report: the reader has gone away" in said, said
    assert "Traceback" not in said and "Exception ignored" not in said, said


@needs_full
def test_a_message_that_cannot_be_written_keeps_the_exit_status(tmp_path: Path) -> None:
    # a refused spec exited 1 (the status of findings: "the specs have conflicts" to a CI job)
    # when standard error was full: the error's own write raised, and so did the internal
    # error's; a usage error likewise
    bad = tmp_path / "bad.yaml"
    bad.write_text("arrays: [\n")
    with open(FULL, "wb") as full:
        code, _ = _run("analyze", str(bad), stderr=full.fileno())
        assert code == 2
        code, _ = _run("nosuch", stderr=full.fileno())
        assert code == 2
        code, _ = _run("analyze", "--no-such-option", stderr=full.fileno())
        assert code == 2


@pytest.mark.parametrize("command", [("lint",), ("sweep", "k.cu")])
def test_worker_counts_are_bounded(command: tuple[str, ...], tmp_path: Path) -> None:
    # lint -j took any count: -j 1000000000 over 10,000 specs started 625 worker processes
    spec = tmp_path / "s.yaml"
    spec.write_text("arrays: [\n")
    result = CliRunner().invoke(main, [*command, "-j", "1000000000", str(spec)])
    assert result.exit_code == 2, result.output
    assert f"<={MAX_JOBS}" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("key", "value", "option"),
    [
        ("paths", '["../outside"]', "shmem lint DIR"),
        ("baseline", '"../outside/kube.yaml"', "--baseline FILE"),
        ("paths", '["linked"]', "shmem lint DIR"),  # a link inside to a folder outside
    ],
)
def test_a_config_names_only_its_projects_files(
    key: str, value: str, option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a cloned repository's config had lint read any file: baseline = "/etc/shadow" printed
    # its first line in the "not valid JSON" error, and paths = ["/home/u/.kube"] quoted keys
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kube.yaml").write_text("token: SECRET-TOKEN\n")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "linked").symlink_to(outside)
    (project / "pyproject.toml").write_text(f"[tool.shmem]\n{key} = {value}\n")
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["lint", *(["specs"] if key == "baseline" else [])])
    assert result.exit_code == 2, result.output
    assert "pyproject.toml:2:1: error: [tool.shmem] " + key in result.output, result.output
    assert f"is outside the project ({os.path.realpath(project)})" in result.output
    assert f"on the command line ({option})" in result.output
    assert "SECRET" not in result.output


def test_a_config_may_name_its_own_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "sub").mkdir()
    (project / "specs").mkdir()
    (project / "specs" / "bad.yaml").write_text("arrays: [\n")
    # a config in a subfolder may name the repository's other folders
    (project / "sub" / "pyproject.toml").write_text('[tool.shmem]\npaths = ["../specs"]\n')
    monkeypatch.chdir(project / "sub")
    result = CliRunner().invoke(main, ["lint"])
    assert result.exit_code == 2, result.output
    assert "bad.yaml:2:1: error: invalid YAML" in result.output, result.output


@pytest.mark.parametrize("reader", ["compare", "from-ncu"])
def test_a_csv_line_of_millions_of_fields_is_refused_before_it_is_split(
    reader: str, tmp_path: Path
) -> None:
    # Python's csv reader makes a record's list of fields at once: a --compare export whose
    # one line is 150 million commas (a gzip of 150 KB) held 1.6 GB for 22 s; verify
    # --from-ncu's 64 MiB of them, 0.7 GB
    from shmem_cli.plumbing.errors import ShmemError
    from shmem_cli.trace.ncu.exports import read_ncu_export
    from shmem_cli.verify.ncu import read_csv

    head = b'"ID","Kernel Name","Metric Name","Metric Value"\n'
    text = head + b'"1","k"' + b"," * 8_000_000 + b"\n"
    path = tmp_path / "ncu.csv"  # verify --from-ncu reads plain text, --compare gzip too
    path.write_bytes(gzip.compress(text) if reader == "compare" else text)
    tracemalloc.start()
    try:
        with pytest.raises(ShmemError) as caught:
            read_ncu_export(path) if reader == "compare" else read_csv(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.pos is not None and caught.value.pos.line == 2
    assert "a line longer than 1 MiB" in caught.value.message
    assert peak < 48 << 20, peak  # the 8 MB text and the gzip's, no list of its fields


def test_a_baseline_of_millions_of_tiny_values_is_refused_before_it_is_built(
    tmp_path: Path,
) -> None:
    # 64 MiB of {},{},... (22 million dicts) held 1.75 GB before "not a shmem baseline"
    from shmem_cli.lint.baseline import MAX_TOKENS, load_baseline, render_baseline
    from shmem_cli.plumbing.errors import ShmemError

    path = tmp_path / "baseline.json"
    path.write_text('{"findings": [' + "{}," * MAX_TOKENS + "{}]}")
    tracemalloc.start()
    try:
        with pytest.raises(ShmemError) as caught:
            load_baseline(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "more than the 8,000,000 of some 300,000 findings" in caught.value.message
    assert peak < 64 << 20, peak  # the file's bytes, no dict built
    # a baseline shmem writes is read (its entries have about 25 such characters each)
    path.write_text(render_baseline([]))
    assert not load_baseline(path)


def test_a_cache_root_keeps_only_the_entries_it_lists(tmp_path: Path) -> None:
    # every entry was kept whole, its metadata too, to say "N entries; choose one": 60 entries
    # of 0.8 MB of {},{},... held 1.15 GB (256 of 1 MiB, the 256 MiB a root's metadata may
    # have: about 5 GB)
    import json
    import shutil

    from shmem_cli.trace.triton.metadata import TritonError
    from shmem_cli.trace.triton.roots import MAX_LISTED, entries_under, open_entry

    source = TEST_DATA / "triton" / "cache" / "4SGPYMGJCKR2SIRCQ6L7K3M4GQ5ESPIW45W5I2LMJFJ2WNCHLKEA"
    meta = json.loads((source / "softmax_rows.json").read_text())
    meta["junk"] = [{}] * 1000
    root = tmp_path / "root"
    for i in range(MAX_LISTED + 20):
        entry = root / f"E{i:03d}"
        entry.mkdir(parents=True)
        for suffix in (".cubin", ".ttgir"):
            shutil.copy(source / f"softmax_rows{suffix}", entry / f"softmax_rows{suffix}")
        (entry / "softmax_rows.json").write_text(json.dumps(meta))
    kept, count, names = entries_under(root, None)
    assert (len(kept), count, names) == (MAX_LISTED + 1, MAX_LISTED + 20, {"softmax_rows"})
    with pytest.raises(TritonError) as caught:
        open_entry(root, "softmax_rows")
    assert f"{MAX_LISTED + 20} entries of 'softmax_rows'; choose one (--kernel HASH)" in str(
        caught.value
    )
    assert "... and 20 more" in str(caught.value)


@pytest.mark.parametrize("command", ["analyze", "lint"])
def test_a_bug_one_file_reaches_hides_none_of_the_others(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an exception shmem does not expect (a bug a hostile spec reaches past the checks) was
    # one line for the whole run, every other file's result lost; it is that file's error now
    import shmem_cli.analysis.analyze as analyze_module
    import shmem_cli.lint.core as lint_module

    real = analyze_module.analyze_spec

    def buggy(spec: Any, **kwargs: Any) -> Any:
        if spec.name.startswith("trigger"):
            raise IndexError("tuple index out of range")
        return real(spec, **kwargs)

    for module in (analyze_module, lint_module):
        monkeypatch.setattr(module, "analyze_spec", buggy)
    monkeypatch.delenv("SHMEM_TRACEBACK")
    example = (REPO / "shmem_cli" / "example_specs" / "tutorial_sequential.yaml").read_text()
    (tmp_path / "a.yaml").write_text(example.replace("name: tutorial", "name: trigger", 1))
    (tmp_path / "b.yaml").write_text(example)
    result = CliRunner().invoke(main, [command, str(tmp_path), "--no-color"])
    assert result.exit_code == 2, result.output
    assert "a.yaml: error: internal error: IndexError: tuple index out of range; a bug in" in (
        result.output
    )
    # b.yaml's accesses, reported (each prints those with conflicts, and counts the rest)
    others = "buf[2*tid] (stride 2)" if command == "analyze" else "in 1 of 2 files, 3 accesses"
    assert others in result.output, result.output
    monkeypatch.setenv("SHMEM_TRACEBACK", "1")  # the tests' setting: raised whole
    with pytest.raises(IndexError):
        CliRunner().invoke(main, [command, str(tmp_path)], catch_exceptions=False)


def test_a_section_table_of_huge_headers_is_not_read(tmp_path: Path) -> None:
    # e_shentsize 65,535 x e_shnum 65,535 in a sparse file of 4 GiB (4 KiB on disk): the host
    # reader read the whole 4 GiB "table", 8.4 GB held for 33 s; an ELF64 header is 64 bytes
    import struct

    from shmem_cli.trace.kernel.binary_formats.fatbin import cubins_in_file

    head = bytearray(64)
    head[:7] = b"\x7fELF\x02\x01\x01"
    struct.pack_into("<HH", head, 0x10, 2, 62)  # an x86-64 executable
    struct.pack_into("<Q", head, 0x28, 64)  # e_shoff
    struct.pack_into("<HHH", head, 0x3A, 0xFFFF, 0xFFFF, 0)
    path = tmp_path / "sparse.exe"
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(64 + 0xFFFF * 0xFFFF)
    tracemalloc.start()
    try:
        assert cubins_in_file(path, "sm_90") == []  # left to cuobjdump, under its limits
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_an_exclude_glob_of_many_wildcards_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1,000 exclude globs of 480 '*' each (a 1 MiB config) took 16 s to build their patterns
    # before the first spec was linted
    from shmem_cli.lint.config import MAX_GLOB_STARS

    (tmp_path / ".git").mkdir()
    (tmp_path / "s.yaml").write_text("arrays: [\n")
    glob = "*a" * (MAX_GLOB_STARS + 1)
    (tmp_path / "pyproject.toml").write_text(f'[tool.shmem]\nexclude = ["{glob}"]\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["lint", "s.yaml"])
    assert result.exit_code == 2, result.output
    assert "pyproject.toml:2:1: error: [tool.shmem] exclude: a glob of 17 '*' wildcards" in (
        result.output
    )
    result = CliRunner().invoke(main, ["lint", "--no-config", "--exclude", glob, "s.yaml"])
    assert result.exit_code == 2 and "--exclude: a glob of 17 '*' wildcards" in result.output
    # within the bound a glob works as before
    result = CliRunner().invoke(main, ["lint", "--no-config", "--exclude", "*" * 16, "s.yaml"])
    assert "no spec files to lint" in result.output, result.output


def test_a_python_file_of_many_unclosed_defs_is_tried_a_few_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an older Triton entry's kernel .py (named by its TTGIR) of 20,000 unclosed
    # "def softmax_rows(" lines, 360 KB, ran past 300 s: each header was tokenized up to 64 KB
    import shutil

    from shmem_cli.trace.triton import ttgir
    from shmem_cli.trace.triton.cache import read_entry

    source = next(
        (TEST_DATA / "triton" / "versions" / "3.4.0" / "cache").glob("*/softmax_rows.ttgir")
    )
    entry = tmp_path / "entry"
    entry.mkdir()
    for suffix in (".json", ".cubin"):
        shutil.copy(source.with_suffix(suffix), entry / f"softmax_rows{suffix}")
    text = source.read_text()
    written = text.split('loc("', 1)[1].split('"', 1)[0]  # the .py the TTGIR names
    (entry / "softmax_rows.ttgir").write_text(text.replace(written, str(tmp_path / "k.py")))
    (tmp_path / "k.py").write_text("def softmax_rows(\n" * 20_000)
    tried: list[str] = []
    real = ttgir._header_end
    monkeypatch.setattr(ttgir, "_header_end", lambda piece: tried.append(piece[:1]) or real(piece))
    found = read_entry(entry / "softmax_rows.json", lambda _path: True)
    assert len(tried) == ttgir.MAX_DEF_TRIES  # then the TTGIR's own names are kept
    assert found.params and found.params[0].name == "arg0"


def _arrays_spec(path: Path, arrays: int, iterations: int) -> Path:
    """A spec of ``arrays`` arrays, each read by two conflicting accesses of 1,024 threads x
    ``iterations``."""
    declared = "".join(f"  b{j}: {{dtype: float, shape: [4096]}}\n" for j in range(arrays))
    accesses = "".join(
        f"  - name: a{j}_{a}\n    array: b{j}\n    op: load\n"
        f"    index: [(tid * 32 + k + {a}) % 4096]\n    loop: {{k: 0..{iterations - 1}}}\n"
        for j in range(arrays)
        for a in range(2)
    )
    path.write_text(f"name: s\nblock: [1024]\narrays:\n{declared}accesses:\n{accesses}")
    return path


def test_syntheses_of_a_run_are_bounded_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each array's swizzle synthesis (about 10 s and 0.9 GB at its 16M lanes) had no budget
    # beyond its own: analyze --suggest of 12 such arrays took 78 s, and sweep --swizzle synth
    # ran one a pad (--pad 0..5: 50 s; --pad 0..999: hours)
    from shmem_cli.analysis import spec_synthesis, suggest
    from shmem_cli.spec.compile import load_spec

    spec_path = _arrays_spec(tmp_path / "s.yaml", arrays=4, iterations=16)
    lanes = 2 * 1024 * 16  # one array's
    monkeypatch.setattr(spec_synthesis, "MAX_RUN_LANES", 2 * lanes)
    run: list[str] = []
    real = spec_synthesis.synthesized
    monkeypatch.setattr(
        spec_synthesis,
        "synthesized",
        lambda spec, array, *more: run.append(array) or real(spec, array, *more),
    )
    spec = load_spec(spec_path)
    from shmem_cli.analysis.analyze import analyze_spec

    suggest.fixes(spec, analyze_spec(spec))
    assert run == ["b0", "b1"]  # the budget of two; the others' fixes without a synthesis
    result = CliRunner().invoke(
        main, ["sweep", str(spec_path), "--swizzle", "b0=synth", "--pad", "b0=0..5"]
    )
    assert result.exit_code == 2, result.output
    assert "the sweep's synth swizzles need more than 65,536 lane addresses" in result.output


def test_a_dash_for_output_is_standard_output(tmp_path: Path, monkeypatch: Any) -> None:
    # -o - and --svg - wrote a file named "-" in the current folder
    monkeypatch.chdir(tmp_path)
    spec = str(REPO / "access_specs" / "column_read_32x32.yaml")
    res = CliRunner().invoke(main, ["analyze", spec, "-o", "-", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert res.output.lstrip().startswith("{") and '"schema_version": 1' in res.output
    res = CliRunner().invoke(main, ["analyze", spec, "--svg", "-", "--no-tables"])
    assert res.exit_code == 0 and "<svg" in res.output, res.output
    assert list(tmp_path.iterdir()) == []
