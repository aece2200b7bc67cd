"""Which other lines of the user's an inlined instruction may come from, where the line
table cannot tell.

ptxas builds each instruction's chain of inlined calls from the PTX's ``.loc`` directives, and
a ``.loc`` names only its immediate caller, by file, line and column
(``.loc 1 6 25, function_name ..., inlined_at 1 12 3``, PTX ISA 7.2 on). NVVM writes a call's
chain once and later ``.loc`` directives refer to its locations by that triple alone, so where
one library location is inlined by two of the user's calls (CuTe's ``copy(...)`` of A and of
B) the caller's own caller is a guess, and ptxas may take the sibling call's: the line table
then names the wrong user line, and ``nvdisasm -gi`` prints it so (docs/trace.md, "Each row
is placed at the innermost line of the user's own sources").

The innermost location's immediate caller is exact (its ``.loc`` names it); every link above
it may be either instance. :func:`sibling_lines` follows, from that caller, every caller the
line table records for each library location, up to the user's lines: where more than one user
line is reached, the one reported is ptxas's choice and the others are listed. The locations
are compared by file and line (the cubin keeps no columns), which can only list more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .sass import Function

Location = tuple[str, int]
#: library locations visited in all, over every instruction's walk up its callers: past it no
#: more rows are marked (a crafted line table of 1,000 inlined rows, each reaching a chain of
#: 10,000 library lines, took 3.6 s, quadratic; real kernels' walks visit a few thousand)
MAX_VISITS = 1_000_000


def sibling_lines(
    fn: Function,
    lines: Mapping[int, Location],
    user: Callable[[str], bool],
    links: Iterable[tuple[Location, Location]] = (),
) -> dict[int, tuple[Location, ...]]:
    """pc -> the user's lines (``user(file)``) other than the reported one (``lines``, pc ->
    file, line) that the instruction's library code is inlined from as well, for every
    instruction whose reported line is two or more calls out of its innermost location and
    the line table cannot tell which (see the module docstring); sorted. The links between
    locations are those of the instructions' chains and ``links`` ((location, its caller's)
    of every row of the line table: :attr:`shmem_cli.trace.kernel.line_table.LineRows.links`;
    nvdisasm prints a row only where the innermost line changes, and a sibling call's rows
    may all be among those it leaves out)."""
    callers: dict[Location, set[Location]] = {}
    pairs = (p for i in fn.instructions for p in zip(i.locations, i.locations[1:], strict=False))
    for inner, outer in (*pairs, *links):
        callers.setdefault(inner, set()).add(outer)
    memo: dict[Location, frozenset[Location]] = {}
    visits = 0

    def reached(start: Location) -> frozenset[Location]:
        """The user's lines the library location ``start`` is inlined from, at any depth
        (none once :data:`MAX_VISITS` locations were visited in all)."""
        nonlocal visits
        if start not in memo:
            found: set[Location] = set()
            seen, todo = {start}, [start]
            while todo:
                visits += 1
                if visits > MAX_VISITS:
                    found.clear()
                    break
                for up in callers.get(todo.pop(), ()):
                    if user(up[0]):
                        found.add(up)
                    elif up not in seen:
                        seen.add(up)
                        todo.append(up)
            memo[start] = frozenset(found)
        return memo[start]

    out: dict[int, tuple[Location, ...]] = {}
    for ins in fn.instructions:
        where, chain = lines.get(ins.pc), ins.locations
        if where is None or where not in chain:
            continue
        below = chain[: chain.index(where)]  # the library's frames inside the user's line
        if len(below) < 2 or any(user(f) for f, _ in below):
            continue  # the user's line is the innermost or its caller: named exactly
        candidates = reached(chain[1])
        if where in candidates and len(candidates) > 1:
            out[ins.pc] = tuple(sorted(candidates - {where}))
    return out
