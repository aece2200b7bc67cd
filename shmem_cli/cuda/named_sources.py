"""The source files a cubin's line table or a build names, found and read, bounded.

What the SASS cannot say of a kernel (its parameters' names, its constants' types) is
read from the text of its sources. :func:`read_sources` reads the files given or named
by the line table that lie in the kernel's source tree; :func:`library_texts` reads, for
the declaration a library makes (``cutlass::device_kernel`` in an include root's
``cutlass/device_kernel.h``), the files of the allowed library folders (include roots,
typed ``-I``) and of the tree that the line table or the build's own list of what it read
names, keeping only what the caller's ``keep`` finds useful in each. Both read at most
:data:`~shmem_cli.cuda.sources.MAX_FILES` files of at most
:data:`~shmem_cli.cuda.sources.MAX_SOURCE_BYTES` each and
:data:`~shmem_cli.cuda.sources.MAX_TREE_BYTES` in all, as a build's scan does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ..plumbing.bounded_read import read_bounded
from ..plumbing.errors import ShmemError
from .build import within
from .sources import MAX_FILES, MAX_SOURCE_BYTES, MAX_TREE_BYTES


def locate_source(
    name: str, roots: Sequence[Path], allowed: Callable[[Path], bool] = lambda _: True
) -> Path | None:
    """The file a line table names, or where it is now: a cubin keeps the absolute path it
    was compiled from, so a moved or freshly cloned tree is searched for the path's
    trailing parts (``tests/data/trace/kernels/basics.cu``, ..., ``basics.cu``) under
    each root, longest first; only files ``allowed`` accepts are taken."""
    path = Path(name)
    if os.path.isfile(path) and allowed(path):
        return path
    parts = (path.parts[1:] if path.is_absolute() else path.parts)[-8:]  # bounded work
    for k in range(len(parts)):
        for root in roots:
            candidate = root.joinpath(*parts[k:])
            if os.path.isfile(candidate) and allowed(candidate):
                return candidate
    return None


def _read(path: Path) -> bytes | None:
    """The bytes of ``path``, or None where it is no regular file of at most a source's size."""
    try:
        return read_bounded(path, MAX_SOURCE_BYTES, what="source")
    except ShmemError:
        return None


def read_sources(
    paths: Sequence[str | Path],
    roots: Sequence[Path] = (),
    *,
    allowed: Callable[[Path], bool] = lambda _: True,
    read: list[Path] | None = None,
) -> list[str]:
    """The text of each source file that can be found (for parameter names); others
    skipped: those ``allowed`` refuses (outside the source tree), those that are not
    regular files, and those larger than a source may be; at most the first
    ``MAX_FILES`` files named and ``MAX_TREE_BYTES`` in all, as a build reads. The files
    read are added to ``read``."""
    out = []
    total = 0
    for p in list(dict.fromkeys(str(p) for p in paths))[:MAX_FILES]:
        if total > MAX_TREE_BYTES:
            break
        found = locate_source(p, [*roots, Path.cwd()], allowed)
        data = None if found is None else _read(found)
        if found is None or data is None:
            continue
        total += len(data)
        out.append(data.decode("utf-8", errors="replace"))
        if read is not None:
            read.append(found)
    return out


def library_texts(
    paths: Sequence[str],
    folders: Sequence[str],
    inside: Callable[[Path], bool],
    keep: Callable[[str], str | None],
    read: list[Path],
) -> list[str]:
    """What ``keep`` keeps (the text, a part of it, or None) of each file of ``paths`` (the
    line table's, the build's list) that lies in a library folder (``folders``) or the tree
    (``inside``) and is not one of those already ``read`` (which it joins); the rest of
    the paths skipped: the toolkit's and the host compiler's headers among them."""
    done = {os.path.realpath(p) for p in read}
    out = []
    total = 0
    for name in list(dict.fromkeys(paths))[:MAX_FILES]:
        real = os.path.realpath(name)
        if total > MAX_TREE_BYTES:
            break
        if real in done or not (within(real, folders) or inside(Path(real))):
            continue
        done.add(real)
        data = _read(Path(real))
        if data is None:
            continue
        total += len(data)
        read.append(Path(real))
        kept = keep(data.decode("utf-8", errors="replace"))
        if kept is not None:
            out.append(kept)
    return out


#: why a source that names a kernel's parameters gave no names (:func:`unread_source`): it
#: lies outside the source tree, it is not there (nor found by its trailing path parts), or
#: it was found and read without the kernel's declaration
OUTSIDE, GONE, NO_DECLARATION = "outside", "gone", "no def"


def unread_source(
    said: str, bases: Sequence[Path], allowed: Callable[[Path], bool], suffixes: tuple[str, ...]
) -> tuple[str, str]:
    """The file ``said`` (as a cubin's line table or a TTGIR names it) that gave no parameter
    names and why: found inside (``allowed``) and read, ``NO_DECLARATION``; there outside,
    ``OUTSIDE`` (a file's existence is said only of a kernel source, one of ``suffixes``);
    else ``GONE``, named as said. One rule for a ``.cu``, a cubin and a Triton entry."""
    found = locate_source(said, bases, allowed)
    if found is not None:
        return str(found), NO_DECLARATION
    elsewhere = locate_source(said, bases) if said.endswith(suffixes) else None
    return (str(elsewhere), OUTSIDE) if elsewhere is not None else (said, GONE)


def unread_words(
    where: str,
    why: str,
    *,
    names_it: str,
    declaration: str,
    of: str,
    guess: str = "edited since the compile?",
) -> str:
    """Why the parameters have no names, after "their names come from ...": ``where`` and
    ``why`` as :func:`unread_source` says them; ``names_it`` what names the file ("the
    TTGIR"), ``declaration`` what it lacks ("def of k"), ``of`` whose tree and file it is
    ("entry", "cubin"); ``guess`` why a file found lacks the declaration."""
    from ..plumbing.errors import shorten

    by_position = "name the parameters by position (--arg 0=...; --list-params lists them)"
    folder = shorten(os.path.dirname(where), 200)
    if why == NO_DECLARATION:
        return (
            f": {shorten(where, 200)}, the file {names_it} names as shmem found it, holds no "
            f"{declaration} that shmem could read ({guess}): {by_position}"
        )
    if why == OUTSIDE:
        return (
            f", in {shorten(where, 200)}, outside the source tree (the {of}'s repository or "
            "folder, and the repository shmem runs in, if any), where shmem reads no file "
            f"unless told: give --source-root {folder} (or a folder above it), or {by_position}"
        )
    kind = ".py file" if where.endswith(".py") or of == "entry" else "source file"
    named = f", {shorten(where, 200)} as {names_it} names it," if where else ""
    compiled = f" ({folder} where it was compiled)" if where else ""
    return (
        f", whose file{named} is not there (compiled on another machine, or moved), nor found "
        f"by its trailing path parts under the current folder or the {of}'s: run shmem from "
        f"the folder that holds the kernel's {kind}{compiled} with --source-root naming it, "
        f"or {by_position}"
    )
