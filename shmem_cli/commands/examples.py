"""``shmem examples``: the example specs that come with shmem (also after ``pip install``).

The specs are the repository's access_specs/ folder, installed with the package
as ``shmem_cli/example_specs`` (in a checkout, a link to access_specs/).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import click

from .common import CONTEXT, fail_usage
from .environment import current_environment

_NAME = re.compile(r"^name:\s*(.+?)\s*$", re.M)


def example_dir() -> Path:
    """Where the bundled example specs are."""
    return Path(__file__).resolve().parent.parent / "example_specs"


def example_files() -> list[Path]:
    return sorted(example_dir().glob("*.yaml"))


def _title(path: Path) -> str:
    found = _NAME.search(path.read_text(encoding="utf-8"))
    return found.group(1).strip("'\"") if found else ""


@click.command(context_settings=CONTEXT, short_help="List, print or copy the example specs.")
@click.argument("name", required=False)
@click.option(
    "--copy",
    "copy_to",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Copy every example spec into DIR (created if needed; existing files are kept).",
)
@click.option("--path", "show_path", is_flag=True, help="Print the folder of the example specs.")
def examples(name: str | None, copy_to: str | None, show_path: bool) -> None:
    """List the example specs that come with shmem, print one (NAME), or copy them all.

    The examples are real kernels' shared-memory accesses: transposes, SGEMM and
    attention tiles, ldmatrix fragments, reductions, stencils, histograms, and
    the specs of the tutorial. The commands in `shmem --help` and the tutorial
    use them as access_specs/NAME.yaml: `shmem examples --copy access_specs`
    puts them there.

    Exit status: 0, or 2 when NAME is not an example.

    \b
    Examples:
      shmem examples
      shmem examples transpose_naive > transpose.yaml
      shmem examples transpose_naive | shmem analyze -
      shmem examples --copy access_specs && shmem analyze access_specs/
    """
    env = current_environment()
    files = example_files()
    if show_path:
        env.out(str(example_dir()))
        return
    if copy_to is not None:
        target = Path(copy_to)
        target.mkdir(parents=True, exist_ok=True)
        copied = 0
        for f in files:
            if not (target / f.name).exists():
                shutil.copyfile(f, target / f.name)
                copied += 1
        env.err(f"shmem examples: copied {copied} of {len(files)} specs to {target}/")
        return
    if name is not None:
        stem = name.removesuffix(".yaml").removesuffix(".yml")
        found = [f for f in files if f.stem == stem]
        if not found:
            fail_usage(f"no example named {name!r}; `shmem examples` lists them")
        env.out(found[0].read_text(encoding="utf-8"), nl=False)
        return
    width = max(len(f.stem) for f in files)
    for f in files:
        env.out(f"{f.stem:<{width}}  {_title(f)}".rstrip())
