"""What a ``.cu`` build may read, decided once for ``shmem trace`` and ``shmem sweep``.

The nvcc arguments are checked against the allowlist; an ``-I`` folder must lie in the
kernel's source tree or an include root (``[tool.shmem] include-roots``), or anywhere when
the arguments are the user's own (typed on the command line: such a folder is then a
library's, like an include root). The source and the headers of the tree are scanned
(:func:`shmem_cli.cuda.sources.check_source`); a library's headers are not, the compile's
own list of what it read is checked instead (:func:`shmem_cli.cuda.build.compile_checked`
with :attr:`CuInputs.allowed`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Sequence
from pathlib import Path

from ..plumbing.errors import ShmemError
from ..plumbing.frozen import frozen
from ..plumbing.fsutil import check_outputs
from .build import system_dirs, toolkit_dirs, within
from .nvcc_args import NvccArgError, check_nvcc_args
from .sources import SourceTree, check_source


@frozen
class CuInputs:
    """A ``.cu`` build's checked arguments, the tree's files it reads (scanned, the source
    first) and the library folders it may read besides (include roots, typed ``-I``)."""

    args: tuple[str, ...]
    read: tuple[str, ...]
    libraries: tuple[str, ...]
    tree: SourceTree
    #: the library folders the user typed (``-I`` on the command line): a compile error in
    #: their headers is quoted (not one in a configured include root's)
    typed: tuple[str, ...] = ()

    @functools.cached_property
    def _header_dirs(self) -> tuple[str, ...]:
        """The library folders, the toolkit's and the host compiler's: found once, not for
        every header the source scan and the compile's list name (nvcc is looked up on the
        PATH to name the toolkit's)."""
        return (*self.libraries, *toolkit_dirs(), *system_dirs())

    def library_file(self, path: Path) -> bool:
        """Whether ``path`` is a library's, the toolkit's or the host compiler's header."""
        return within(path, self._header_dirs)

    def allowed(self, path: Path) -> bool:
        """Whether the compile may read ``path``: the tree's or a library's file."""
        return self.tree.inside(path) or self.library_file(path)


def include_folders(include_roots: Sequence[str]) -> tuple[str, ...]:
    """The include roots (``[tool.shmem] include-roots``) as the folders a build's library
    headers lie in: every build's, whatever its input (a .cu adds its typed ``-I``)."""
    return tuple(os.path.realpath(r) for r in include_roots)


def checked_inputs(
    tree: SourceTree,
    nvcc_args: Sequence[str],
    *,
    base: Path,
    include_roots: Sequence[str] = (),
    trusted: bool = False,
) -> tuple[CuInputs, list[Path]]:
    """``nvcc_args`` checked (a ``refused`` :class:`ShmemError` otherwise), as the
    :class:`CuInputs` of a build whose source is not scanned yet (``read`` empty), and the
    include folders they name. ``trusted``: the arguments are the user's own, their ``-I``
    folders may lie outside the tree and are libraries (in every spelling nvcc takes:
    ``-IX``, ``-I X``, ``--include-path=X``, ``--include-path X``)."""
    includes = include_folders(include_roots)

    def may_include(p: Path) -> bool:
        return trusted or tree.inside(p) or within(p, includes)

    try:
        args, dirs = check_nvcc_args(nvcc_args, base=base, inside=may_include)
    except NvccArgError as exc:
        raise ShmemError(exc.message, code="refused") from None
    typed = tuple(str(d.path) for d in dirs if trusted)
    libraries = tuple(dict.fromkeys((*includes, *typed)))
    return CuInputs(tuple(args), (), libraries, tree, typed), [d.path for d in dirs]


def cu_inputs(
    source: Path,
    tree: SourceTree,
    nvcc_args: Sequence[str],
    *,
    base: Path,
    include_roots: Sequence[str] = (),
    trusted: bool = False,
    outputs: Sequence[str] = (),
) -> CuInputs:
    """Check ``nvcc_args`` (:func:`checked_inputs`) and the sources of ``source`` (a
    located, ``refused`` :class:`ShmemError` otherwise); ``outputs``: files the caller will
    write, refused if the build reads one."""
    inputs, dirs = checked_inputs(
        tree, nvcc_args, base=base, include_roots=include_roots, trusted=trusted
    )
    defines = [a[2:] for a in inputs.args if a.startswith("-D")]
    read = check_source(source, tree, dirs, trusted=inputs.library_file, defines=defines)
    check_outputs(outputs, read)  # a report must never replace a header the build reads
    return dataclasses.replace(inputs, read=tuple(read))
