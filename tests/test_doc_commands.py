"""Every command README.md, docs/*.md and the --help texts print runs as printed.

The commands (tests/doc_commands.py finds and sorts them) run from a copy of the
repository root, in the order the pages print them (a baseline is written before it
is read), each distinct command once: in this process when it is a plain command,
through bash when it has a pipe, a redirection or ``&&``. Each must exit with a
status its command documents (0; lint and verify also 1, "found what it checks
for") and print no traceback. Where a page shows a command's output in full, the
output must be what the command prints now. A command that needs a GPU is skipped
with that reason; a ``shmem trace`` of a ``.cu`` file uses the cubin kept for it in
tests/data/doc_cubins (the same nvcc flags and source, checked below), so that this
needs no nvcc and compiles nothing.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain

from . import doc_commands as docs
from .doc_commands import ROOT, Command

COMMANDS = docs.every_command()
TO_RUN = list({c.text: c for c in reversed(COMMANDS) if docs.kind(c) == "run"}.values())[::-1]
FOUND_STATUS = {"lint", "verify"}  # exit 1: lint findings, verify mismatches
SHELL = re.compile(r"[|&;<>]")


def where_all(command: Command) -> str:
    return ", ".join(c.where for c in COMMANDS if c.text == command.text)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's files (not the package: the installed shmem runs)."""
    root = tmp_path_factory.mktemp("repo")
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in listed:
        source = ROOT / name
        if name.startswith("shmem_cli/") or not source.is_file() or source.is_symlink():
            continue
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, root / name)
    return root


