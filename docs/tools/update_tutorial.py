"""Keep the command outputs in docs/tutorial.md (and the README picture) current.

Every fenced ``console`` block of the tutorial holds commands, each on a line
``$ shmem ...``, followed by the output it prints. This script runs each command
from the repository root, exactly as tests/test_tutorial.py does (no color, no
terminal, so the width is the fixed 200 columns of non-terminal output), and
writes the outputs back in place. It also regenerates the pictures in
docs/images/ that the README shows.

    python3 docs/tools/update_tutorial.py           # rewrite docs/tutorial.md and docs/images/
    python3 docs/tools/update_tutorial.py --check   # exit 1 if anything is stale
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
FENCE = re.compile(r"^```console\n(.*?)^```$", re.S | re.M)

# pictures shown by the README: (file, shmem arguments without the --svg option)
PICTURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "docs/images/column_read.svg",
        (
            "analyze",
            "access_specs/column_read_32x32.yaml",
            "access_specs/column_read_32x33.yaml",
            "--tables",
        ),
    ),
)


@dataclass(frozen=True)
class Example:
    """One ``$ shmem ...`` line of the tutorial and the output shown under it."""

    command: str
    shown: str
    line: int  # 1-based line of the command in the Markdown file


def examples(markdown: str) -> Iterator[Example]:
    """The commands of every ``console`` block, in order."""
    for block in FENCE.finditer(markdown):
        first_line = markdown.count("\n", 0, block.start(1)) + 1
        command: str | None = None
        start = 0
        out: list[str] = []
        for i, line in enumerate(block[1].splitlines()):
            if line.startswith("$ "):
                if command is not None:
                    yield Example(command, "\n".join(out), start)
                command, start, out = line[2:], first_line + i, []
            elif command is not None:
                out.append(line)
        if command is not None:
            yield Example(command, "\n".join(out), start)


def normalize(text: str) -> str:
    """Compare outputs without trailing blanks (Markdown editors strip them)."""
    return "\n".join(line.rstrip() for line in text.rstrip("\n").splitlines())


def run(command: str) -> str:
    """Run one tutorial command in-process, from the repository root, without color."""
    from click.testing import CliRunner

    from shmem_cli.cli import main

    argv = shlex.split(command)
    if not argv or argv[0] != "shmem":
        raise ValueError(f"tutorial commands must start with 'shmem': {command!r}")
    old = Path.cwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(main, argv[1:], env={"NO_COLOR": "1", "COLUMNS": "200"})
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise RuntimeError(f"{command!r} crashed: {result.exception!r}") from result.exception
    return normalize(result.output)


def refreshed(markdown: str) -> str:
    """The tutorial with every command's output replaced by its current output."""

    def block(match: re.Match[str]) -> str:
        lines: list[str] = []
        for line in match[1].splitlines():
            if line.startswith("$ "):
                lines.append(line)
                lines.extend(run(line[2:]).splitlines())
            elif not lines:  # text before the first command is kept
                lines.append(line)
        return "```console\n" + "\n".join(lines) + "\n```"

    return FENCE.sub(block, markdown)


def picture(args: tuple[str, ...]) -> str:
    """The SVG text that ``shmem ARGS --svg FILE`` writes."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "picture.svg"
        run(shlex.join(("shmem", *args, "--svg", str(svg))))
        return svg.read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale outputs")
    opts = parser.parse_args(argv)
    stale: list[str] = []
    old = TUTORIAL.read_text(encoding="utf-8")
    new = refreshed(old)
    if new != old:
        stale.append(str(TUTORIAL.relative_to(ROOT)))
        if not opts.check:
            TUTORIAL.write_text(new, encoding="utf-8")
    for path, args in PICTURES:
        target = ROOT / path
        svg = picture(args)
        if not target.exists() or target.read_text(encoding="utf-8") != svg:
            stale.append(path)
            if not opts.check:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(svg, encoding="utf-8")
    verb = "stale" if opts.check else "updated"
    for path in stale:
        print(f"{verb}: {path}")
    return 1 if (stale and opts.check) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
