"""Which line of the kernel called a line of Triton's library, from the TTGIR's locations.

A Triton cubin's line table places the shared-memory traffic of ``tl.max`` and ``tl.sum`` at
their lines in ``triton/language/standard.py`` (an Inductor kernel's Welford reduction at
``torch/_inductor/runtime/triton_helpers.py``), with no inlining chain (Triton 3.0-3.6, whose
PTX has no ``.loc ... inlined_at``): the kernel's line that called them, and the line that
called a ``@triton.jit`` helper of the user's, are known only to the TTGIR, whose location
aliases say it::

    #loc11 = loc("/.../triton/language/standard.py":191:40)
    #loc12 = loc("/.../kernels.py":16:37)
    #loc39 = loc("row_minus_max"(#loc12))
    #loc47 = loc(callsite(#loc11 at #loc39))

:func:`library_callers` lists, for each library line, the sites that inline it (one per
call in the kernel, in program order: the outermost frame first) with the kernel's innermost
line of each, and :func:`place` moves each shared-memory instruction there: to the one
caller's line, or, where several calls share the library's lines (two ``tl.sum``), by order:
the exchanges of two reductions are kept apart by barriers, which ptxas moves no shared
access across, so the k-th run of the library line's shared instructions is the k-th call's
(used only where the instructions split into as many runs as calls, each the same sequence of
opcodes; otherwise they stay the library's line); :func:`calls` names a helper line's call
so, where a barrier lies between one run and the next. The TTGIR comes from a cache anyone can
commit: only whole ``#loc`` alias lines are read, each pattern linear, at most
:data:`MAX_ALIASES` of them (past it, no line is placed), and a chain is followed at most
:data:`MAX_DEPTH` levels.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping

Location = tuple[str, int]
_Frame = tuple[str, int, int]  # file, line, column

#: the files a Triton kernel's library code comes from: Triton's language (``tl.sum``,
#: ``tl.max``, libdevice) and PyTorch Inductor's runtime helpers (``triton_helpers.py``: the
#: Welford and argmax reductions an Inductor kernel calls)
LIBRARY = re.compile(r"/triton/language/|/torch/_inductor/runtime/")


def triton_source_file(file: str) -> bool:
    """A ``.py`` file of the user's (the kernel's, its helpers'), not Triton's or Inductor's
    library: where a ``@triton.jit`` helper's call is the user's line."""
    return file.endswith(".py") and not LIBRARY.search(file.replace("\\", "/"))


MAX_DEPTH = 16  # levels of a callsite chain followed (the deepest of 264 TTGIRs: 7 frames)
#: alias lines read: a TTGIR with more places no library line (real ones have about 100; 64
#: MiB of callsites 64 frames deep, 600,000 of them, took 66 s and a gigabyte)
MAX_ALIASES = 50_000
# one alias line of each kind, read in one pass over the text: a file's line and column, a
# name for another alias, a callsite (an alias inlined at another)
_ALIAS = re.compile(
    r"^#loc(\d{0,9})\s*=\s*loc\("
    r'(?:"(?P<file>[^"\n]{1,4096})":(?P<line>\d{1,9}):(?P<column>\d{1,9})'
    r'|"[^"\n]{0,4096}"\(#loc(?P<named>\d{0,9})\)'
    r"|callsite\(#loc(?P<callee>\d{0,9})\s+at\s+#loc(?P<caller>\d{0,9})\))"
    r"\)\s*$",
    re.M,
)


def is_library(file: str) -> bool:
    """Whether ``file`` is library code a Triton kernel inlines (:data:`LIBRARY`), not the
    user's."""
    return LIBRARY.search(file) is not None


def library_callers(
    text: str, library: Callable[[str], bool]
) -> dict[Location, tuple[Location, ...]]:
    """library (file, line) -> the kernel's innermost (file, line) of each site that inlines
    it, in program order (a line may repeat: two calls on one line), for every library line
    (``library(file)``) of a callsite of the TTGIR ``text``."""
    return read_callsites(text, library)[0]


