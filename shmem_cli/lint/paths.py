"""Which files a lint run checks, and how they are named in findings.

Directories are searched for ``*.yaml``/``*.yml`` by the walk ``analyze`` makes
(:mod:`shmem_cli.spec.spec_files`: regular files only, no link out of the folder, bounded),
never into an excluded folder; files are taken as given. Exclude patterns are globs
matched against the path relative to the directory they were given for (the config file's
directory for ``[tool.shmem] exclude``, the current directory for ``--exclude``); a pattern
naming a directory excludes everything under it, and a pattern without ``/``
also matches a bare file name. Findings name files relative to the repository
root with ``/`` separators (what SARIF and GitHub annotations need), or by
absolute path when a file lies outside it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from ..plumbing.frozen import frozen
from ..spec.spec_files import SpecFiles, find_specs
from .core import Target


@frozen
class Excludes:
    """Glob patterns and the directory they are relative to."""

    base: Path
    patterns: tuple[str, ...]

    def matches(self, path: Path) -> bool:
        try:
            rel = path.resolve().relative_to(self.base.resolve()).as_posix()
        except ValueError:
            rel = None
        for raw in self.patterns:
            pat = raw.strip().removeprefix("./").rstrip("/")
            if not pat:
                continue
            if "/" not in pat and fnmatchcase(path.name, pat):
                return True
            if rel is not None and (
                fnmatchcase(rel, pat) or fnmatchcase(rel, pat + "/*") or rel.startswith(pat + "/")
            ):
                return True
        return False


def display_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` with '/' separators, else absolute."""
    full = Path(os.path.abspath(path))
    try:
        return full.relative_to(root.resolve()).as_posix()
    except ValueError:
        try:
            return full.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return full.as_posix()


def collect_targets(
    paths: Iterable[str | Path] | SpecFiles, *, root: Path, excludes: Sequence[Excludes] = ()
) -> list[Target]:
    """The spec files under ``paths`` (or of the walk made: :func:`find_walk`), in order, each
    once, minus the excluded ones; a folder that could not be searched with its error."""
    found = paths if isinstance(paths, SpecFiles) else find_walk(paths, excludes)
    seen: set[Path] = set()
    out: list[Target] = []
    for p in found.paths:
        key = p.resolve()
        if key in seen or any(ex.matches(p) for ex in excludes):
            continue
        seen.add(key)
        out.append(Target(path=str(p), display=display_path(p, root), error=found.error_of(p)))
    return out


def find_walk(paths: Iterable[str | Path], excludes: Sequence[Excludes] = ()) -> SpecFiles:
    """The walk of ``paths`` (:func:`~shmem_cli.spec.spec_files.find_specs`), never into a
    folder an exclude names."""
    active = [ex for ex in excludes if ex.patterns]  # (no folder resolved for none)
    return find_specs(paths, pruned=lambda folder: any(ex.matches(folder) for ex in active))
