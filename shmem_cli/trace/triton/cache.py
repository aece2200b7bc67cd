"""A Triton cache entry: what Triton decided about a kernel, read from the files beside its cubin.

Triton's cache (``$TRITON_CACHE_DIR``, default ``~/.triton/cache``) keeps one folder per
compiled kernel: ``<hash>/<name>.cubin``, ``<name>.json`` (the metadata), ``<name>.ttgir``
and ``<name>.ptx``. The launch Triton makes follows from them:

* block: ``num_warps * 32`` threads (``warp_size`` of the metadata's target), 1, 1;
* dynamic shared memory: the metadata's ``shared`` (the cubin declares no static shared);
* clusters: ``cluster_dims`` (Triton 3.0-3.5) or ``num_ctas`` x 1 x 1 (later): the CUDA grid is
  the program grid times the cluster dimensions, as Triton's launcher multiplies them;
* architecture: the metadata's ``target`` (``{"backend": "cuda", "arch": 90, ...}``, or
  ``["cuda", 90, 32]``, or an older ``capability``/``cc``);
* parameters: the TTGIR's ``tt.func public @name(%x: type loc("x"), ...)`` names and types
  the kernel's own (older Triton: ``%arg0``, named from the Python ``def`` the line table
  names, less its constexprs); Triton's own scratch pointers follow in the cubin:
  global (3.3 on) and profile scratch (3.5 on), null where the metadata's
  ``global_scratch_size`` / ``profile_scratch_size`` is 0, else that many bytes a program
  (times ``num_ctas``).

Later Triton keeps no constexpr values (2.x: ``constants``): entries of one name are told apart
by ``num_warps``, ``num_stages``, ``shared``, their TTGIR's tensor shapes, and their folders'
hashes (``--kernel HASH``: the start of one).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...plumbing.bounded_read import read_bounded
from ...plumbing.errors import ShmemError, shorten
from ...plumbing.frozen import frozen
from ..ncu.names import matching
from .callsites import Location, is_library, library_callers
from .metadata import TritonError, read_metadata
from .ttgir import (
    DESC_TYPE,
    TritonParam,
    def_file,
    desc_rank,
    named,
    python_names,
    short_type,
    tensor_shapes,
    ttgir_params,
    unnamed,
)

if TYPE_CHECKING:
    from ...cuda.sources import SourceTree

__all__ = [
    "DESC_TYPE",
    "ENTRY_FILES",
    "HIDDEN",
    "TritonEntry",
    "TritonError",
    "TritonParam",
    "desc_rank",
    "entries_under",
    "is_triton_input",
    "open_entry",
    "read_entry",
    "ttgir_params",
]

MAX_TTGIR_BYTES = 64 << 20
MAX_ENTRIES = 10_000  # cache folders looked at under a root
MAX_NAMES = 500_000  # names of files and folders read from a root and its folders
MAX_LISTED = 20  # entries or kernel names an error lists
#: the metadata read while looking through a cache root for a kernel's entries
MAX_SCAN_BYTES = 256 << 20
HIDDEN = ("global_scratch", "profile_scratch")  # Triton's own pointers, in the order it adds them
#: the files Triton writes into an entry, ``<name><suffix>``, beside its ``__grp__<name>.json``
ENTRY_FILES = (".json", ".cubin", ".ttgir", ".ttir", ".ptx", ".llir", ".source")


@frozen
class TritonEntry:
    """A Triton cache entry and the launch it implies."""

    folder: Path
    name: str
    cubin: Path
    metadata: dict[str, Any]
    params: tuple[TritonParam, ...]  # the kernel's own, from the TTGIR (hidden ones added later)
    shapes: tuple[str, ...]  # tensor shapes of the TTGIR: 1024, 64x64, ...
    #: a line of Triton's library -> the kernel's line that called it (:mod:`.callsites`)
    callers: Mapping[Location, tuple[Location, ...]] = field(default_factory=dict)
    #: an older entry's ``def`` parameters (less constexprs) where more than the TTGIR's: those
    #: 1 or None at the call were compiled in (:func:`.launch.named_by_call` says which)
    def_names: tuple[str, ...] = ()
    #: those the call said were compiled in (their ``--arg`` is not passed)
    compiled_in: tuple[str, ...] = ()
    #: an older entry's Python file, as its TTGIR names it, where its ``def`` was not read
    #: (outside the source tree, or not there): the error names it
    unread_def: str = ""

    @property
    def num_warps(self) -> int:
        return _int(self.metadata.get("num_warps", 4))

    @property
    def num_stages(self) -> int | None:
        v = self.metadata.get("num_stages")
        return _int(v) if v is not None else None

    @property
    def warp_size(self) -> int:
        target = self.metadata.get("target")
        size = self.metadata.get("warp_size")
        if size is None and isinstance(target, dict):
            size = target.get("warp_size")
        if size is None and isinstance(target, list) and len(target) >= 3:
            size = target[2]
        return _int(size) if size is not None else 32

    @property
    def block(self) -> tuple[int, int, int]:
        return (self.num_warps * self.warp_size, 1, 1)

    @property
    def shared(self) -> int:
        return _int(self.metadata.get("shared", 0))

    @property
    def cluster_dims(self) -> tuple[int, int, int]:
        dims = self.metadata.get("cluster_dims")
        if isinstance(dims, list) and len(dims) == 3:
            return (_int(dims[0]), _int(dims[1]), _int(dims[2]))
        return (_int(self.metadata.get("num_ctas", 1)), 1, 1)

    @property
    def arch(self) -> str | None:
        """``sm_90`` from the metadata's target, None when it names none."""
        target = self.metadata.get("target")
        value: Any = None
        if isinstance(target, dict):
            value = target.get("arch")
        elif isinstance(target, list) and len(target) >= 2:
            value = target[1]
        elif isinstance(target, int):
            value = target
        for key in ("capability", "cc"):
            if value is None:
                value = self.metadata.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 10 <= value < 1000:
            return f"sm_{value}"
        if isinstance(value, str) and re.fullmatch(r"(sm_?)?\d{2,3}[a-z]?", value):
            return "sm_" + value.removeprefix("sm").removeprefix("_")
        return None

    @property
    def constexprs(self) -> dict[str, Any] | None:
        """Constexpr values where the metadata records them (Triton 2.x), else None."""
        consts = self.metadata.get("constants")
        return dict(consts) if isinstance(consts, dict) else None

    @property
    def triton_version(self) -> str | None:
        v = self.metadata.get("triton_version")
        return str(v) if v is not None else None

    def scratch_bytes(self, which: str) -> int:
        """Bytes per program of Triton's global or profile scratch (0: a null pointer)."""
        return _int(self.metadata.get(f"{which}_size", 0))

    def describe(self) -> str:
        """One line telling this entry from others of the same name."""
        parts = [f"num_warps={self.num_warps}"]
        if self.num_stages is not None:
            parts.append(f"num_stages={self.num_stages}")
        parts.append(f"shared={self.shared}")
        if self.constexprs is not None:
            said = ", ".join(f"{k}={v}" for k, v in self.constexprs.items())
            parts.append("constexprs: " + shorten(said, 200))
        elif self.shapes:
            parts.append("tensor shapes " + ", ".join(self.shapes[:6]))
        said = ", ".join(short_type(p.ir_type) for p in self.params)
        parts.append("signature (" + shorten(said, 200) + ")")
        if self.triton_version is not None:  # a cache kept across upgrades holds several
            parts.append(f"Triton {shorten(self.triton_version, 40)}")
        return f"{shorten(str(self.folder), 200)}  {shorten(self.name)}  " + ", ".join(parts)


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"not an integer: {value!r}")
    return value


