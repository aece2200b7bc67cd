"""A Triton cache entry: what Triton decided about a kernel, read from the files beside its cubin.

Triton's cache (``$TRITON_CACHE_DIR``, default ``~/.triton/cache``) keeps one folder per
compiled kernel: ``<hash>/<name>.cubin``, ``<name>.json`` (the metadata), ``<name>.ttgir``
and ``<name>.ptx``. The launch Triton makes follows from them:

* block: ``num_warps * 32`` threads (``warp_size`` of the metadata's target), 1, 1;
* dynamic shared memory: the metadata's ``shared`` (a Triton kernel has no static shared
  memory of its own);
* clusters: ``cluster_dims`` (Triton 3.0-3.3) or ``num_ctas`` x 1 x 1 (later): the CUDA grid is
  the program grid times the cluster dimensions, as Triton's launcher multiplies them;
* architecture: the metadata's ``target`` (``{"backend": "cuda", "arch": 90, ...}``, or
  ``["cuda", 90, 32]``, or an older ``capability``/``cc``);
* parameters: the TTGIR's ``tt.func public @name(%x: type loc("x"), ...)`` gives each of the
  kernel's own parameters its name and type (older Triton writes ``%arg0``; then the names
  come from the Python ``def`` the line table names, its ``tl.constexpr`` parameters left
  out). The cubin has more parameters than the TTGIR: Triton's own scratch pointers, appended
  at the end: the global scratch (Triton 3.2 on) and the profile scratch (3.4 on). Triton
  passes a null pointer when the metadata's ``global_scratch_size`` / ``profile_scratch_size``
  is 0, and otherwise a buffer of that many bytes per program (times ``num_ctas``).

Constexpr values are recorded by Triton 2.x (``constants``); later versions keep none, so an
entry is told from another of the same name by ``num_warps``, ``num_stages``, ``shared`` and
the tensor shapes of its TTGIR (which the constexprs decide).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...plumbing.bounded_read import read_bounded
from ...plumbing.errors import ShmemError

MAX_METADATA_BYTES = 1 << 20
MAX_TTGIR_BYTES = 64 << 20
MAX_PYTHON_BYTES = 4 << 20
MAX_ENTRIES = 10_000  # cache folders looked at under a root
HIDDEN = ("global_scratch", "profile_scratch")  # Triton's own pointers, in the order it adds them

_FUNC = re.compile(r"tt\.func\s+(?:public\s+)?@([\w$.]+)\s*\(")
_ARG = re.compile(r"%([\w$.]+)\s*:\s*")
_LOC_NAME = re.compile(r'loc\(\s*"([^"]+)"\s*\(')
_FIRST_LOC = re.compile(r'^#loc\s*=\s*loc\("([^"]+)":(\d+):\d+\)', re.M)
_SHAPE = re.compile(r"tensor<((?:\d+x)+)[^>]*>")
# a host-side tensor descriptor (TensorDescriptor), lowered to TMA: a CUtensorMap by value
_DESC = re.compile(r"!tt\.tensordesc<\s*tensor<((?:\d+x)+)\w+[^>]*>\s*>")
DESC_TYPE = "CUtensorMap"
# TTGIR scalar types -> (C type, bytes)
_SCALARS = {
    "i1": ("bool", 1),
    "i8": ("int8_t", 1),
    "i16": ("int16_t", 2),
    "i32": ("int32_t", 4),
    "i64": ("int64_t", 8),
    "f16": ("half", 2),
    "bf16": ("bfloat16", 2),
    "f32": ("float", 4),
    "f64": ("double", 8),
}


class TritonError(ShmemError):
    """A Triton cache entry that cannot be read or does not fit its cubin."""

    def __init__(self, message: str, path: str | Path) -> None:
        super().__init__(message, path=str(path), code="invalid-kernel")


@dataclass(frozen=True)
class TritonParam:
    """One parameter of the kernel as Triton compiled it."""

    name: str
    ir_type: str  # as the TTGIR writes it: !tt.ptr<f16>, i32, f32
    c_type: str  # float16*, int32_t, float
    hidden: bool = False  # one of Triton's scratch pointers

    @property
    def is_pointer(self) -> bool:
        return self.c_type.endswith("*")

    @property
    def is_desc(self) -> bool:
        """A host-side tensor descriptor, passed as a 128-byte CUtensorMap."""
        return self.c_type == DESC_TYPE

    @property
    def is_float(self) -> bool:
        return self.c_type in ("half", "bfloat16", "float", "double")


@dataclass(frozen=True)
class TritonEntry:
    """A Triton cache entry and the launch it implies."""

    folder: Path
    name: str
    cubin: Path
    metadata: dict[str, Any]
    params: tuple[TritonParam, ...]  # the kernel's own, from the TTGIR (hidden ones added later)
    shapes: tuple[str, ...]  # tensor shapes of the TTGIR: 1024, 64x64, ...

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
        if isinstance(value, int):
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
            parts.append("constexprs: " + ", ".join(f"{k}={v}" for k, v in self.constexprs.items()))
        elif self.shapes:
            parts.append("tensor shapes " + ", ".join(self.shapes[:6]))
        parts.append("signature (" + ", ".join(_short_type(p.ir_type) for p in self.params) + ")")
        return f"{self.folder}  {self.name}  " + ", ".join(parts)


def _short_type(ir_type: str) -> str:
    """``*f16`` for ``!tt.ptr<f16>``, as Triton's signatures write it; scalars as they are."""
    pointer = re.fullmatch(r"!tt\.ptr<\s*(\w+)[^>]*>", ir_type)
    return "*" + pointer.group(1) if pointer else ir_type


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"not an integer: {value!r}")
    return value


