"""Which Triton cache entry a path names: an entry folder or one of its files, or a cache root
(``root/<hash>/<name>.json``, Triton's ``$TRITON_CACHE_DIR``) with ``--kernel``: a kernel's name
(or a prefix or part of one, as for a cubin's kernels), or the start of an entry folder's name,
its hash. A root is looked through within bounds (entries, names, metadata bytes), and an
entry folder or file that is a link to somewhere outside the root's source tree is never read.
"""

from __future__ import annotations

import os
import string
from collections.abc import Callable
from pathlib import Path

from ...plumbing.errors import ShmemError, shorten
from ..ncu.names import matching
from .cache import ENTRY_FILES, TritonEntry, linked_out, read_entry
from .metadata import TritonError, read_metadata

__all__ = ["entries_under", "kernel_names", "listed_entries", "open_entry"]

MAX_ENTRIES = 10_000  # cache folders looked at under a root
MAX_NAMES = 500_000  # names of files and folders read from a root and its folders
MAX_LISTED = 20  # entries or kernel names an error lists
#: the metadata read while looking through a cache root for a kernel's entries
MAX_SCAN_BYTES = 256 << 20


def entries_under(
    root: Path,
    name: str | None,
    refused: list[ShmemError] | None = None,
    allowed: Callable[[Path], bool] | None = None,
) -> tuple[list[TritonEntry], int, set[str]]:
    """The entries of a cache root (``root/<hash>/<name>.json``) or of one entry folder whose
    kernel is ``name`` (any name when None), their count and names: only the metadata of the
    others is read, and only the first :data:`MAX_LISTED` + 1 kept (each keeps its metadata:
    256 entries of 1 MiB of ``{},{},...`` held 5 GB). Why entries of that name could not be
    read goes to ``refused``."""
    kept: list[TritonEntry] = []
    count, names = 0, set[str]()
    for meta in _metadata_files(root, refused):
        try:
            if name is not None and str(read_metadata(meta)["name"]) != name:
                continue
            entry = read_entry(meta, allowed)
        except ShmemError as exc:
            if refused is not None:
                refused.append(exc)  # an entry this trace cannot use: say why if none can
            continue
        count += 1
        names.add(entry.name)
        if len(kept) <= MAX_LISTED:
            kept.append(entry)
    return kept, count, names


def kernel_names(root: Path) -> list[str]:
    """The kernel names of a cache root's entries (for an error that lists them)."""
    names: set[str] = set()
    for meta in _metadata_files(root):
        try:
            names.add(str(read_metadata(meta)["name"]))
        except ShmemError:
            continue
    return sorted(names)


def _hash_folders(root: Path, start: str) -> list[Path]:
    """The entry folders of a cache root whose name (its hash, base32) starts with ``start``
    in either case, or whose compile's hash as Triton reports it starts with it (the
    metadata's ``"hash"``, hex: ``CompiledKernel.hash``, ``kernel.metadata.hash``)."""
    hexadecimal = len(start) >= 4 and all(c in string.hexdigits for c in start)
    hits = set()
    for meta in _metadata_files(root):
        if meta.parent.name.upper().startswith(start.upper()):
            hits.add(meta.parent)
        elif hexadecimal:
            try:
                said = str(read_metadata(meta).get("hash", ""))
            except ShmemError:
                continue
            if said.lower().startswith(start.lower()):
                hits.add(meta.parent)
    return sorted(hits - {root})


def _hash_ambiguous(
    root: Path, start: str, folders: list[Path], allowed: Callable[[Path], bool] | None
) -> TritonError:
    """``--kernel START`` the start of several entry folders' names: each entry listed (its
    folder, so its hash, its kernel's name and the Triton version that compiled it)."""
    lines = []
    for folder in folders[:MAX_LISTED]:
        kept, _, _ = entries_under(folder, None, None, allowed)
        said = [e.describe() for e in kept] or [f"{shorten(str(folder), 200)}  (unreadable)"]
        lines += ["  " + line for line in said]
    if len(folders) > MAX_LISTED:
        lines.append(f"  ... and {len(folders) - MAX_LISTED:,} more")
    return TritonError(
        f"--kernel {shorten(start)!r} is the start of {len(folders):,} entry folders' names "
        "(their hashes): give more of the hash, or trace the entry's folder:\n" + "\n".join(lines),
        root,
    )


def listed_entries(
    path: Path, kernel: str | None, allowed: Callable[[Path], bool] | None = None
) -> list[TritonEntry] | None:
    """For ``--list-params``: the entries of a cache root (of the kernel ``kernel`` names, as
    :func:`open_entry` reads it), where it holds several, at most :data:`MAX_LISTED`; None
    where ``path`` names one entry, none or more than that (:func:`open_entry` then gives the
    one, or says why not, or which to choose)."""
    if not os.path.isdir(path):
        return None
    found, count, _ = entries_under(path, kernel, None, allowed)
    if count == 0 and kernel is not None:
        chosen = matching(kernel, kernel_names(path), lambda n: (n,))
        if len(chosen) == 1:  # a prefix or part of one name
            found, count, _ = entries_under(path, chosen[0], None, allowed)
    return found if 1 < count <= MAX_LISTED else None


