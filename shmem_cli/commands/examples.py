"""``shmem examples``: the example specs that come with shmem (also after ``pip install``).

The specs are the repository's access_specs/ folder, installed with the package
as ``shmem_cli/example_specs`` (in a checkout, a link to access_specs/); its
kernels/ folder holds shmem's own example CUDA kernels for ``shmem trace``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import click

from ..plumbing import fsutil
from ..plumbing.errors import ShmemError, shorten
from .common import CONTEXT, ShmemCommand, fail, fail_usage
from .environment import current_environment

_NAME = re.compile(r"^name:\s*(.+?)\s*$", re.M)


def example_dir() -> Path:
    """Where the bundled example specs are."""
    return Path(__file__).resolve().parent.parent / "example_specs"


def example_files() -> list[Path]:
    return sorted(example_dir().glob("*.yaml"))


def example_kernels() -> list[Path]:
    """The example CUDA kernels (``kernels/*.cu``) for ``shmem trace``."""
    return sorted((example_dir() / KERNELS).glob("*.cu"))


KERNELS = "kernels"
_FIRST_COMMENT = re.compile(r"\A// (.+?)\s*$", re.M)  # a kernel's title: its first line


def _copy_examples(files: list[Path], target: Path) -> int:
    """Copy ``files`` (under :func:`example_dir`) into ``target``, made with its parents if
    needed; a file already there is kept. The number copied; an OutputError (a ShmemError)
    names what could not be made or written."""
    for folder in (target, target / KERNELS):
        if os.path.lexists(folder) and not os.path.isdir(folder):
            raise fsutil.OutputError("cannot copy the examples: it is not a folder", str(folder))
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise fsutil.OutputError(
                f"cannot create the folder: {fsutil.reason(exc)}", str(folder)
            ) from None
    copied = 0
    for f in files:
        to = target / f.relative_to(example_dir())
        if not os.path.lexists(to):
            fsutil.write_bytes(to, f.read_bytes())
            copied += 1
    return copied


def _title(path: Path) -> str:
    pattern = _FIRST_COMMENT if path.suffix == ".cu" else _NAME
    found = pattern.search(path.read_text(encoding="utf-8"))
    return found.group(1).strip("'\"") if found else ""


@click.command(
    cls=ShmemCommand,
    context_settings=CONTEXT,
    short_help="List, print or copy the example specs and kernels.",
)
@click.argument("name", required=False)
@click.option(
    "--copy",
    "copy_to",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help=(
        "Copy every example spec into DIR and the example kernels into DIR/kernels "
        "(created if needed; existing files are kept)."
    ),
)
@click.option("--path", "show_path", is_flag=True, help="Print the folder of the example specs.")
def examples(name: str | None, copy_to: str | None, show_path: bool) -> None:
    """List the example specs that come with shmem, print one (NAME), or copy them all.

    The examples are real kernels' shared-memory accesses: transposes, SGEMM and
    attention tiles, ldmatrix fragments, reductions, stencils, histograms, and
    the specs of the tutorial; and, in kernels/, shmem's own example CUDA
    kernels for `shmem trace` (a transpose, a tiled matrix product and a
    warp-tiled SGEMM). The
    commands in `shmem --help` and the tutorial use them as
    access_specs/NAME.yaml and access_specs/kernels/NAME.cu: `shmem examples
    --copy access_specs` puts them there.

    Exit status: 0, or 2 when NAME is not an example.

    \b
    Examples:
      shmem examples
      shmem examples transpose_naive > transpose.yaml
      shmem examples transpose_naive | shmem analyze -
      shmem examples kernels/matmul.cu
      shmem examples --copy access_specs && shmem analyze access_specs/
    """
    env = current_environment()
    files = example_files()
    if show_path:
        env.out(str(example_dir()))
        return
    if copy_to is not None:
        target = Path(copy_to)
        kernels = example_kernels()
        try:
            copied = _copy_examples([*files, *kernels], target)
        except ShmemError as exc:
            fail(exc)
        total = len(files) + len(kernels)
        env.err(
            f"shmem examples: copied {copied} of {total} files ({len(files)} specs, "
            f"{len(kernels)} kernels) to {target}/"
        )
        return
    named = {f.stem: f for f in files} | {f"{KERNELS}/{f.name}": f for f in example_kernels()}
    if name is not None:
        stem = name.removesuffix(".yaml").removesuffix(".yml")
        if stem not in named:
            fail_usage(f"no example named {shorten(name)!r}; `shmem examples` lists them")
        env.out(named[stem].read_text(encoding="utf-8"), nl=False)
        return
    width = max(len(n) for n in named)
    for n, f in named.items():
        env.out(f"{n:<{width}}  {_title(f)}".rstrip())