def is_triton_input(path: Path) -> bool:
    """Whether ``path`` is a Triton cache entry (folder, .json or .cubin) or a cache root."""
    if path.is_dir():
        return True
    if path.suffix == ".json":
        return True
    if path.suffix == ".cubin":
        return path.with_suffix(".json").is_file() and path.with_suffix(".ttgir").is_file()
    return False


def _read(path: Path, limit: int, what: str) -> str:
    data = read_bounded(path, limit, what=what, code="invalid-kernel")
    return data.decode("utf-8", errors="replace")


def _metadata(path: Path) -> dict[str, Any]:
    text = _read(path, MAX_METADATA_BYTES, "Triton metadata")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise TritonError(f"not Triton metadata (not JSON: {exc})", path) from None
    if not isinstance(data, dict) or "name" not in data or "num_warps" not in data:
        raise TritonError(
            "not Triton metadata: a Triton cache entry's <name>.json has 'name' and 'num_warps'",
            path,
        )
    return data


def read_entry(meta_path: Path) -> TritonEntry:
    """The entry whose metadata is ``meta_path`` (``<folder>/<name>.json``)."""
    meta = _metadata(meta_path)
    name = str(meta["name"])
    folder = meta_path.parent
    cubin = folder / f"{meta_path.stem}.cubin"
    ttgir = folder / f"{meta_path.stem}.ttgir"
    if not cubin.is_file():
        raise TritonError(f"the entry has no {cubin.name} beside its metadata", meta_path)
    try:
        for key in ("num_warps", "shared", "num_ctas", "num_stages"):
            if key in meta and meta[key] is not None:
                _int(meta[key])
    except ValueError as exc:
        raise TritonError(f"unexpected metadata: {exc}", meta_path) from None
    if not ttgir.is_file():
        raise TritonError(
            f"the entry has no {ttgir.name}: it names the kernel's parameters (Triton keeps it "
            "unless TRITON_STORE_BINARY_ONLY=1; trace the .cubin alone with --block and --arg "
            "by position instead)",
            meta_path,
        )
    text = _read(ttgir, MAX_TTGIR_BYTES, "TTGIR")
    params = ttgir_params(text, name, ttgir)
    if any(p.name.startswith("arg") and p.name[3:].isdigit() for p in params):
        params = _names_from_python(text, params, name, folder) or params
    shapes = tuple(dict.fromkeys(m.group(1)[:-1] for m in _SHAPE.finditer(text)))
    return TritonEntry(folder, name, cubin, meta, params, shapes)


def ttgir_params(text: str, name: str, where: Path) -> tuple[TritonParam, ...]:
    """The parameters of ``tt.func public @name(...)`` in TTGIR text."""
    for m in _FUNC.finditer(text):
        if m.group(1) != name:
            continue
        inner = _balanced(text, m.end() - 1)
        if inner is None:
            break
        return _desc_parts(tuple(_param(piece, where) for piece in _split_args(inner)))
    raise TritonError(f"the TTGIR has no function @{name}", where)


def desc_rank(param: TritonParam) -> int:
    """The rank of a tensor descriptor parameter (its block's dimensions)."""
    m = _DESC.fullmatch(param.ir_type)
    return m.group(1).count("x") if m else 0


def _desc_parts(params: tuple[TritonParam, ...]) -> tuple[TritonParam, ...]:
    """Names for the scalars Triton passes after each descriptor (its shape as i32 and its
    strides as i64, all named after the descriptor in the TTGIR): ``a_desc.shape0``, ..."""
    out = list(params)
    for i, p in enumerate(params):
        rank = desc_rank(p)
        if not rank:
            continue
        parts = [f"shape{k}" for k in range(rank)] + [f"stride{k}" for k in range(rank)]
        for k, part in enumerate(parts):
            j = i + 1 + k
            if j < len(out) and out[j].name == p.name:
                out[j] = TritonParam(f"{p.name}.{part}", out[j].ir_type, out[j].c_type)
    return tuple(out)


def _balanced(text: str, open_paren: int) -> str | None:
    depth = 0
    quoted = False
    for k in range(open_paren, len(text)):
        ch = text[k]
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[open_paren + 1 : k]
    return None


def _split_args(inner: str) -> list[str]:
    """``inner`` split at the commas that start a new ``%name:`` argument."""
    starts = [m.start() for m in _ARG.finditer(inner)]
    return [
        inner[a:b].strip().rstrip(",")
        for a, b in zip(starts, [*starts[1:], len(inner)], strict=True)
    ]


