"""The commands the documentation prints: found, sorted by what can be run, and run.

Sources: the fenced shell blocks and the inline code of README.md and docs/*.md
(lines and spans that start with ``shmem`` or ``make``; in a ``console`` block the
``$ `` lines), and the Examples of ``shmem --help`` and of every command's
``--help``. Each command is one of

* ``run``: a complete command; tests/test_doc_commands.py runs it as printed, from
  a copy of the repository root;
* ``gpu``: needs a GPU (profiling with Nsight Compute, or a file such a run wrote);
  the page says so in the command's trailing comment (``# on a GPU ...``, ``# needs a GPU ...``);
* ``synopsis``: a usage line with placeholders (``PATHS...``, ``SPEC``, ``[CODE]``);
* ``reference``: a command or option named in prose (``shmem verify``, ``shmem
  trace --arg``): the command lacks the argument it needs to run;
* ``make``: a ``make`` target (checked against the Makefile, not run: it installs).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from .conftest import ROOT

PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_SHELL_FENCES = {"", "sh", "bash", "shell", "console"}
_INLINE = re.compile(r"`((?:shmem|make) [^`\n]+)`")
_PLACEHOLDER = re.compile(r"^\[?-*[A-Z][A-Z_]*\]?(\.\.\.)?$|\.\.\.|\[[^\]]*[A-Z]{2,}")


@dataclass(frozen=True)
class Command:
    """One printed command, where it is printed, and its trailing shell comment."""

    text: str
    where: str  # "docs/trace.md:22" or "shmem trace --help"
    comment: str = ""
    shown: str | None = None  # the output a console block prints under it in full, if any
    # the lines of an excerpt a console block prints under it (its output cut with ``...``
    # lines, which are left out; a line may also be cut short at its end), if any
    excerpt: tuple[str, ...] | None = None

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.text)


def _joined(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Lines with their ``\\`` continuations joined: (index of the first line, text)."""
    start, parts = 0, list[str]()
    for i, line in enumerate(lines):
        if not parts:
            start = i
        if line.rstrip().endswith("\\"):
            parts.append(line.rstrip()[:-1].strip())
            continue
        parts.append(line.strip())
        yield start, " ".join(p for p in parts if p)
        parts = []
    if parts:
        yield start, " ".join(parts)


def _command(text: str, where: str) -> Command | None:
    text = text.strip()
    if not re.match(r"(shmem|make)( |$)", text):
        return None
    cut = _comment_start(text)
    comment = text[cut:].lstrip("# ") if cut is not None else ""
    return Command(text[:cut].strip(), where, comment)


def _comment_start(text: str) -> int | None:
    """Where the shell comment of a command line starts (a ``#`` after a blank, unquoted)."""
    quote = ""
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and i > 0 and text[i - 1] in " \t":
            return i
    return None


def _lines_under(rest: list[str]) -> list[str]:
    """The lines under a console command up to the next one."""
    out: list[str] = []
    for line in rest:
        if line.startswith("$ "):
            break
        out.append(line.rstrip())
    return out


def _output_under(rest: list[str]) -> str | None:
    """The lines under a console command up to the next one; None when the block shows
    none or an excerpt (a line ``...``)."""
    out = _lines_under(rest)
    if not any(out) or "..." in out:
        return None
    return "\n".join(out).rstrip("\n")


def _excerpt_under(rest: list[str]) -> tuple[str, ...] | None:
    """The lines of an excerpt under a console command (its ``...`` lines left out), or
    None when the block shows the output in full or shows none."""
    out = _lines_under(rest)
    if "..." not in out:
        return None
    return tuple(line for line in out if line and line != "...")


def page_commands(page: Path) -> Iterator[Command]:
    """The commands printed on one Markdown page, in order."""
    markdown = page.read_text(encoding="utf-8")
    name = page.relative_to(ROOT).as_posix()
    for block in _FENCE.finditer(markdown):
        if block[1] not in _SHELL_FENCES:
            continue
        first = markdown.count("\n", 0, block.start(2)) + 1
        lines = block[2].splitlines()
        console = block[1] == "console" or any(line.startswith("$ ") for line in lines)
        for i, line in _joined(lines) if not console else enumerate(lines):
            if console and not line.startswith("$ "):
                continue
            found = _command(line.removeprefix("$ "), f"{name}:{first + i}")
            if found is not None and console:
                under = lines[i + 1 :]
                found = dataclasses.replace(
                    found, shown=_output_under(under), excerpt=_excerpt_under(under)
                )
            if found is not None:
                yield found
    # inline code outside the fenced blocks (blanked out, keeping the line numbers)
    prose = _FENCE.sub(lambda m: "\n" * m[0].count("\n"), markdown)
    for span in _INLINE.finditer(prose):
        line = prose.count("\n", 0, span.start()) + 1
        found = _command(span[1], f"{name}:{line}")
        if found is not None:
            yield found


def help_commands() -> Iterator[Command]:
    """The Examples of ``shmem --help`` and of each command's ``--help``."""
    from click.testing import CliRunner

    from shmem_cli.cli import main

    for sub in ["", *main.list_commands(click.Context(main))]:
        argv = [sub, "--help"] if sub else ["--help"]
        text = CliRunner().invoke(main, argv, env={"COLUMNS": "200"}).output
        where = " ".join(("shmem", *argv))
        lines: list[str] = []
        inside = False
        for line in text.splitlines():
            if re.match(r"\s*Examples\b.*:$", line):
                inside = True
            elif inside and not line.strip():
                inside = False
            elif inside:
                lines.append(line.strip())
        for _, line in _joined(lines):
            found = _command(line, where)
            if found is not None:
                yield found


