"""Which spec files the paths given name: the one walk of ``analyze``, ``lint`` and ``verify``.

A file given is taken as it is. A folder given is searched at any depth for ``*.yaml`` and
``*.yml``, by one rule:

* only regular files are taken, and a link to a file only where the file lies inside the
  folder given; a FIFO, a device or a socket named like a spec, a link out of the folder and a
  link to nothing (or to itself) are skipped, each said (:attr:`SpecFiles.skipped`);
* links to folders are not followed, nor are folders the caller leaves out (``pruned``: the
  lint's excludes) or a version control system's (``.git``), so a link loop is no walk;
* the walk keeps its own list of folders to visit (a tree 2,000 folders deep is no recursion);
  a folder it cannot list (no permission, its path too long) is that folder's error, beside the
  others' results;
* it looks at :data:`MAX_NAMES` names of files and folders at most, and takes
  :data:`MAX_SPECS` spec files at most, for each folder given: past either the folder is one
  error, none of its specs analyzed (a part of them, in no order the user chose, would be a
  result that looks whole), and the other paths are still analyzed. ``shmem analyze /`` stops
  in a fraction of a second, where it walked the machine and analyzed every YAML file found;
* and it takes :data:`MAX_SECONDS` at most for each folder given, read between one name and
  the next: a slow tree (a network file system, millions of names a listing takes long to
  give) stops there in the same words, where the counts alone let it run for as long as the
  file system took to give 200,000 names. A FIFO or a device is never opened (its type is the
  listing's, or a ``stat`` of the link), so no name waits on a writer.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ..plumbing.bounded_read import kind_of
from ..plumbing.errors import shorten
from ..plumbing.frozen import frozen

#: names of files and folders one folder's walk looks at (0.3 s; ``/`` here holds 570,000)
MAX_NAMES = 200_000
#: spec files one folder given may hold (some 40 s of ``analyze`` at 4 ms a spec)
MAX_SPECS = 10_000
#: seconds one folder's walk may take (200,000 names take 0.3 s on a local disk)
MAX_SECONDS = 20.0
SUFFIXES = (".yaml", ".yml")
#: a version control system's own folders: never specs, and a checkout's .git may hold
#: hundreds of thousands of loose objects, which the bound on names would count
VCS_FOLDERS = frozenset({".git", ".hg", ".svn"})


@frozen
class SpecFiles:
    """The spec files found, in order, and what was not taken."""

    #: a file given as given, a folder's spec files sorted (a folder with an error in place)
    paths: tuple[Path, ...]
    #: (a folder, why its specs were not looked for): the folder's error
    errors: tuple[tuple[Path, str], ...] = ()
    #: (a name that looks like a spec, why it was not taken)
    skipped: tuple[tuple[Path, str], ...] = ()

    def error_of(self, path: Path) -> str | None:
        """Why ``path`` (a folder in :attr:`paths`) was not searched, else None."""
        return next((why for folder, why in self.errors if folder == path), None)


def find_specs(
    paths: Iterable[str | Path], *, pruned: Callable[[Path], bool] | None = None
) -> SpecFiles:
    """The spec files under ``paths`` (``pruned``: folders not to look into)."""
    found: list[Path] = []
    errors: list[tuple[Path, str]] = []
    skipped: list[tuple[Path, str]] = []
    for given in map(Path, paths):
        if not os.path.isdir(given):
            found.append(given)
            continue
        walk = _Walk(given, pruned)
        walk.run()
        found += walk.listed()
        errors += walk.errors
        skipped += walk.skipped
    return SpecFiles(tuple(found), tuple(errors), tuple(skipped))


class _Walk:
    """One folder's walk, counted."""

    def __init__(self, folder: Path, pruned: Callable[[Path], bool] | None) -> None:
        self.folder = folder
        self.real = os.path.realpath(folder)
        self.pruned = pruned
        self.names = 0
        self.deadline = time.monotonic() + MAX_SECONDS
        self.late = False  # stopped by the time bound
        self.found: list[Path] = []
        self.errors: list[tuple[Path, str]] = []
        self.skipped: list[tuple[Path, str]] = []

    def listed(self) -> list[Path]:
        return sorted([*self.found, *(folder for folder, _ in self.errors)])

    def run(self) -> None:
        todo = [os.fspath(self.folder)]
        while todo:
            here = todo.pop()
            if time.monotonic() > self.deadline:
                self.late = True
                return self._stop()
            try:
                with os.scandir(here) as listing:
                    for entry in listing:
                        if not self._take(entry, todo):
                            return self._stop()
            except OSError as exc:
                why = exc.strerror or type(exc).__name__
                self.errors.append((Path(here), f"cannot look into this folder: {why}"))
        return None

    def _take(self, entry: os.DirEntry[str], todo: list[str]) -> bool:
        """Take one name; False once past a bound."""
        self.names += 1
        if self.names > MAX_NAMES:
            return False
        if self.names % 256 == 0 and time.monotonic() > self.deadline:  # a slow listing
            self.late = True
            return False
        try:  # the listing's own type where it has one: a path too long is still seen
            if entry.is_dir(follow_symlinks=False):
                if entry.name in VCS_FOLDERS:
                    return True
                if self.pruned is None or not self.pruned(Path(entry.path)):
                    todo.append(entry.path)
                return True
            if not entry.name.endswith(SUFFIXES):
                return True
            why = self._refusal(entry)
        except OSError as exc:
            why = f"cannot be looked at ({exc.strerror or type(exc).__name__})"
        if why is not None:
            self.skipped.append((Path(entry.path), why))
            return True
        self.found.append(Path(entry.path))
        return len(self.found) <= MAX_SPECS

    def _refusal(self, entry: os.DirEntry[str]) -> str | None:
        """Why a name like a spec's is not one to read, else None."""
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            real = os.path.realpath(entry.path)
            if not (real == self.real or real.startswith(self.real.rstrip(os.sep) + os.sep)):
                return f"a link to {shorten(real, 200)}, outside {shorten(str(self.folder))}"
            try:
                mode = os.stat(entry.path).st_mode
            except (OSError, ValueError):
                return "a link to no file (or a loop of links)"
        if stat.S_ISREG(mode):
            return None
        return f"{kind_of(mode)}, not a regular file"

    def _stop(self) -> None:
        """Past a bound: the folder is one error, its specs not analyzed."""
        what = (
            f"{MAX_SECONDS:g} seconds ({self.names:,} names looked at; a slow or huge tree)"
            if self.late
            else f"{MAX_NAMES:,} names of files and folders"
            if self.names > MAX_NAMES
            else f"{MAX_SPECS:,} spec files"
        )
        self.found.clear()
        self.skipped.clear()
        way = "name the folders that hold your specs"
        if self.pruned is not None:
            way += " (or leave the others out: --exclude, [tool.shmem] exclude)"
        self.errors[:] = [
            (
                self.folder,
                f"the search for spec files stopped at {what} in this folder (the limit), and "
                f"none of its specs is analyzed: {way}",
            )
        ]