def _param(piece: str, where: Path) -> TritonParam:
    m = _ARG.match(piece)
    if m is None:
        raise TritonError(f"cannot read the TTGIR parameter {piece[:60]!r}", where)
    rest = piece[m.end() :]
    ir_type = re.split(r"\s+(?=[{]|loc\()", rest, maxsplit=1)[0].strip()
    loc = _LOC_NAME.search(rest)
    name = loc.group(1) if loc else m.group(1)
    pointer = re.fullmatch(r"!tt\.ptr<\s*([\w]+)\s*(?:,\s*\d+)?\s*>", ir_type)
    if _DESC.fullmatch(ir_type):
        c_type = DESC_TYPE
    elif pointer:
        element = _SCALARS.get(pointer.group(1), (pointer.group(1), 0))[0]
        c_type = {"half": "float16", "bfloat16": "bfloat16"}.get(element, element) + "*"
    elif ir_type in _SCALARS:
        c_type = _SCALARS[ir_type][0]
    else:
        raise TritonError(
            f"parameter {name} has the type {ir_type}, which shmem cannot pass yet (tuples, "
            "descriptors of other forms than !tt.tensordesc<tensor<...>>)",
            where,
        )
    return TritonParam(name, ir_type, c_type)


def _names_from_python(
    ttgir: str, params: tuple[TritonParam, ...], name: str, folder: Path
) -> tuple[TritonParam, ...] | None:
    """Names from the Python ``def`` the TTGIR's first location names (older Triton), when its
    parameters less the ``tl.constexpr`` ones are as many as the TTGIR's. The file is looked
    for where it was compiled, then by its trailing path parts under the current folder."""
    from ..tracer import locate_source

    first = _FIRST_LOC.search(ttgir)
    if first is None:
        return None
    found = locate_source(first.group(1), [Path.cwd(), folder])
    if found is None:
        return None
    try:
        source = read_bounded(found, MAX_PYTHON_BYTES, what="Python source")
        tree = ast.parse(source.decode("utf-8", errors="replace"))
    except (ShmemError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            names = [
                a.arg
                for a in node.args.args
                if not (a.annotation is not None and "constexpr" in ast.unparse(a.annotation))
            ]
            if len(names) == len(params):
                return tuple(
                    TritonParam(n, p.ir_type, p.c_type) for n, p in zip(names, params, strict=True)
                )
    return None


def entries_under(
    root: Path, name: str | None, refused: list[ShmemError] | None = None
) -> list[TritonEntry]:
    """Every entry of a cache root (``root/<hash>/<name>.json``) or of one entry folder whose
    kernel is ``name`` (any name when None). Only the metadata of the others is read; the
    reasons entries of that name could not be read are added to ``refused``."""
    found: list[TritonEntry] = []
    for meta in _metadata_files(root):
        try:
            if name is not None and str(_metadata(meta)["name"]) != name:
                continue
            found.append(read_entry(meta))
        except ShmemError as exc:
            if refused is not None:
                refused.append(exc)  # an entry this trace cannot use: say why if none can
    return found


def kernel_names(root: Path) -> list[str]:
    """The kernel names of a cache root's entries (for an error that lists them)."""
    names: set[str] = set()
    for meta in _metadata_files(root):
        try:
            names.add(str(_metadata(meta)["name"]))
        except ShmemError:
            continue
    return sorted(names)


def _metadata_files(root: Path) -> list[Path]:
    metas = sorted(root.glob("*.json")) + sorted(root.glob("*/*.json"))
    return [
        m
        for m in metas[:MAX_ENTRIES]
        if not m.name.startswith("__grp__") and m.with_suffix(".cubin").is_file()
    ]


def open_entry(path: Path, kernel: str | None) -> TritonEntry:
    """The entry ``path`` (folder, .json, .cubin, or a cache root with ``kernel``) names."""
    if path.suffix == ".cubin":
        return read_entry(path.with_suffix(".json"))
    if path.suffix == ".json":
        # Triton's group file __grp__<name>.json lists the entry's files: the metadata is beside
        grouped = path.with_name(path.name.removeprefix("__grp__"))
        return read_entry(grouped if path.name.startswith("__grp__") else path)
    refused: list[ShmemError] = []
    found = entries_under(path, kernel, refused)
    if len(found) == 1:
        return found[0]
    if not found and refused:
        raise refused[0]  # the real reason, as the entry's own .json or .cubin gives it
    if not found:
        names = kernel_names(path)
        if kernel is not None and names:
            raise TritonError(
                f"no Triton cache entry of a kernel named {kernel!r}; there are: "
                + ", ".join(names),
                path,
            )
        raise TritonError(
            "no Triton cache entry here (a folder with <name>.json, <name>.cubin and "
            "<name>.ttgir, or a cache root holding such folders)",
            path,
        )
    listing = "\n".join("  " + e.describe() for e in found)
    what = f"{len(found)} entries of {kernel!r}" if kernel else f"{len(found)} entries"
    hint = "--kernel NAME" if kernel is None and len({e.name for e in found}) > 1 else "its folder"
    raise TritonError(f"{what}; choose one ({hint}):\n{listing}", path)