def every_command() -> list[Command]:
    return [c for page in PAGES for c in page_commands(page)] + list(help_commands())


def kind(command: Command) -> str:
    """``run``, ``gpu``, ``synopsis``, ``reference`` or ``make`` (the module docstring)."""
    argv = command.argv
    if argv[0] == "make":
        return "make"
    if any(_PLACEHOLDER.search(token) for token in argv[1:]):
        return "synopsis"
    if re.search(r"\b(on|needs) a GPU\b", command.comment):
        return "gpu"
    if len(argv) > 1 and missing_argument(argv[1:]):
        return "reference"
    return "run"


def _subcommand(name: str) -> click.Command:
    from shmem_cli.cli import main

    found = main.get_command(click.Context(main), name)
    if found is None:
        raise LookupError(f"no command shmem {name}")
    return found


def missing_argument(argv: list[str]) -> bool:
    """Whether ``shmem ARGV`` leaves out an argument its command requires."""
    if argv[0].startswith("-"):
        return False  # shmem --version, shmem --help
    command = _subcommand(argv[0])
    ctx = command.make_context(argv[0], argv[1:], resilient_parsing=True)
    return any(
        isinstance(p, click.Argument) and p.required and not ctx.params.get(p.name or "")
        for p in command.params
    )


def unknown_options(argv: list[str]) -> list[str]:
    """The ``--options`` of ``shmem ARGV`` that its command does not have."""
    from shmem_cli.cli import main

    command = _subcommand(argv[0]) if not argv[0].startswith("-") else main
    known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"-h", "--help"}
    given = [t.split("=", 1)[0] for t in (argv if command is main else argv[1:])]
    return [t for t in given if t.startswith("-") and t != "-" and t not in known]


def make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))


# --- kept cubins: the .cu files the documented commands compile, compiled once ---------------

KEPT_CUBINS = ROOT / "tests" / "data" / "doc_cubins"


@dataclass(frozen=True)
class Compile:
    """One nvcc compile a documented ``shmem trace`` of a ``.cu`` file asks for."""

    source: Path  # relative to the repository root
    arch: str
    nvcc_args: tuple[str, ...]

    @property
    def kept(self) -> Path:
        """The cubin kept for this compile (its name holds a hash of the source and flags)."""
        import hashlib

        digest = hashlib.sha256((ROOT / self.source).read_bytes())
        digest.update("\0".join((self.arch, *self.nvcc_args)).encode())
        return KEPT_CUBINS / f"{self.source.stem}.{self.arch}.{digest.hexdigest()[:16]}.cubin"


def compile_of(command: Command) -> Compile | None:
    """The compile ``shmem trace FILE.cu ...`` does, or None for any other command."""
    argv = command.argv
    if len(argv) < 3 or argv[1] != "trace" or not argv[2].endswith(".cu"):
        return None
    arch, extra = _build_options(argv)
    return Compile(Path(argv[2]), arch, tuple(extra))


def _build_options(argv: list[str]) -> tuple[str, list[str]]:
    arch, extra = "sm_90", []
    for i, token in enumerate(argv):
        name, _, value = token.partition("=")
        if name in ("--arch", "--nvcc-arg"):
            value = value or argv[i + 1]
            if name == "--arch":
                arch = value
            else:
                extra.append(value)
    return arch, extra


def compiles_of(command: Command) -> list[Compile]:
    """Every compile the command does: a trace of a ``.cu`` one, ``shmem sweep FILE.cu
    --define NAME=VALUES`` one per combination (``-DNAME=VALUE`` after the other
    arguments, in the order of the options, as the sweep builds them)."""
    one = compile_of(command)
    if one is not None:
        return [one]
    argv = command.argv
    if len(argv) < 3 or argv[1] != "sweep" or not argv[2].endswith(".cu") or kind(command) != "run":
        return []
    import itertools

    from shmem_cli.trace.fixes.compiled_sweep import parse_define

    arch, extra = _build_options(argv)
    axes = [parse_define(argv[i + 1]) for i, t in enumerate(argv[:-1]) if t == "--define"]
    return [
        Compile(
            Path(argv[2]),
            arch,
            (*extra, *(f"-D{a.name}={v}" for a, v in zip(axes, point, strict=True))),
        )
        for point in itertools.product(*(a.values for a in axes))
    ]


def keep_cubins() -> None:
    """Compile every documented ``.cu`` into tests/data/doc_cubins (and drop stale cubins)."""
    import subprocess

    wanted = {c.kept: c for command in every_command() for c in compiles_of(command)}
    KEPT_CUBINS.mkdir(exist_ok=True)
    for path, c in wanted.items():
        cmd = ["nvcc", "-cubin", "-lineinfo", "-O3", f"-arch={c.arch}", *c.nvcc_args]
        subprocess.run([*cmd, "-o", str(path), c.source.as_posix()], cwd=ROOT, check=True)
        print(f"kept {path.relative_to(ROOT)}")
    for path in KEPT_CUBINS.glob("*.cubin"):
        if path not in wanted:
            path.unlink()
            print(f"removed {path.relative_to(ROOT)}")


if __name__ == "__main__":  # python3 -m tests.doc_commands: refresh tests/data/doc_cubins
    keep_cubins()
