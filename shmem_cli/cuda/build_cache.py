"""The opt-in build cache of ``.cu`` compiles (``--build-cache DIR``, ``[tool.shmem]
build-cache``): a second trace of an unchanged source takes the cubin an earlier one built.

shmem writes nowhere the user did not name, so there is no cache unless one is named; and
the folder named is checked at once (:func:`folder_problem`) but made (its parent must exist)
only when a build first keeps an entry: a run that keeps nothing (a ``.cubin`` traced, a
build that failed) writes nothing.

**The key** is a SHA-256 over a canonical record of what decides the build before it runs:
this format's version, the nvcc found (its resolved path, size, modification time and its
``--version`` text: the ``nvcc`` on ``PATH`` may be a wrapper script whose size and time do
not change when the toolkit behind it does), the host compiler nvcc preprocesses with
(resolved path, size, time), the ``NVCC_*`` flags and the include paths (``CPATH``, ...)
of the environment, the architecture asked
for and the default (what the ``a``-variant choice starts from), the nvcc arguments exactly,
and the source's resolved path and bytes.

**An entry** is three files in the folder, named by the key: ``KEY.cubin``, ``KEY.sass``
(the whole cubin's listing, where choosing the target read it) and ``KEY.json``, written
last, holding the build's architecture, note, ptxas's warnings, the files the compiles read
(what their line markers named, :func:`shmem_cli.cuda.build.read_files`) with each file's
SHA-256, and the cubin's and listing's SHA-256. A lookup hits only when every recorded file
still has its hash (an edited header misses), the entry's own files are whole and of this
key; anything else (missing, truncated, foreign, a link, too large) is a miss and the next
build writes the entry again. The recorded files are checked against the folders a build may
read now before any is read: one outside them is a miss (shmem reads no file outside those
folders, whatever a manifest names), and the fresh build that follows is checked as every
build is.

Files are read without following links out of the folder, written to a temporary file in
it and renamed into place; the folder keeps at most :data:`MAX_ENTRIES` entries and
:data:`MAX_BYTES` bytes, the least recently used (a hit touches its manifest) removed first.
A build whose files change while it runs, or that read more than :data:`MAX_HASHED_BYTES`,
is not kept. Like ccache's direct mode, a header created later earlier on the include path
(shadowing a recorded one) is not noticed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..plumbing.errors import ShmemError, shorten
from ..plumbing.frozen import frozen
from ..plumbing.fsutil import write_bytes
from . import sources, toolchain

#: of the key's record and of the manifest (2: the sm_90a choice also on a printed error; 3: not
#: where the sm_90 build runs the same sm_90a-only opcodes; 4: no sm_90a build where no file
#: read names an sm_90a-only macro, its files then not recorded; 5: the warnings kept hold
#: nvcc's front end's too)
FORMAT = 5
MAX_ENTRIES = 64
MAX_BYTES = 1 << 30
MAX_HASHED_BYTES = 512 << 20  # the files one build read, hashed to store or check it
MAX_FILES = toolchain.COMPILE_FILES  # files one build may record (as many as it may read)
MAX_MANIFEST_BYTES = 16 << 20
MAX_SOURCE_BYTES = sources.MAX_SOURCE_BYTES  # the source hashed into the key, as read
MAX_LISTED = 100_000  # names of the folder looked at to evict
STALE_TEMP_S = 3600.0  # a temporary file older than this was left by a process that died
_ENTRY = re.compile(r"([0-9a-f]{64})\.(json|cubin|sass)\Z")
_HEX = re.compile(r"[0-9a-f]{64}\Z")
_TEMP = ".tmp-"
#: the environment that changes what nvcc runs or where it looks for headers (CPATH and the
#: host compiler's include paths: a header found through them is recorded and hashed, but
#: another folder named there could hide it)
_ENV = (
    *("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"),
    *("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"),
)
_CHUNK = 1 << 20


@frozen
class BuildCache:
    """A cache folder (resolved) and its bounds."""

    folder: Path
    max_entries: int = MAX_ENTRIES
    max_bytes: int = MAX_BYTES


@frozen
class Cached:
    """An entry found: the cubin written into the caller's folder, and the build's fields."""

    cubin: Path
    arch: str
    note: str | None
    files: tuple[str, ...]
    sass: str
    warnings: tuple[str, ...] = ()  # nvcc's (build.build_warnings), shown from a hit too


def folder_problem(path: str | os.PathLike[str]) -> str | None:
    """Why the folder at ``path`` cannot be a build cache, in words (the fix said), or None:
    it is a folder, or it is missing and its parent is a folder it could be made in."""
    if os.path.lexists(path):
        return None if os.path.isdir(path) else "is not a folder; name a folder (made when needed)"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return (
            "cannot be made: its parent folder does not exist (shmem makes the cache folder "
            "only); make the parent folder, or name a folder whose parent exists"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        return "cannot be made: its parent folder is not writable; name a folder you can write"
    return None


def open_cache(folder: str | os.PathLike[str]) -> BuildCache:
    """The cache at ``folder``, checked (:func:`folder_problem`: a :class:`ShmemError`, code
    ``invalid-argument``, in words) but not made: the first entry kept makes it."""
    why = folder_problem(folder)
    if why is not None:
        shown = shorten(os.fspath(folder), 200)
        raise ShmemError(f"the build cache folder {shown} {why}", code="invalid-argument")
    path = Path(os.path.abspath(folder))
    return BuildCache(path.resolve(), MAX_ENTRIES, MAX_BYTES)  # read now: a test lowers them


def _tool(path: str | None) -> dict[str, Any] | None:
    """A tool's identity: its resolved path, size and modification time."""
    if path is None:
        return None
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return {"path": real}
    return {"path": real, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


@functools.cache
def _version(real: str, size: int, mtime_ns: int) -> str:
    """``nvcc --version`` of the nvcc at ``real`` (as it was: size, time), once a process."""
    try:
        return toolchain.run([real, "--version"], timeout=60).stdout
    except (OSError, toolchain.ToolError, subprocess.TimeoutExpired):
        return ""


def key_of(source: Path, arch: str | None, default: str, args: Sequence[str]) -> str | None:
    """The key of a build (module docstring); None where it cannot be made (no nvcc, the
    source unreadable or too large): the build is then neither looked up nor kept."""
    nvcc = _tool(toolchain.which("nvcc"))
    if nvcc is None or "size" not in nvcc:
        return None
    digest = _hash_file(str(source), MAX_SOURCE_BYTES)
    if digest is None:
        return None
    record = {
        "format": FORMAT,
        "nvcc": {**nvcc, "version": _version(nvcc["path"], nvcc["size"], nvcc["mtime_ns"])},
        "host": _tool(toolchain.which("g++") or toolchain.which("c++")),
        "env": {name: os.environ.get(name) for name in _ENV},
        "arch": arch,
        "default": default,
        "args": list(args),
        "source": os.path.realpath(source),
        "source_sha256": digest[0],
    }
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _open(path: str, *, follow: bool) -> int | None:
    """A descriptor of the regular file at ``path`` (never a FIFO waited on, never a link
    followed unless ``follow``), or None."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):  # ValueError: a name with a NUL or that cannot be encoded
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _hash_file(path: str, limit: int) -> tuple[str, int] | None:
    """The SHA-256 and size of the regular file at ``path``; None when it is missing, not a
    regular file, or larger than ``limit``."""
    fd = _open(path, follow=True)
    if fd is None:
        return None
    h, size = hashlib.sha256(), 0
    try:
        with os.fdopen(fd, "rb") as f:
            while chunk := f.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    return None
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest(), size


def _hashes(files: Sequence[str]) -> list[str] | None:
    """The SHA-256 of each file, or None when one is unreadable or they pass the bounds."""
    if len(files) > MAX_FILES:
        return None
    out, left = [], MAX_HASHED_BYTES
    for name in files:
        got = _hash_file(name, left)
        if got is None:
            return None
        out.append(got[0])
        left -= got[1]
    return out


def _read(path: Path, limit: int) -> bytes | None:
    """The bytes of the cache's regular file at ``path`` (no link followed), None when
    missing or larger than ``limit``."""
    fd = _open(str(path), follow=False)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest(cache: BuildCache, key: str) -> dict[str, Any] | None:
    """The entry's manifest, checked field by field; None for anything else."""
    raw = _read(cache.folder / f"{key}.json", MAX_MANIFEST_BYTES)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("key") != key:
        return None
    files, hashes = doc.get("files"), doc.get("hashes")
    fields_ok = (
        isinstance(doc.get("arch"), str)
        and isinstance(doc.get("note"), str | None)
        and isinstance(files, list)
        and isinstance(hashes, list)
        and len(files) == len(hashes) <= MAX_FILES
        and all(isinstance(f, str) for f in [*files, *_listed_or(doc.get("warnings"))])
        and all(isinstance(h, str) and _HEX.match(h) for h in [*hashes, doc.get("cubin")])
        and (doc.get("sass") is None or (isinstance(doc["sass"], str) and _HEX.match(doc["sass"])))
    )
    return doc if fields_ok else None


def _listed_or(value: object) -> list[object]:
    """``value`` where it is a list, else a list no check passes (a manifest's missing list)."""
    return value if isinstance(value, list) else [None]


def _all_allowed(files: Sequence[str], allowed: Callable[[Path], bool]) -> bool:
    """Whether a build may read every file a manifest names (a name no path can have, with a
    NUL or a lone surrogate, is no file it may read)."""
    try:
        return all(allowed(Path(name)) for name in files)
    except (ValueError, UnicodeError, OSError):
        return False


def lookup(
    cache: BuildCache, key: str, into: Path, allowed: Callable[[Path], bool]
) -> Cached | None:
    """The entry of ``key`` with its cubin written to ``into/kernel.cubin``, when it is whole,
    every file it records is one a build may read now (``allowed``, asked before any is read)
    and unchanged (and its manifest touched); else None."""
    doc = _manifest(cache, key)
    if doc is None or not _all_allowed(doc["files"], allowed):
        return None
    if _hashes(doc["files"]) != doc["hashes"]:
        return None
    cubin = _read(cache.folder / f"{key}.cubin", toolchain.MAX_CUBIN_BYTES)
    if cubin is None or _sha(cubin) != doc["cubin"]:
        return None
    sass = ""
    if doc["sass"] is not None:
        raw = _read(cache.folder / f"{key}.sass", toolchain.OUTPUT_LIMIT)
        if raw is None or _sha(raw) != doc["sass"]:
            return None
        sass = raw.decode("utf-8", errors="surrogateescape")
    into.mkdir(parents=True, exist_ok=True)
    out = into / "kernel.cubin"
    write_bytes(out, cubin)
    with contextlib.suppress(OSError):  # else only its place in the eviction order is old
        os.utime(cache.folder / f"{key}.json", follow_symlinks=False)
    found = (out, doc["arch"], doc["note"], tuple(doc["files"]), sass)
    return Cached(*found, tuple(doc["warnings"]))


def store(
    cache: BuildCache,
    key: str,
    built: Cached,
    started_ns: int,
) -> bool:
    """Keep ``built`` under ``key`` (then evict to the bounds); False, and nothing kept,
    when a recorded file changed since ``started_ns`` (the compile's start), the files pass
    the bounds, or the folder cannot be written."""
    for name in built.files:
        try:
            st = os.stat(name)
        except OSError:
            return False
        if max(st.st_mtime_ns, st.st_ctime_ns) >= started_ns:
            return False  # changed while the compile ran: what it read is not known
    hashes = _hashes(built.files)
    cubin = _read(built.cubin, toolchain.MAX_CUBIN_BYTES)
    if hashes is None or cubin is None:
        return False
    sass = built.sass.encode("utf-8", errors="surrogateescape") if built.sass else None
    doc = {
        "format": FORMAT,
        "key": key,
        "arch": built.arch,
        "note": built.note,
        "files": list(built.files),
        "hashes": hashes,
        "cubin": _sha(cubin),
        "sass": None if sass is None else _sha(sass),
        "warnings": list(built.warnings),
    }
    manifest = json.dumps(doc, ensure_ascii=True).encode()
    if len(manifest) > MAX_MANIFEST_BYTES:
        return False
    try:
        _make(cache.folder)
        _write(cache.folder, f"{key}.cubin", cubin)
        if sass is not None:
            _write(cache.folder, f"{key}.sass", sass)
        _write(cache.folder, f"{key}.json", manifest)  # last: the entry is whole once it is
    except OSError:
        return False
    evict(cache)
    return True


def _make(folder: Path) -> None:
    """The cache folder made, its parent only where it exists (made when the first entry is
    kept, never before: a run that keeps nothing writes nothing); an OSError when something
    other than a folder (a link included) is there."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder)
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        raise NotADirectoryError(f"{folder} is not a folder")


def _write(folder: Path, name: str, data: bytes) -> None:
    """``data`` to ``folder/name`` through a temporary file in ``folder`` renamed into place
    (a link at that name is replaced, never followed)."""
    fd, tmp = tempfile.mkstemp(prefix=_TEMP, dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, folder / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _listed(folder: Path) -> Iterator[os.DirEntry[str]]:
    """The folder's names, at most :data:`MAX_LISTED` of them."""
    with os.scandir(folder) as it:
        for n, entry in enumerate(it):
            if n >= MAX_LISTED:
                return
            yield entry


def evict(cache: BuildCache) -> None:
    """Remove the least recently used entries past the bounds, and temporary files a dead
    process left; names that are not the cache's are never touched."""
    groups: dict[str, list[tuple[Path, os.stat_result]]] = {}
    now = time.time()
    try:
        for entry in _listed(cache.folder):
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name.startswith(_TEMP):
                if now - st.st_mtime > STALE_TEMP_S:
                    _remove(Path(entry.path))
                continue
            m = _ENTRY.match(entry.name)
            if m:
                groups.setdefault(m.group(1), []).append((Path(entry.path), st))
    except OSError:
        return

    def recency(key: str) -> int:
        kept = groups[key]
        manifest = [st for p, st in kept if p.suffix == ".json"]
        return max(st.st_mtime_ns for st in (manifest or [st for _, st in kept]))

    count, size = 0, 0
    for key in sorted(groups, key=recency, reverse=True):
        bytes_ = sum(st.st_size for _, st in groups[key])
        if count < cache.max_entries and size + bytes_ <= cache.max_bytes:
            count, size = count + 1, size + bytes_
            continue
        for path, _ in groups[key]:
            _remove(path)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
