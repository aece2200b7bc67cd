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
hashes (``--kernel HASH``: the start of one); :mod:`.roots` says which entry a path names.
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
from .callsites import Location, is_library, read_callsites
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
    "copied_out",
    "is_triton_input",
    "linked_out",
    "read_entry",
    "ttgir_params",
]

MAX_TTGIR_BYTES = 64 << 20
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
    #: why: "outside" the source tree, "gone" (not there, nor found by its trailing path
    #: parts), or "no def" (found and read, without that ``def``)
    unread_why: str = ""
    #: a line of the user's ``@triton.jit`` helper -> the kernel's lines that call it, one a
    #: call in program order, where two or more do (:func:`.callsites.calls` names them)
    helper_calls: Mapping[Location, tuple[Location, ...]] = field(default_factory=dict)

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


def copied_out(cubin: Path) -> str | None:
    """What to give for a cubin Triton built (its line table names a ``.py`` file: the
    Python source of its ``@triton.jit`` function; no compiler of CUDA C writes one) that
    is traced without its entry's metadata and TTGIR beside it; None for any other file.
    Without line information (``TRITON_DISABLE_LINE_INFO=1``) such a cubin is not known (its
    ``.reqntid`` still gives its block). ``shmem trace`` and :func:`shmem_cli.trace.api.trace`
    say it where a launch gives neither its block nor its dynamic shared memory."""
    from ..kernel.cubin import entry_names
    from ..kernel.line_table import source_files

    if cubin.suffix.lower() in (".cu", ".cuh") or not os.path.isfile(cubin):
        return None
    python = [f for f in source_files(cubin) if f.endswith(".py")]
    if not python:
        return None
    try:
        names = entry_names(cubin)
    except ShmemError:
        names = []
    name = names[0] if len(names) == 1 else cubin.stem
    missing = [
        f"{name}{s}" for s in (".json", ".ttgir") if not os.path.isfile(cubin.parent / f"{name}{s}")
    ]
    absent = " and ".join(missing) + (" is" if len(missing) == 1 else " are")
    return (
        f"this cubin is from a Triton cache entry (its line table names "
        f"{shorten(Path(python[0]).name)}); Triton's launcher takes its launch from the "
        f"entry's files, and {absent} not beside it. Trace the entry folder, which holds "
        f"{name}.json (num_warps, shared memory, target), {name}.cubin and {name}.ttgir "
        "(the parameters' names) side by side; or trace the cubin alone with --dynamic-smem "
        'with the .json\'s "shared" and --arg by position (its block, num_warps x 32, is the '
        "cubin's own .reqntid)"
    )


def _read(path: Path, limit: int, what: str) -> str:
    data = read_bounded(path, limit, what=what, code="invalid-kernel", text=True)
    return data.decode("utf-8", errors="replace")


def linked_out(path: Path, tree: SourceTree) -> TritonError:
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
                raise linked_out(path, tree)


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
    callers, helpers = read_callsites(text, is_library)
    untold = names is None and unnamed(p.name for p in params)
    unread, why = _unread(text, folder, allowed) if untold else ("", "")
    shapes = tensor_shapes(text)
    return TritonEntry(
        folder, name, cubin, meta, params, shapes, callers, more, (), unread, why, helpers
    )


def _unread(text: str, folder: Path, allowed: Callable[[Path], bool] | None) -> tuple[str, str]:
    """The Python file an older TTGIR names whose ``def`` gave no names, and why
    (:attr:`TritonEntry.unread_why`, :func:`~shmem_cli.cuda.named_sources.unread_source`'s
    rule, a cubin's too)."""
    from ...cuda.named_sources import unread_source

    said = def_file(text) or ""
    if not said:
        return "", ""
    return unread_source(said, [Path.cwd(), folder], allowed or (lambda _: True), (".py",))
