"""What of nvcc's messages a kernel build shows. A failed build: the diagnostics located in
the kernel's own source tree, the CUDA toolkit's headers or a library's folder the user typed
(``--nvcc-arg=-I$CUTLASS/include``), never a line of any other file, at most
:data:`MAX_MESSAGES` of them. A diagnostic in a header says where the kernel's own code
instantiated it (nvcc's ``detected during: ... at line 58 of k.cu``: the innermost such line
in the tree). A build that succeeded: its front end's warnings by that very rule
(:func:`source_warnings`), then what ptxas said of the kernel (:func:`kernel_warnings`)."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from ..plumbing.errors import shorten
from .build import DIAGNOSTIC, INSTANTIATED, PTXAS_SAID, within
from .sources import SourceTree

# --- what of the compiler's messages is shown ------------------------------------------------

# ptxas names the PTX it assembles, a temporary file: "ptxas /tmp/tmpxft_.._k.ptx, line 26;
# error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'"
_PTXAS = re.compile(r"^ptxas\s+\S+?, line (\d+); (error|warning)\s*:\s*(.*)$")
_SUMMARY = re.compile(
    r"^(\d+ errors? detected in the compilation of .*|compilation terminated\.|"
    r"ptxas (?:error|fatal|warning)\s*:.*|nvcc (?:error|fatal)\s*:.*)$"
)
_TOOLKIT = re.compile(r"/(?:cuda[^/]*|nvidia/[^/]+|targets/[^/]+|usr)/(?:.*/)?include/")
MAX_MESSAGES = 15
_ERROR = re.compile(r"(?:catastrophic error|fatal error|error)\b")
#: gcc's words for an #include it cannot find (nvcc's front end: "cannot open source file")
_NO_HEADER = re.compile(
    r"fatal error: (?P<gcc>[^:\n]{1,300}): No such file or directory|"
    r'cannot open source file "(?P<edg>[^"\n]{1,300})"'
)


MAX_NOTE_LINES = 200  # lines after a diagnostic read for where the kernel instantiated it


def compiler_messages(
    text: str, tree: SourceTree, libraries: Sequence[str] = (), roots: Sequence[str] = ()
) -> str:
    """nvcc's diagnostics, one line each, without the source lines it quotes: a message
    about a file outside the tree (other than the toolkit's and the system's headers and
    the ``libraries`` folders the user typed) keeps its place but not its words, so no
    file content reaches a report. A header nvcc could not find gets a hint: the ``-I`` to
    add, the include root among ``roots`` that holds it where one does."""
    said: list[tuple[bool, list[str]]] = []  # (an error?, the lines of one diagnostic)
    lines = text.splitlines()
    # each file judged once: nvcc names the same few headers on line after line (a realpath)
    inside = functools.lru_cache(maxsize=4096)(tree.inside)
    shown = functools.lru_cache(maxsize=4096)(
        lambda file: bool(_TOOLKIT.search(file)) or within(file, libraries)
    )
    for k, raw in enumerate(lines):
        line = raw.rstrip()
        m = DIAGNOSTIC.match(line)
        if m is not None:
            file = m.group("file")
            own = inside(file)
            error = _ERROR.match(m.group("msg")) is not None
            if own or shown(file):
                group = [shorten(line, 300)]
            else:  # its place, not its words
                at = m.group("line") or m.group("l2")
                group = [
                    f"{shorten(file, 200)}({at}): {m.group('msg').split(':')[0]} "
                    "(not shown: the file is outside the kernel's source tree)"
                ]
            where = None if own else _instantiated_at(lines[k + 1 : k + 1 + MAX_NOTE_LINES], inside)
            if where is not None:  # the kernel's own line, shown wherever the header lies
                group.append(f"{where}: note: instantiated from here (the kernel's own line)")
            said.append((error, group))
        elif (p := _PTXAS.match(line)) is not None:
            ptxas = f"ptxas {p.group(2)}: {p.group(3)} (line {p.group(1)} of the PTX)"
            said.append((p.group(2) == "error", [shorten(ptxas, 300)]))
        elif _SUMMARY.match(line):
            said.append(("warning" not in line, [shorten(line, 300)]))
    out = _errors_first(list({tuple(g): (e, g) for e, g in said}.values()))  # each once
    missing = _NO_HEADER.search("\n".join(out))
    if missing is not None:
        header = shorten(missing.group("gcc") or missing.group("edg") or "", 100)
        hint = (
            "; CUTLASS's utilities: --nvcc-arg=-I$CUTLASS/tools/util/include"
            if header.startswith("cutlass/util/")
            else "; CuTe and CUTLASS: --nvcc-arg=-I$CUTLASS/include"
            if _library(header)
            else ""
        )
        root = _root_holding(header, roots)
        out.append(
            f"hint: nvcc found no {header}: give the folder that holds it with "
            f"--nvcc-arg=-IFOLDER{hint}"
            if root is None
            else f"hint: nvcc found no {header}, which the include root {shorten(root, 200)} "
            f"holds: an include root says what a build may read, -I where nvcc looks: add "
            f"--nvcc-arg=-I{shorten(root, 200)}"
        )
    return "\n".join(out)


def _root_holding(header: str, roots: Sequence[str]) -> str | None:
    """The first of ``roots`` (include roots, a build's allowed library folders) that holds
    ``header`` (a relative name as an ``#include`` writes it), or None."""
    if header.startswith("/") or ".." in Path(header).parts:
        return None
    return next((r for r in roots if os.path.isfile(os.path.join(r, header))), None)


def _errors_first(said: Sequence[tuple[bool, list[str]]]) -> list[str]:
    """At most :data:`MAX_MESSAGES` lines of the diagnostics ``said`` (an error?, its lines),
    in nvcc's order, each once (nvcc repeats a header's warning per compile pass); where
    there are more, the errors are kept before the warnings (a CUTLASS
    build prints hundreds of warnings before the one error that failed it), and a last line
    says how many were left out."""
    total = sum(len(group) for _, group in said)
    if total <= MAX_MESSAGES:
        return [line for _, group in said for line in group]
    room = MAX_MESSAGES - 1
    keep: set[int] = set()
    for errors in (True, False):
        for k, (error, group) in enumerate(said):
            if error == errors and len(group) <= room:
                keep.add(k)
                room -= len(group)
    out = [line for k, (_, group) in enumerate(said) if k in keep for line in group]
    warnings = sum(len(g) for k, (e, g) in enumerate(said) if k not in keep and not e)
    left = total - len(out)
    which = " (warnings)" if warnings == left else ""
    return [*out, f"... and {left} more lines{which}"]


def _instantiated_at(after: Sequence[str], inside: Callable[[str], bool]) -> str | None:
    """The innermost ``at line N of FILE`` in the tree among nvcc's instantiation notes that
    follow a diagnostic (up to the next diagnostic; ``after``: the lines that follow it,
    at most :data:`MAX_NOTE_LINES`, a slice, never the rest of the output per diagnostic)."""
    for raw in after:
        line = raw.strip()
        if DIAGNOSTIC.match(line) or _SUMMARY.match(line):
            return None
        m = INSTANTIATED.search(line)
        if m is not None and inside(m.group(2)):
            return f"{shorten(m.group(2), 200)}:{m.group(1)}"
    return None


def _library(header: str) -> bool:
    return header.startswith(("cute/", "cutlass/"))


# --- what nvcc said of a build that succeeded ---------------------------------------------------


def source_warnings(
    said: Sequence[str], tree: SourceTree, libraries: Sequence[str] = ()
) -> tuple[str, ...]:
    """The warnings of nvcc's front end among a build's lines ``said``
    (:func:`.build.build_warnings`: those that are not ptxas's), as a failed build shows its
    messages (:func:`compiler_messages`: each once, as nvcc wrote it, ``k.cu(3): warning
    #177-D: variable "t" was declared but never referenced``; one in a file outside the tree,
    the toolkit's and the typed ``libraries`` keeps its place, not its words; at most
    :data:`MAX_MESSAGES` lines); each kernel's are then picked by :func:`kernel_front`."""
    front = [line for line in said if not PTXAS_SAID.match(line)]
    return tuple(compiler_messages("\n".join(front), tree, libraries).splitlines())


Span = tuple[str, int, int]  # a kernel's own lines in a file: (file, first, last)
_HERE = re.compile(r"^(?P<file>.+):(?P<line>\d+): note: instantiated from here")


def kernel_front(
    shown: Sequence[str], mine: Sequence[Span], others: Sequence[Span]
) -> tuple[str, ...]:
    """The front end's warnings ``shown`` (:func:`source_warnings`) about one kernel, whose
    own lines are ``mine`` (:func:`..trace.kernel.line_table.own_spans`), the build's other
    kernels' ``others``: a warning (with its notes) located in another kernel's lines and not
    in its own is left out; one in a header goes by the line that instantiated it. The rest
    (``#warning``, one at global scope, in a device function or a header without an
    instantiating line) are about every kernel."""
    groups: list[list[str]] = []
    for line in shown:
        m = DIAGNOSTIC.match(line)
        joins = _HERE.match(line) or (m is not None and m.group("msg").startswith("note"))
        if groups and joins:
            groups[-1].append(line)
        else:
            groups.append([line])
    out: list[str] = []
    for group in groups:
        place = _place(group)
        if place is None or _within(place, mine) or not _within(place, others):
            out += group
    return tuple(out)


def _place(group: Sequence[str]) -> tuple[str, int] | None:
    """Where a warning is: the kernel's line that instantiated it, else its own place."""
    for line in group[1:]:
        if (h := _HERE.match(line)) is not None:
            return h.group("file"), int(h.group("line"))
    m = DIAGNOSTIC.match(group[0])
    at = None if m is None else m.group("line") or m.group("l2")
    return None if m is None or at is None else (m.group("file"), int(at))


def _within(place: tuple[str, int], spans: Sequence[Span]) -> bool:
    """Whether ``place`` lies in one of ``spans`` (a file named as nvcc or the line table
    wrote it: the same where one's path ends with the other's)."""
    file, line = place
    a = Path(file).parts
    for name, lo, hi in spans:
        b = Path(name).parts
        n = min(len(a), len(b))
        if lo <= line <= hi and n and a[-n:] == b[-n:]:
            return True
    return False


# --- what ptxas said of a build that succeeded, per kernel ------------------------------------

_AROUND = re.compile(r",? (?:in )?around line \d+")  # of the temporary PTX: no use to a reader
_QUOTED = re.compile(r"'([^'\s]{1,4096})'")
MAX_KERNEL_WARNINGS = 10  # distinct warnings shown per kernel
WARNING_CHARS = 300  # the most of one shown


def kernel_warnings(
    said: Sequence[str], kernel: str, kernels: Collection[str] = ()
) -> tuple[str, ...]:
    """ptxas's lines ``said`` (a build's warnings and advisories) that are about the kernel
    whose mangled name is ``kernel``: those that name it, and those that name none of the
    other ``kernels`` (a device function's, the module's); each ``ptxas: MESSAGE``, its own
    name and the PTX line left out, each once (with how often it was said), at most
    :data:`MAX_KERNEL_WARNINGS` and a line saying how many more."""
    own = re.compile(r",? (?:in|for) (?:the )?(?:entry )?function '" + re.escape(kernel) + "'")
    counts: dict[str, int] = {}
    for line in said:
        m = PTXAS_SAID.match(line)
        if m is None:
            continue
        names = set(_QUOTED.findall(m.group("msg")))
        if kernel not in names and any(n in names for n in kernels if n != kernel):
            continue  # another kernel's
        msg = shorten(_AROUND.sub("", own.sub("", m.group("msg"))).strip(), WARNING_CHARS)
        counts[msg] = counts.get(msg, 0) + 1
    out = [f"ptxas: {m}" + (f" ({n} places)" if n > 1 else "") for m, n in counts.items()]
    if len(out) > MAX_KERNEL_WARNINGS:
        left = len(out) - MAX_KERNEL_WARNINGS + 1
        out = [*out[: MAX_KERNEL_WARNINGS - 1], f"ptxas: ... and {left} more warnings"]
    return tuple(out)