def is_triton_input(path: Path) -> bool:
    """Whether ``path`` is a Triton cache entry (its folder, its .json, or any other of its
    files with the metadata, cubin and TTGIR beside it) or a cache root."""
    if os.path.isdir(path) or path.suffix == ".json":
        return True
    if path.suffix in ENTRY_FILES:
        return all(os.path.isfile(path.with_suffix(s)) for s in (".json", ".cubin", ".ttgir"))
    return False


def _read(path: Path, limit: int, what: str) -> str:
    data = read_bounded(path, limit, what=what, code="invalid-kernel", text=True)
    return data.decode("utf-8", errors="replace")


def _linked_out(path: Path, tree: SourceTree) -> TritonError:
    """The refusal of an entry's file, or an entry folder of a cache root, that is a link to
    somewhere outside the source tree."""
    if os.path.isdir(path):
        what, fix = "a folder outside the cache root's source tree", "the entry into the root"
    else:
        what, fix = "a file outside the entry's source tree", "the file into the entry"
    return TritonError(
        f"{shorten(path.name)} is a link to {what} ({shorten(tree.describe(), 200)}); copy {fix}",
        path,
    )


def _own_files(folder: Path, files: tuple[Path, ...]) -> None:
    """Refuse an entry file that is a link to a file outside the entry's source tree (its
    repository, or its folder): a committed cache must not make shmem read, and print the
    parameters of, a file elsewhere on the machine."""
    from ...cuda.sources import tree_for

    tree = None
    for path in files:
        if os.path.islink(path):
            tree = tree or tree_for(folder)
            if not tree.inside(path):
                raise _linked_out(path, tree)


