"""The source tree a kernel build may read, and the check of a ``.cu`` before nvcc sees it.

A spec is untrusted text: its ``kernel.source``, its ``@FILE`` buffers, the
``-I`` folders of ``kernel.nvcc`` and every file the source ``#include``\\ s must
lie inside the kernel's *source tree*: the folders of ``[tool.shmem]
source-roots`` (``shmem trace --source-root``), else the repository that holds
the spec or kernel file (the nearest folder above it with ``.git``, else with
``pyproject.toml``, else the file's own folder) together with the repository
shmem runs in (when the current folder is inside one). Paths are compared after
following symbolic links.

:func:`check_source` reads the ``.cu`` and, transitively, every local header it
includes, and refuses, at ``file:line:column``:

* an ``#include``, ``#include_next`` or ``#import`` (also ``%:include``, and with
  ``??=`` trigraphs) whose file is outside the tree (and outside the include roots
  the user named), is absolute, or climbs with ``..`` out of the folders searched;
  the same for ``__has_include``. An include named by a macro (a computed include:
  ``#define H "pipe.h"``, ``#include H``) is expanded with the macros the files read here
  and ``-D`` define (:func:`.directive_scan.computed_targets`): a name it may give that is
  no regular file (a FIFO, a device, a socket, a folder) is refused at the ``#include``,
  and one in the tree is read as a header is. One that cannot be resolved before compiling
  (``#include CUDA_STD_HEADER(...)``, the toolkit's macros) is the compile's business: its
  own list of what it read is checked (:mod:`.build`), and a FIFO or a device it opens
  stops it at once (:mod:`shmem_cli.plumbing.special_opens`);
* ``#line`` and GCC line markers (``# 7 "file"``) that name a file outside the
  tree, ``#pragma GCC dependency`` and ``#embed``;
* a file that is not a regular file (a FIFO, a device), larger than
  :data:`MAX_SOURCE_BYTES`, holding a NUL byte (not source text), or a raw string
  literal that a backslash at the end of a line would make ambiguous.

The directives are found by one pass over the text (:mod:`.directive_scan`), so no
directive the preprocessor sees is hidden from the check. Headers found in the toolkit's or
the host compiler's own include folders, or in an include root the user trusts
(``trusted``), are not read.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from ..plumbing.bounded_read import kind_of
from ..plumbing.errors import ShmemError, SourcePos, shorten
from ..plumbing.frozen import frozen
from .directive_scan import Directive, Macro, Refused, computed_targets, definition, directives

MAX_SOURCE_BYTES = 8 << 20  # one source or header
MAX_TREE_BYTES = 64 << 20  # all of them together
MAX_FILES = 2000
MAX_RESOLVED = 2 * MAX_FILES  # computed includes expanded, each up to 4,096 tokens

_DIRECTIVE = re.compile(r"\s*(?:#|%:)\s*([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(.*)\Z", re.S)
_TARGET = re.compile(r'\s*(?:"([^"\n]*)"|<([^>\n]*)>)\s*\Z')
_HAS_INCLUDE = re.compile(r'__has_include(?:_next)?\s*\(\s*(?:"([^"\n]*)"|<([^>\n]*)>)?')
_LINE_NAME = re.compile(r'\s*[0-9]+\s*(?:"([^"\n]*)")?')
_INCLUDES = ("include", "include_next", "import")


@frozen
class SourceTree:
    """The folders a kernel build may read (resolved)."""

    roots: tuple[Path, ...]

    def inside(self, path: Path | str) -> bool:
        """Whether ``path``, links followed, lies in one of the roots."""
        try:
            real = Path(os.path.realpath(path))
        except (OSError, ValueError):
            return False
        return any(real == r or r in real.parents for r in self.roots)

    def describe(self) -> str:
        return ", ".join(str(r) for r in self.roots)


def repository_of(path: Path) -> Path | None:
    """The nearest folder at or above ``path``'s folder that holds ``.git`` (else
    ``pyproject.toml``)."""
    here = Path(os.path.realpath(path.parent if not os.path.isdir(path) else path))
    for marker in (".git", "pyproject.toml"):  # a checkout, else a project without git
        for folder in (here, *here.parents):
            if os.path.exists(folder / marker):
                return folder
    return None


def tree_for(anchor: str | Path, roots: Sequence[str | Path] = ()) -> SourceTree:
    """The source tree of a spec or kernel file: ``roots`` when given, else its repository,
    else its folder (a folder's own: a Triton cache entry's, not the one holding it)."""
    if roots:
        return SourceTree(tuple(Path(os.path.realpath(r)) for r in roots))
    path = Path(anchor)
    repo = repository_of(path)
    real = Path(os.path.realpath(path))
    folder = repo if repo is not None else real if os.path.isdir(real) else real.parent
    here = repository_of(Path.cwd())  # the project shmem runs in, when it is a repository
    return SourceTree((folder,) if here is None or here == folder else (folder, here))


def confine(path: str | Path, tree: SourceTree, what: str, *, shown: str | None = None) -> None:
    """Refuse ``path`` (a kernel source, a buffer file) outside ``tree``, in words (``shown``:
    the path as the user wrote it)."""
    if not tree.inside(path):
        raise ShmemError(
            f"{what} {shorten(shown if shown is not None else str(path))} is outside the "
            "kernel's source tree "
            f"({shorten(tree.describe(), 200)}); keep it inside, or name a wider folder in "
            "[tool.shmem] source-roots (shmem trace: --source-root)",
            code="refused",
        )


def _read_source(path: Path, tree_bytes: list[int]) -> str:
    from ..plumbing.bounded_read import read_bounded

    data = read_bounded(
        path, MAX_SOURCE_BYTES, what="CUDA source", code="invalid-kernel", text=True
    )
    tree_bytes[0] += len(data)
    if tree_bytes[0] > MAX_TREE_BYTES:
        raise ShmemError(
            f"the kernel's sources and headers are larger than {MAX_TREE_BYTES >> 20} MiB in all",
            path=str(path),
            code="invalid-kernel",
        )
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise ShmemError(
            "holds a NUL byte: this is not CUDA source text (give the .cu file, or a .cubin "
            "for compiled code)",
            path=str(path),
            pos=SourcePos(line, nul - (data.rfind(b"\n", 0, nul) + 1) + 1),
            code="invalid-kernel",
        )
    return data.decode("latin-1")  # one character per byte: columns stay byte columns


def _plain_name(name: str) -> bool:
    """A header name that cannot leave the folders searched: relative, no ``..``."""
    return bool(name) and not name.startswith("/") and ".." not in Path(name).parts


@frozen
class _Computed:
    """A computed ``#include`` met in the scan, resolved once every file's macros are known."""

    directive: Directive
    name: str
    rest: str
    path: Path