def read_callsites(
    text: str, library: Callable[[str], bool]
) -> tuple[dict[Location, tuple[Location, ...]], dict[Location, tuple[Location, ...]]]:
    """:func:`library_callers`, and the calls of the user's ``@triton.jit`` helpers: a line of
    the user's inlined into another of the user's lines -> the line of each call (the next of
    the user's frames out), in program order, where two or more lines call it (:func:`calls`
    places them). Triton 3.0 to 3.6 write no inlining chain into the PTX (no ``.loc ...
    inlined_at``), so their cubin's line table holds the helper's own lines alone; the TTGIR's
    callsites are the only record of its calls."""
    files: dict[str, _Frame] = {}
    named: dict[str, str] = {}
    calls: dict[str, tuple[str, str]] = {}
    for count, m in enumerate(_ALIAS.finditer(text)):
        if count >= MAX_ALIASES:
            return {}, {}
        alias, file, named_as, callee = m.group(1, "file", "named", "callee")
        if file is not None:
            files[alias] = (file, int(m.group("line")), int(m.group("column")))
        elif named_as is not None:
            named[alias] = named_as
        else:
            calls[alias] = (callee, m.group("caller"))
    memo: dict[str, tuple[_Frame, ...]] = {}

    def frames(alias: str, depth: int = 0) -> tuple[_Frame, ...]:
        """The frames of an alias, innermost first (none: unknown, too deep, a loop)."""
        if alias in memo:
            return memo[alias]
        memo[alias] = ()  # a loop of aliases resolves to nothing
        out: tuple[_Frame, ...] = ()
        if depth < MAX_DEPTH:
            if alias in files:
                out = (files[alias],)
            elif alias in named:
                out = frames(named[alias], depth + 1)
            elif alias in calls:
                callee, caller = calls[alias]
                out = (*frames(callee, depth + 1), *frames(caller, depth + 1))
        out = out[:MAX_DEPTH]
        memo[alias] = out
        return out

    is_library: dict[str, bool] = {}  # each file asked once
    # each call's kernel frames (from its first line of the kernel's on, outermost first),
    # numbered once: a library frame's sites are those numbers, not its chain again from
    # each frame (64 frames' slices of each of 40,000 callsites took 13 s)
    kernels: dict[tuple[_Frame, ...], int] = {}
    sites: dict[Location, set[int]] = {}
    for alias in calls:
        chain = frames(alias)
        user = None
        for i, (file, _, _) in enumerate(chain):
            if file not in is_library:
                is_library[file] = library(file)
            if not is_library[file]:
                user = i
                break
        if user is None:
            continue
        number = kernels.setdefault(tuple(reversed(chain[user:])), len(kernels))
        for frame in chain[:user]:  # each library frame: a site of this call
            sites.setdefault(frame[:2], set()).add(number)
    # a chain that is the inner part of another (the library inlined into a helper, the TTGIR's
    # step before the helper's call) is no call of its own: two calls of the helper are two
    partial = {kernels[k[i:]] for k in kernels for i in range(1, len(k)) if k[i:] in kernels}
    sites = {lib: found - partial or found for lib, found in sites.items()}
    listed = list(kernels)
    out = {}
    for lib, found in sites.items():
        # one site per call: the kernel's frames (outermost first) decide the order
        kernel = sorted(listed[n] for n in found)
        out[lib] = tuple((k[-1][0], k[-1][1]) for k in kernel)
    return out, _helper_calls([k for n, k in enumerate(listed) if n not in partial])


def _helper_calls(kernels: list[tuple[_Frame, ...]]) -> dict[Location, tuple[Location, ...]]:
    """The user's line -> its calls' lines in program order, from the user's frames of each
    callsite (outermost first), where two or more lines call it. A frame's own call is told
    by the frames out from it (``from 20`` and ``from 21`` of a helper called twice); a line
    called from one line only (a helper's helper, the kernel's one call) names none, as the
    line table's chains name none there."""
    sites: dict[Location, set[tuple[_Frame, ...]]] = {}
    for frames in kernels:
        for i in range(1, len(frames)):  # each frame inside another: its call is frames[:i]
            sites.setdefault(frames[i][:2], set()).add(frames[:i])
    out = {}
    for line, found in sites.items():
        ordered = sorted(found)  # program order: the outer frames first
        lines = tuple((c[-1][0], c[-1][1]) for c in ordered)
        if len(set(lines)) > 1:
            out[line] = lines
    return out


def place(
    lines: Mapping[int, Location],
    callers: Mapping[Location, tuple[Location, ...]],
    shared: Mapping[int, str],
) -> dict[int, Location]:
    """``lines`` (pc -> the line the line table gives) with each library line moved to the
    kernel's line that called it (see the module docstring); ``shared``: pc -> opcode of
    every shared-memory instruction."""
    out = dict(lines)
    split = _call_runs(lines, callers, shared)
    for lib, sites in callers.items():
        if len(set(sites)) == 1:
            for pc, where in lines.items():
                if where == lib:
                    out[pc] = sites[0]
            continue
        for site, part in zip(sites, split.get(lib, ()), strict=False):
            for pc in part:
                out[pc] = site
    return out


def calls(
    lines: Mapping[int, Location],
    helpers: Mapping[Location, tuple[Location, ...]],
    shared: Mapping[int, str],
    barriers: Collection[int],
) -> dict[int, Location]:
    """pc -> the user's line that called the helper line the instruction is placed at
    (``lines``, after :func:`place`), for the shared-memory instructions (``shared``) of each
    helper line called from two or more lines (``helpers``, :func:`read_callsites`), by order
    as :func:`place` tells two calls of a library line apart: the k-th run of the line's
    shared-memory instructions is the k-th call's, where they split into as many runs as
    calls, each the same opcodes, and a barrier (``barriers``: the pcs of ``BAR``, which
    ptxas moves no shared-memory access across) lies between each run and the next: two
    calls' accesses with none between them may be interleaved. Otherwise none is named."""
    out: dict[int, Location] = {}
    for line, parts in _call_runs(lines, helpers, shared).items():
        apart = all(
            any(a[-1] < bar < b[0] for bar in barriers)
            for a, b in zip(parts, parts[1:], strict=False)
        )
        if not apart:
            continue  # nothing keeps two calls' accesses from being scheduled among each other
        for site, part in zip(helpers[line], parts, strict=True):
            out.update((pc, site) for pc in part)
    return out


def _call_runs(
    lines: Mapping[int, Location],
    sites: Mapping[Location, tuple[Location, ...]],
    shared: Mapping[int, str],
) -> dict[Location, list[list[int]]]:
    """Each line of ``sites`` -> its shared-memory instructions (``shared``, placed by
    ``lines``) split into one run a call, in program order, where they split into as many
    runs as calls, each the same opcodes (which run is which call is told by order alone:
    otherwise the line has none)."""
    runs: dict[Location, list[int]] = {}
    for pc in sorted(shared):
        where = lines.get(pc)
        if where is not None and where in sites:
            runs.setdefault(where, []).append(pc)
    out: dict[Location, list[list[int]]] = {}
    for line, pcs in runs.items():
        k = len(sites[line])
        if len(pcs) % k:
            continue
        m = len(pcs) // k
        parts = [pcs[j * m : (j + 1) * m] for j in range(k)]
        if len({tuple(shared[pc] for pc in part) for part in parts}) == 1:
            out[line] = parts
    return out