def read_entry(meta_path: Path, allowed: Callable[[Path], bool] | None = None) -> TritonEntry:
    """The entry whose metadata is ``meta_path`` (``<folder>/<name>.json``); ``allowed`` says
    which Python file a TTGIR location may name (default: the entry's source tree)."""
    folder = meta_path.parent
    cubin = folder / f"{meta_path.stem}.cubin"
    ttgir = folder / f"{meta_path.stem}.ttgir"
    _own_files(folder, (meta_path, cubin, ttgir))
    meta = read_metadata(meta_path)
    name = str(meta["name"])
    for path in (cubin, ttgir):
        if os.path.exists(path) and not os.path.isfile(path):
            raise TritonError(
                f"the entry's {path.name} is not a regular file (a folder, a FIFO or a device); "
                "Triton writes plain files: point at a real cache entry",
                meta_path,
            )
    if not os.path.isfile(cubin):
        raise TritonError(
            f"the entry has no {cubin.name} beside its metadata (Triton writes the kernel's "
            "cubin there): copy the whole entry folder",
            meta_path,
        )
    if not os.path.isfile(ttgir):
        raise TritonError(
            f"the entry has no {ttgir.name}: it names the kernel's parameters (Triton keeps it "
            "unless TRITON_STORE_BINARY_ONLY=1; trace the .cubin alone with --block and --arg "
            "by position instead)",
            meta_path,
        )
    text = _read(ttgir, MAX_TTGIR_BYTES, "TTGIR")
    params = ttgir_params(text, name, ttgir)
    names: tuple[str, ...] | None = None
    if unnamed(p.name for p in params):
        if allowed is None:
            from ...cuda.sources import tree_for

            allowed = tree_for(meta_path).inside
        names = python_names(text, name, folder, allowed)
    by_def = named(names, params) if names is not None else None
    more = names if names is not None and by_def is None else ()  # some compiled in: the call says
    params = by_def or params
    callers = library_callers(text, is_library)
    unread = (def_file(text) or "") if names is None and unnamed(p.name for p in params) else ""
    shapes = tensor_shapes(text)
    return TritonEntry(folder, name, cubin, meta, params, shapes, callers, more, (), unread)


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


def _entry_folder(root: Path, start: str) -> Path | None:
    """The one entry folder of a cache root whose name (its hash) starts with ``start``."""
    hits = {m.parent for m in _metadata_files(root) if m.parent.name.startswith(start)}
    return hits.pop() if len(hits) == 1 and root not in hits else None


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
                    refused.append(_linked_out(link, tree))
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
    if not found and kernel and not chosen and (folder := _entry_folder(path, kernel)):
        return open_entry(folder, None, allowed)  # the start of a hash the listing shows
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