def check_source(
    source: Path,
    tree: SourceTree,
    include_dirs: Sequence[Path] = (),
    trusted: Callable[[Path], bool] = lambda _: False,
    defines: Sequence[str] = (),
) -> list[str]:
    """Refuse ``source`` or any header it includes that would have the build read outside
    ``tree`` or a file that is no regular file (see the module docstring); a located
    :class:`ShmemError` (code ``refused``). Headers that ``trusted`` accepts (an include root
    the user named) are not read. ``defines``: the ``-D`` arguments (``NAME=VALUE``).
    Returns the files read here (resolved), the source first."""
    # each file with the #include that brought it in: a header not read is an error there
    todo: list[tuple[Path, tuple[Path, SourcePos] | None]] = [(source, None)]
    seen: set[str] = set()
    tree_bytes = [0]
    macros: dict[str, list[Macro]] = {}
    for flag in defines:
        _define(" " + flag.replace("=", " ", 1), macros)
    computed: list[_Computed] = []
    resolved: dict[int, int] = {}  # a computed include -> the macros known when resolved
    spent = 0
    while todo:
        while todo:
            path, site = todo.pop()
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            if len(seen) > MAX_FILES:
                raise ShmemError(
                    f"the kernel includes more than {MAX_FILES} local headers",
                    path=str(source),
                    code="invalid-kernel",
                )
            text = _read_header(path, site, tree_bytes)
            try:
                for d in directives(text):
                    found = _check_directive(d, path, tree, include_dirs, trusted)
                    todo.extend((h, (path, SourcePos(d.line, d.column))) for h in found)
                    _note(d, path, macros, computed)
            except Refused as exc:
                raise _located(exc, path) from None
        known = sum(len(v) for v in macros.values())
        for k, c in enumerate(computed):
            if resolved.get(k) == known or spent >= MAX_RESOLVED:
                continue  # no new macro since, or the work is spent: the compile's watch
            resolved[k], spent = known, spent + 1
            try:
                found = _computed(c, macros, tree, include_dirs, trusted)
            except Refused as exc:
                raise _located(exc, c.path) from None
            site = (c.path, SourcePos(c.directive.line, c.directive.column))
            todo.extend((h, site) for h in found if os.path.realpath(h) not in seen)
    return sorted(seen, key=lambda p: p != os.path.realpath(source))


def _located(exc: Refused, path: Path) -> ShmemError:
    return ShmemError(
        exc.message, path=str(path), pos=SourcePos(exc.line, exc.column), code="refused"
    )


def _read_header(path: Path, site: tuple[Path, SourcePos] | None, tree_bytes: list[int]) -> str:
    """The text of ``path``; a refusal of a header is said at the ``#include`` (``site``)."""
    try:
        return _read_source(path, tree_bytes)
    except ShmemError as exc:
        if site is None or exc.pos is not None:
            raise
        said = f"#include of {shorten(path.name)!r}: {exc.message}"
        raise ShmemError(said, path=str(site[0]), pos=site[1], code=exc.code) from None


def _define(rest: str, macros: dict[str, list[Macro]]) -> None:
    made = definition(rest)
    if made is not None and len(macros.get(made[0], ())) < MAX_FILES:
        macros.setdefault(made[0], []).append(made[1])


