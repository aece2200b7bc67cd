"""The line each instruction's row is placed at: the innermost line of the user's own sources
through inlining, the library's line kept as detail (docs/trace.md, "Each row is placed at
the innermost line of the user's own sources").

A ``.cu``'s build says which files are a library's: those in an include root, a typed ``-I``
folder or the toolkit; the user's own are the others inside the source tree. A binary's (a
cubin's or an executable's) build is unknown: its ``-I`` folders are not in it, and its line
table may name the files of another machine (where it was built). There a row is placed at
the innermost line of a file the build compiled, a translation unit (``.cu``, ``.cpp``, ...,
by its name, wherever it lies, but in an include root or the toolkit), as the ``.cu``'s
build with its library's ``-I`` places it; a chain without one (a kernel defined in a
header) is placed by the ``.cu``'s rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from ..cuda.inline_siblings import sibling_lines
from ..cuda.sass import TOOLKIT_HEADER, Function, source_lines
from ..cuda.sources import SourceTree

__all__ = ["COMPILED", "compiled_files", "placed_lines", "user_files"]

#: the suffixes of a translation unit's source (nvcc compiles each; headers are included)
COMPILED = (".cu", ".cpp", ".cc", ".cxx", ".c")

Location = tuple[str, int]


def _library(libraries: Sequence[str]) -> Callable[[str], bool]:
    """Whether a file of the line table is a library's: in an include folder of the build
    (``libraries``: an include root, a typed ``-I`` folder outside the tree) or the toolkit's."""
    from ..cuda.build import within

    return lambda file: bool(within(Path(file), libraries) or TOOLKIT_HEADER.search(file))


def user_files(tree: SourceTree, libraries: Sequence[str]) -> Callable[[str], bool]:
    """Whether a file of the line table is the user's own: in the kernel's source tree and not
    in a library's include folder (``libraries``, the build's: an include root, a typed -I
    folder outside the tree; the toolkit's): rows are placed at the innermost such line (the
    user's ``copy(...)``), the library's line kept as detail."""
    library = _library(libraries)
    said: dict[str, bool] = {}  # asked once a file (each instruction asks: 120,000 realpaths)

    def user(file: str) -> bool:
        if file not in said:
            mine = tree.inside(file) or not Path(file).is_absolute()
            said[file] = not library(file) and mine
        return said[file]

    return user


def compiled_files(libraries: Sequence[str]) -> Callable[[str], bool]:
    """Whether a file of a binary's line table is one its build compiled (:data:`COMPILED`),
    wherever it lies, but in a library's include folder or the toolkit."""
    library = _library(libraries)
    said: dict[str, bool] = {}

    def compiled(file: str) -> bool:
        if file not in said:
            said[file] = Path(file).suffix.lower() in COMPILED and not library(file)
        return said[file]

    return compiled


def placed_lines(
    function: Function,
    tree: SourceTree,
    libraries: Sequence[str],
    callers: Sequence[tuple[Location, Location]],
    *,
    binary: bool,
) -> dict[int, Location]:
    """pc -> the line each instruction of ``function`` is reported at (``binary``: a cubin's or
    an executable's, whose build is unknown: see the module docstring); each instruction whose
    user line the line table cannot tell from a sibling call's is marked with the other lines
    (:mod:`..cuda.inline_siblings`), for the report to say so."""
    user = user_files(tree, libraries)
    first = compiled_files(libraries) if binary else None
    lines = source_lines(function, user, first)
    found = sibling_lines(function, lines, first or user, callers)
    if found:
        function.instructions = [
            dataclasses.replace(i, siblings=found[i.pc]) if i.pc in found else i
            for i in function.instructions
        ]
    return lines
