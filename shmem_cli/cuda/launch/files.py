"""The files a launch value names, found in one place: ``@FILE`` (a pointer's buffer, a
``--const``/``--memory`` table, ``--params``) and a tensor map's ``data=@FILE``.

A spec's ``kernel:`` values name them relative to the spec's folder (:func:`rebased`), and
each is checked before any trace (:func:`check_file`): named, a regular file that can be read,
of at most :data:`MAX_FILE_BYTES`. The check asks the file's inode only (``os.stat``), never
opens it, and only of a file in the spec's source tree: one outside it is refused first, with
the tree's configured roots ([tool.shmem] source-roots), when a spec file is read
(spec/compile.py, for ``analyze`` and the lint alike) and again before the lint's trace reads
it (lint/kernel_trace.py); what its bytes hold (a ``.npy`` header, a parameter block's size),
the trace's.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from ...plumbing.bounded_read import kind_of
from ...plumbing.errors import shorten
from .tensormap import PREFIX as TENSORMAP
from .values import LaunchError

#: the most bytes one ``@FILE`` may hold, and all of a launch's files together
MAX_FILE_BYTES = 128 << 20
_DATA = "data"


def named_file(value: str) -> str | None:
    """The file ``value`` names (``@FILE``, or a ``tensormap:`` value's ``data=@FILE``), as
    written ('' for a bare ``@``); None where it names none."""
    v = value.strip()
    if v.startswith("@"):
        return v[1:].strip()
    if v.startswith(TENSORMAP):
        for part in v[len(TENSORMAP) :].split(","):
            key, eq, given = part.partition("=")
            if eq and key.strip().lower() == _DATA and given.strip().startswith("@"):
                return given.strip()[1:].strip()
    return None


def rebased(value: str, base: Path) -> str:
    """``value`` with the file it names taken relative to ``base`` (a spec's folder; an
    absolute name stays as it is); a value naming no file, or a bare ``@``, unchanged."""
    name = named_file(value)
    if not name:
        return value
    v = value.strip()
    if v.startswith("@"):
        return "@" + str(base / name)
    parts = v[len(TENSORMAP) :].split(",")
    for i, part in enumerate(parts):
        key, _eq, _given = part.partition("=")
        if key.strip().lower() == _DATA:
            parts[i] = f"{key}=@{base / name}"
    return TENSORMAP + ",".join(parts)


def check_file(
    value: str,
    where: str,
    shown: str | None = None,
    inside: Callable[[str], bool] = lambda _: True,
) -> None:
    """The file ``value`` names, if any, exists as a regular file that can be read and holds
    at most :data:`MAX_FILE_BYTES` (``shown``: its name as the user wrote it). Only its inode
    is asked, and only where ``inside`` takes it (a file outside the places shmem may read is
    the caller's to refuse, not to look at): nothing is opened or read."""
    name = named_file(value)
    if name is None:
        return
    said = shorten(shown if shown is not None else name, 200)
    if not name:
        raise LaunchError(f"{where}: '@' names no file (give @FILE.bin or @FILE.npy)")
    if not inside(name):
        return
    try:
        info = os.stat(name)
    except FileNotFoundError:
        raise LaunchError(
            f"{where}: {said}: no such file (a file's name is taken from the spec's folder)"
        ) from None
    except (OSError, ValueError) as exc:  # a NUL byte, a name too long, a loop of links
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a file name"
        raise LaunchError(f"{where}: {said}: {shorten(why)}") from None
    if not stat.S_ISREG(info.st_mode):
        raise LaunchError(
            f"{where}: {said} is {kind_of(info.st_mode)}, not a regular file (save the data "
            "to a file and name that file)"
        )
    if not os.access(name, os.R_OK):
        raise LaunchError(f"{where}: {said} cannot be read (permission denied)")
    if info.st_size > MAX_FILE_BYTES:
        raise LaunchError(
            f"{where}: {said} holds {info.st_size:,} bytes; a launch's file may hold at most "
            f"{MAX_FILE_BYTES >> 20} MiB (give the part the kernel reads)"
        )