@pytest.fixture
def kept_cubins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``shmem trace FILE.cu`` takes the kept cubin of that very source and flags."""

    def compile_cu(
        source: Path, arch: str, folder: Path, extra: tuple[str, ...] = (), **_: object
    ) -> Path:
        kept = docs.Compile(Path(os.path.relpath(source, Path.cwd())), arch, tuple(extra)).kept
        assert kept.is_file(), f"no kept cubin for {source}: run python3 -m tests.doc_commands"
        out = folder / (source.stem + ".cubin")
        shutil.copyfile(kept, out)
        return out

    monkeypatch.setattr(toolchain, "compile_cu", compile_cu)
    yield


def run(command: Command, cwd: Path) -> tuple[int, str]:
    """Exit status and output (standard output and error) of the command, run in ``cwd``."""
    if SHELL.search(command.text.replace("'<", "").replace(">'", "")):
        bin_dir = Path(sys.executable).parent
        if not (bin_dir / "shmem").is_file():
            pytest.skip(f"no shmem script beside {sys.executable} to run a shell pipeline")
        env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        env["NO_COLOR"] = "1"
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command.text],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return done.returncode, done.stdout + done.stderr
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, command.argv[1:], env={"NO_COLOR": "1", "COLUMNS": "200"})
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{command.text} crashed") from result.exception
    return result.exit_code, result.output


def _speed(command: Command) -> object:
    """In `make test` every command whose output a page shows, and one trace of a `.cu`; a
    trace or sweep of a kernel, or an analysis of every example, whose output no page shows
    (seconds each) runs in the slow suite."""
    shown = any(
        c.shown is not None or c.excerpt is not None for c in COMMANDS if c.text == command.text
    )
    kernel = command.argv[1] in ("trace", "sweep") and any(a.endswith(".cu") for a in command.argv)
    every = command.argv[1] in ("analyze", "examples") and "access_specs/" in command.argv
    slow = (kernel or every) and not shown and command.text != FAST_TRACE
    return pytest.param(command, marks=pytest.mark.slow if slow else ())


#: the one documented trace of a `.cu` that `make test` runs though no page shows its output
FAST_TRACE = (
    "shmem trace access_specs/kernels/transpose.cu -k transpose_naive --block 32,8 --arg n=32"
)


@pytest.mark.usefixtures("kept_cubins")
@pytest.mark.parametrize("command", [_speed(c) for c in TO_RUN], ids=[c.text[:70] for c in TO_RUN])
def test_documented_command_runs_as_printed(command: Command, checkout: Path) -> None:
    for compiled in docs.compiles_of(command):
        if not compiled.kept.is_file() and toolchain.which("nvcc") is None:
            pytest.skip(f"needs nvcc to compile {compiled.source} (no kept cubin)")
    if command.argv[1] == "trace" and toolchain.which("nvdisasm") is None:
        pytest.skip("needs nvdisasm (pip install 'shmem[cuda]')")
    for writer in _writers_of_what_it_reads(command, checkout):
        # the pages write a baseline before they read it; two test workers may each run
        # one of the two commands, in their own checkout
        assert run(writer, checkout)[0] in (0, 1), f"{writer.where}: `{writer.text}` failed"
    status, output = run(command, checkout)
    found_status = command.argv[1] in FOUND_STATUS or "--compare" in command.argv
    allowed = {0, 1} if found_status else {0}  # trace --compare: exit 1 on a disagreement
    assert status in allowed, f"{where_all(command)}: `{command.text}` exited {status}:\n{output}"
    assert "Traceback" not in output, f"{where_all(command)}: `{command.text}`:\n{output}"
    got = "\n".join(line.rstrip() for line in output.rstrip("\n").splitlines())
    for c in COMMANDS:
        if c.text == command.text and c.shown is not None:
            assert got == c.shown, f"{c.where}: the output of `{c.text}` is not what it shows"
        if c.text == command.text and c.excerpt is not None:
            missing = missing_from(c.excerpt, got.splitlines())
            assert missing is None, (
                f"{c.where}: the excerpt of `{c.text}`'s output shows a line it does not "
                f"print (in this order):\n{missing}\n--- it prints:\n{got}"
            )


def missing_from(excerpt: tuple[str, ...], printed: list[str]) -> str | None:
    """The first line of ``excerpt`` that does not begin a line of ``printed`` after the
    line the one before it began (an excerpt keeps the output's order and may cut a line
    short), or None when every line does."""
    at = 0
    for line in excerpt:
        found = next((i for i in range(at, len(printed)) if printed[i].startswith(line)), None)
        if found is None:
            return line
        at = found + 1
    return None


def test_an_excerpt_is_matched_in_order_and_by_its_lines_beginnings() -> None:
    printed = ["header", "row 1 ok", "row 2 ok", "note: a long note cut here"]
    assert missing_from(("row 1", "note: a long"), printed) is None
    assert missing_from(("row 2 ok", "row 1 ok"), printed) == "row 1 ok"
    assert missing_from(("row 3",), printed) == "row 3"


def _writers_of_what_it_reads(command: Command, checkout: Path) -> list[Command]:
    """The documented commands that write a baseline ``command`` reads (``--baseline F``)
    and that is not in ``checkout`` yet."""
    argv = command.argv
    reads = {argv[i + 1] for i in range(len(argv) - 1) if argv[i] == "--baseline"}
    missing = {name for name in reads if not (checkout / name).exists()}
    return [
        c
        for c in TO_RUN
        if any(c.argv[i] == "--write-baseline" and c.argv[i + 1] in missing
               for i in range(len(c.argv) - 1))
    ]  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [c for c in COMMANDS if docs.kind(c) == "gpu"],
    ids=lambda c: c.text[:70],
)
def test_commands_that_need_a_gpu_say_so_and_are_skipped(command: Command) -> None:
    assert command.argv[1] == "verify", f"{command.where}: only shmem verify needs a GPU"
    pytest.skip(f"needs a GPU ({command.where}: {command.comment})")


def test_every_verify_that_profiles_is_marked() -> None:
    # verify without --emit or --from-ncu profiles on this machine's GPU: the page says so
    for c in COMMANDS:
        if docs.kind(c) == "run" and c.argv[1] == "verify":
            offline = {"--emit", "--from-ncu"} & set(c.argv)
            assert offline, f"{c.where}: `{c.text}` needs a GPU: say '# on a GPU'"


def test_references_and_synopses_name_real_commands_and_options() -> None:
    for c in COMMANDS:
        if docs.kind(c) in ("reference", "synopsis") and not c.argv[1].startswith("-"):
            assert main.get_command(click.Context(main), c.argv[1]) is not None, c.where
        if docs.kind(c) == "reference":
            assert not docs.unknown_options(c.argv[1:]), f"{c.where}: {c.text}"


def test_make_commands_name_makefile_targets() -> None:
    targets = docs.make_targets()
    makes = [c for c in COMMANDS if docs.kind(c) == "make"]
    assert makes
    for c in makes:
        named = [t for t in c.argv[1:] if "=" not in t and not t.startswith("-")]
        assert named and set(named) <= targets, f"{c.where}: `{c.text}`"


def test_the_finder_sees_the_pages_and_help_texts() -> None:
    # the finder itself: commands from a shell block, a console block, inline code, --help
    places = {c.where.split(":")[0] for c in COMMANDS}
    assert {"README.md", "docs/tutorial.md", "docs/lint.md", "shmem --help"} <= places
    assert "shmem trace --help" in places
    texts = {c.text for c in TO_RUN}
    assert "shmem examples transpose_naive | shmem analyze -" in texts
    assert any(t.startswith("shmem trace access_specs/kernels/matmul.cu") for t in texts)
    readme = [c.text for c in COMMANDS if c.where.startswith("README.md")]
    assert all("matmul.cu" not in t or "access_specs/kernels/matmul.cu" in t for t in readme)
    kinds = {docs.kind(Command(t, "x")) for t in ("shmem trace", "shmem analyze PATHS...")}
    assert kinds == {"reference", "synopsis"}
    assert shlex.split("shmem trace k.cu -k 'matmul<32>'")[-1] == "matmul<32>"


def test_a_trace_example_in_the_main_help() -> None:
    text = CliRunner().invoke(main, ["--help"]).output
    assert re.search(r"^\s+shmem trace \S+\.cu ", text, re.M)


#: every kept cubin of a documented command, with the compile that makes it
COMPILES = {c.kept: c for command in COMMANDS for c in docs.compiles_of(command)}


def test_every_documented_compile_has_its_kept_cubin() -> None:
    assert COMPILES, "the docs trace a .cu file"
    for kept, c in COMPILES.items():
        assert kept.is_file(), f"no kept cubin for {c.source}: run python3 -m tests.doc_commands"
    stale = set(docs.KEPT_CUBINS.glob("*.cubin")) - set(COMPILES)
    assert not stale, f"unused kept cubins {sorted(stale)}: run python3 -m tests.doc_commands"


# one compile of each source in `make test` (its plain one); those with -D options slow
@pytest.mark.skipif(toolchain.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.skipif(toolchain.which("nvdisasm") is None, reason="needs nvdisasm")
@pytest.mark.parametrize(
    "kept",
    # in `make test` the first compile without options; the others in the slow suite
    [
        pytest.param(k, marks=pytest.mark.slow if c.nvcc_args or n else ())
        for n, (k, c) in enumerate((k, c) for k, c in COMPILES.items() if not c.nvcc_args)
    ]
    + [pytest.param(k, marks=pytest.mark.slow) for k, c in COMPILES.items() if c.nvcc_args],
    ids=lambda k: k.name,
)
def test_a_kept_cubin_is_the_compile_of_its_documented_kernel(kept: Path, tmp_path: Path) -> None:
    c = COMPILES[kept]  # the kept cubin is what nvcc makes of the source today
    fresh = toolchain.compile_cu(ROOT / c.source, c.arch, tmp_path, c.nvcc_args)
    assert sass_only(toolchain.disassemble(fresh)) == sass_only(toolchain.disassemble(kept))


def sass_only(listing: str) -> list[str]:
    """The instructions of a disassembly, without its line-table comments (file paths)."""
    return [line for line in listing.splitlines() if "/*" in line and "//##" not in line]