def _note(
    d: Directive, path: Path, macros: dict[str, list[Macro]], computed: list[_Computed]
) -> None:
    """Keep a ``#define``'s macro and a computed include for :func:`_computed`."""
    m = _DIRECTIVE.match(d.text)
    if m is None:
        return
    name, rest = m.group(1), m.group(2)
    if name == "define":
        _define(rest, macros)
    elif name in _INCLUDES and _TARGET.match(rest) is None and len(computed) < MAX_FILES:
        computed.append(_Computed(d, name, rest, path))


def _computed(
    c: _Computed,
    macros: dict[str, list[Macro]],
    tree: SourceTree,
    include_dirs: Sequence[Path],
    trusted: Callable[[Path], bool],
) -> list[Path]:
    """The tree's headers a computed include may name (to be read), or a refusal where one
    it may name is no regular file."""
    found = []
    for target, quoted in computed_targets(c.rest, macros):
        if not target:
            continue
        absolute = target.startswith("/")
        search = [Path("/")] if absolute else [c.path.parent] if quoted else []
        where = [*search, *([] if absolute else include_dirs)]
        candidate = _refuse_special(c.directive, f"#{c.name}", target, where, " through a macro")
        if candidate is not None and tree.inside(candidate) and not trusted(candidate):
            found.append(candidate)
    return found


def _refuse_special(
    d: Directive, what: str, target: str, search: Sequence[Path], how: str, *, folders: bool = True
) -> Path | None:
    """The first of ``search``/``target`` that exists (None: none), refused (``what`` names
    ``target``, ``how``) where it is no regular file: a FIFO is waited on for ever, a device
    read without end (a folder, which the preprocessor passes over, too where ``folders``)."""
    for folder in search:
        candidate = folder / target
        try:
            mode = os.stat(candidate).st_mode
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(mode):
            return candidate
        if stat.S_ISDIR(mode) and not folders:
            continue
        said = "a folder" if stat.S_ISDIR(mode) else kind_of(mode)
        raise _refuse(
            d,
            f"{what} names {shorten(target)!r}{how}, and it is {said}, not a regular file: a "
            "compile would wait on it or read it for ever; include regular files only (save "
            "the data to a file)",
        )
    return None


def _refuse(d: Directive, message: str) -> Refused:
    return Refused(d.line, d.column, message)


def _check_directive(
    d: Directive,
    path: Path,
    tree: SourceTree,
    include_dirs: Sequence[Path],
    trusted: Callable[[Path], bool],
) -> list[Path]:
    """The local headers a directive brings in (to be checked too), or a refusal."""
    m = _DIRECTIVE.match(d.text)
    if m is None:
        return []
    name, rest = m.group(1), m.group(2)
    if name in _INCLUDES:
        return _include(d, name, rest, path, tree, include_dirs, trusted)
    if name in ("if", "elif"):
        for h in _HAS_INCLUDE.finditer(rest):
            target = h.group(1) if h.group(1) is not None else h.group(2)
            if target is None or not _plain_name(target):
                raise _refuse(d, "__has_include must name a header relative to the include folders")
            search = [path.parent] if h.group(1) is not None else []
            _refuse_special(d, "__has_include", target, [*search, *include_dirs], "", folders=False)
        return []
    if name == "line" or name.isdigit():
        lm = _LINE_NAME.match(rest if name == "line" else name + rest)
        named = lm.group(1) if lm else None
        if named and not (_plain_name(named) or tree.inside(named)):
            raise _refuse(
                d, f"#line names {shorten(named)!r}, a file outside the kernel's source tree"
            )
        return []
    if name == "pragma" and re.match(r"\s*GCC\s+dependency\b", rest):
        raise _refuse(d, "#pragma GCC dependency reads a file by name; remove it")
    if name == "embed":
        raise _refuse(d, "#embed reads a file by name; put the data in a source file")
    return []


def _include(
    d: Directive,
    name: str,
    rest: str,
    path: Path,
    tree: SourceTree,
    include_dirs: Sequence[Path],
    trusted: Callable[[Path], bool],
) -> list[Path]:
    t = _TARGET.match(rest)
    if t is None:  # a computed include: what the compile read is checked after it (.build)
        return []
    quoted = t.group(1) is not None
    target = t.group(1) if quoted else t.group(2)
    if not target or target.startswith("/"):
        raise _refuse(
            d, f"#{name} of {shorten(target)!r}: an absolute path; name the header relatively"
        )
    search = ([path.parent] if quoted else []) + list(include_dirs)
    for folder in search:
        candidate = folder / target
        if os.path.lexists(candidate):
            if trusted(candidate):
                return []  # an include root the user named: not read here
            if not tree.inside(candidate):
                raise _refuse(
                    d,
                    f"#{name} {shorten(target)!r} is outside the kernel's source tree "
                    f"({shorten(tree.describe(), 200)})",
                )
            return [candidate]
    if not _plain_name(target):
        raise _refuse(d, f"#{name} {shorten(target)!r} climbs out of the include folders with '..'")
    return []  # a toolkit or system header, or one nvcc will report missing
