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
from ..cuda.sass import TOOLKIT_HEADER, Function, Instruction, source_lines
from ..cuda.sources import SourceTree
from .kernel.line_table import LineRows

__all__ = ["COMPILED", "compiled_files", "named_calls", "placed_lines", "user_files"]

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
    table: LineRows,
    *,
    binary: bool,
    kernel_file: Callable[[str], bool] | None = None,
) -> dict[int, Location]:
    """pc -> the line each instruction of ``function`` is reported at (``binary``: a cubin's or
    an executable's, whose build is unknown: see the module docstring); each instruction whose
    user line the line table cannot tell from a sibling call's is marked with the other lines
    (:mod:`..cuda.inline_siblings`), for the report to say so, and each one whose line the user's
    own helper holds with the user's line that called it (:attr:`Instruction.caller`);
    ``kernel_file``: a file that is the user's wherever it lies (a Triton kernel's ``.py``, which
    a cache entry's tree never holds), for that call."""
    user = user_files(tree, libraries)
    first = compiled_files(libraries) if binary else None
    lines = source_lines(function, user, first)
    found = sibling_lines(function, lines, first or user, table.links)

    def mine(file: str) -> bool:  # a file of the user's: the build's, the tree's, the kernel's
        built = first is not None and first(file)
        return bool(built or user(file) or (kernel_file is not None and kernel_file(file)))

    callers: dict[Location, set[Location]] = {}
    chains = (i.locations for i in function.instructions)
    pairs = (p for c in chains for p in zip(c, c[1:], strict=False))
    for inner, outer in (*pairs, *table.links):
        callers.setdefault(inner, set()).add(outer)
    function.instructions = [
        _with_caller(i, lines.get(i.pc), found.get(i.pc, ()), table, callers, mine)
        for i in function.instructions
    ]
    return lines


def _with_caller(
    ins: Instruction,
    placed: Location | None,
    siblings: tuple[Location, ...],
    table: LineRows,
    callers: dict[Location, set[Location]],
    mine: Callable[[str], bool],
) -> Instruction:
    """``ins`` with its sibling lines and the user's line that called its placed line, where
    that line is reached from two or more lines (a helper's, called at each) and is the
    innermost location of the line table's row at its pc, whose ``.loc`` names its caller
    exactly; none where it is called from one line only (a wrapper of the kernel's whole
    body would name its call on every row), or the call is not told."""
    caller = None
    if placed is not None and not siblings and len(callers.get(placed, ())) > 1:
        row = table.at(ins.pc)
        if row is not None and row[0] == placed:
            caller = row[1]
        if caller is not None and (caller == placed or not mine(caller[0])):
            caller = None
    if not siblings and caller is None:
        return ins
    return dataclasses.replace(ins, siblings=siblings, caller=caller)


def named_calls(function: Function, calls: dict[int, Location]) -> None:
    """Name the call (pc -> the user's line) of each instruction of ``function`` whose line
    table named none: a Triton 3.0-3.6 helper's, whose calls only the TTGIR records
    (:func:`.triton.callsites.calls`); an instruction the table named a call or siblings for
    keeps them."""
    function.instructions = [
        dataclasses.replace(i, caller=calls[i.pc])
        if i.pc in calls and i.caller is None and not i.siblings
        else i
        for i in function.instructions
    ]