def _metadata_files(root: Path, refused: list[ShmemError] | None = None) -> list[Path]:
    """The metadata files of a cache root's entries (at most :data:`MAX_ENTRIES`, and
    :data:`MAX_SCAN_BYTES` of them in all: each may be read), each inside the root's source
    tree, links followed: an entry folder or file that is a link to elsewhere is never read
    (why is added to ``refused``)."""
    from ...cuda.sources import tree_for

    metas = _json_files(root)
    out, total = [], 0
    tree = None
    for m in metas:
        if m.name.startswith("__grp__") or not os.path.exists(m.with_suffix(".cubin")):
            continue
        if os.path.islink(m) or (m.parent != root and os.path.islink(m.parent)):
            tree = tree or tree_for(root)
            if not tree.inside(m):
                if refused is not None:
                    link = m if os.path.islink(m) else m.parent
                    refused.append(linked_out(link, tree))
                continue
        try:
            total += m.stat().st_size
        except OSError:
            continue
        if total > MAX_SCAN_BYTES:
            raise TritonError(
                f"the cache root holds more than {MAX_SCAN_BYTES >> 20} MiB of metadata to look "
                "through: name the entry's folder instead",
                root,
            )
        out.append(m)
    return out


def _json_files(root: Path) -> list[Path]:
    """``root/*.json``, then ``root/*/*.json``, each sorted, up to :data:`MAX_ENTRIES` of them:
    the folders are looked into in order until that many are found, and at most
    :data:`MAX_NAMES` names are read in all (a root of 200,000 empty folders took 3.4 s to
    glob, each folder listed; one of millions, minutes and gigabytes of names)."""
    seen = [0]

    def names(folder: Path) -> list[os.DirEntry[str]]:
        out = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen[0] += 1
                    if seen[0] > MAX_NAMES:
                        raise TritonError(
                            f"the cache root holds more than {MAX_NAMES:,} files and folders to "
                            "look through: name the entry's folder instead",
                            root,
                        )
                    out.append(entry)
        except OSError:
            return []
        return out

    top = sorted(names(root), key=lambda e: e.name)
    found = [Path(e.path) for e in top if e.name.endswith(".json")]
    for entry in top:
        if len(found) >= MAX_ENTRIES:
            break
        if not os.path.isdir(entry.path):  # (links followed, as a glob follows them)
            continue
        found += sorted(Path(e.path) for e in names(Path(entry.path)) if e.name.endswith(".json"))
    return found[:MAX_ENTRIES]


def _listed(names: list[str]) -> str:
    """The first :data:`MAX_LISTED` names (each cut short), and how many more there are."""
    said = ", ".join(shorten(n) for n in names[:MAX_LISTED])
    return said + (f" and {len(names) - MAX_LISTED:,} more" if len(names) > MAX_LISTED else "")


def open_entry(
    path: Path, kernel: str | None, allowed: Callable[[Path], bool] | None = None
) -> TritonEntry:
    """The entry ``path`` (folder, one of its files, or a cache root with ``kernel``) names;
    ``allowed``: the Python files its TTGIR may name (default: the entry's source tree)."""
    if path.suffix in ENTRY_FILES and path.suffix != ".json" and not os.path.isdir(path):
        return read_entry(path.with_suffix(".json"), allowed)
    if path.suffix == ".json" and not os.path.isdir(path):
        # Triton's group file __grp__<name>.json lists the entry's files: the metadata is beside
        grouped = path.with_name(path.name.removeprefix("__grp__"))
        return read_entry(grouped if path.name.startswith("__grp__") else path, allowed)
    refused: list[ShmemError] = []
    found, count, names_found = entries_under(path, kernel, refused, allowed)
    if count == 1:
        return found[0]
    names = kernel_names(path) if not found and kernel is not None else []
    chosen = matching(kernel, names, lambda n: (n,)) if kernel and kernel not in names else []
    if len(chosen) == 1:  # --kernel's rule for a cubin's kernels: a prefix, a part
        return open_entry(path, chosen[0], allowed)
    folders = _hash_folders(path, kernel) if not found and kernel and not chosen else []
    if len(folders) == 1:
        return open_entry(folders[0], None, allowed)  # the start of a hash the listing shows
    if folders:
        raise _hash_ambiguous(path, str(kernel), folders, allowed)
    if not found and refused:
        raise refused[0]  # the real reason, as the entry's own .json or .cubin gives it
    if not found and kernel is not None and names:
        said = f"no Triton cache entry of a kernel named {shorten(kernel)!r}; there are: "
        if chosen:
            said = f"--kernel {shorten(kernel)!r} is ambiguous; it matches: "
        raise TritonError(said + _listed(chosen or names), path)
    if not found:
        for meta in _json_files(path):  # an entry but for its cubin: read_entry says so
            cubin, ttgir = meta.with_suffix(".cubin"), meta.with_suffix(".ttgir")
            if not os.path.exists(cubin) and os.path.exists(ttgir):
                read_entry(meta, allowed)
        raise TritonError(
            "a folder, and no Triton cache entry is in it (a folder with <name>.json, "
            "<name>.cubin and <name>.ttgir, or a cache root holding such folders); name a "
            "kernel file (.cu, .cubin, executable) or a Triton cache entry",
            path,
        )
    listing = "\n".join("  " + e.describe() for e in found[:MAX_LISTED])
    if count > MAX_LISTED:
        listing += f"\n  ... and {count - MAX_LISTED:,} more"
    what = f"{count} entries of {shorten(kernel)!r}" if kernel else f"{count} entries"
    hint = "--kernel NAME" if kernel is None and len(names_found) > 1 else "--kernel HASH"
    raise TritonError(f"{what}; choose one ({hint}):\n{listing}", path)
