"""A Triton cache entry's metadata (``<name>.json``), read bounded and checked like the
command line: every field a launch takes from it has its type and range checked before it is
used, so that an entry cannot claim what ``--block``, ``--grid`` or ``--dynamic-smem`` would
refuse (``shared`` 2^40, ``cluster_dims`` [65536, 65536, 65536], ``num_warps`` 0 or 10^30,
``warp_size`` "32") or nest JSON 100,000 deep. Each refusal names the entry and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from ...hardware.arch import most_smem_per_block
from ...plumbing.bounded_read import read_bounded
from ...plumbing.errors import ShmemError, SourcePos, json_reason

MAX_METADATA_BYTES = 1 << 20
MAX_NAME = 4096  # characters of a kernel's name
#: the integer fields a launch reads, with the range Triton can write (``shared``'s top is
#: read when checked: the profiles' largest per-block shared memory, registered ones included)
RANGES: dict[str, tuple[int, int | None]] = {
    "num_warps": (1, 32),  # 1,024 threads at most
    # an NVIDIA warp: 64 (an AMD target's) made the block twice the threads the cubin was
    # compiled for, traced without a word
    "warp_size": (32, 32),
    "shared": (0, None),
    "num_ctas": (1, 16),  # a cluster holds at most 16 blocks
    "num_stages": (0, 1024),
    "global_scratch_size": (0, 1 << 32),
    "profile_scratch_size": (0, 1 << 32),
}
CLUSTER = (1, 16)  # each of cluster_dims, and their product


class TritonError(ShmemError):
    """A Triton cache entry that cannot be read or does not fit its cubin."""

    def __init__(self, message: str, path: str | Path, pos: SourcePos | None = None) -> None:
        super().__init__(message, path=str(path), pos=pos, code="invalid-kernel")


#: a JSON string, or a bracket: what tells a top-level key from one nested deeper
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[][{}]')
_COLON = re.compile(r"\s*:")


def key_position(text: str, key: str) -> SourcePos | None:
    """Where the top-level object of the JSON ``text`` names ``key`` (the last time: JSON's
    reader keeps the last of a repeated key), None where it does not; one pass of the pattern
    engine over the text."""
    depth, found = 0, None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("{", "["):
            depth += 1
        elif token in ("}", "]"):
            depth -= 1
        elif depth == 1 and token[1:-1] == key and _COLON.match(text, match.end()):
            found = match.start()
    if found is None:
        return None
    return SourcePos(text.count("\n", 0, found) + 1, found - text.rfind("\n", 0, found))


def field_error(path: Path, message: str, *keys: str) -> TritonError:
    """``message`` about the metadata at ``path``, placed at the first of ``keys`` that its
    top-level object names (nowhere where none, or where the file cannot be read again)."""
    try:
        data = read_bounded(path, MAX_METADATA_BYTES, what="Triton metadata", text=True)
    except ShmemError:
        data = b""
    text = data.decode("utf-8", errors="replace")
    found = (key_position(text, key) for key in keys)
    return TritonError(message, path, next((pos for pos in found if pos is not None), None))


def read_metadata(path: Path) -> dict[str, Any]:
    """The metadata at ``path``: a JSON object with ``name`` and ``num_warps``, its fields
    checked (:func:`check`)."""
    data = read_bounded(
        path, MAX_METADATA_BYTES, what="Triton metadata", code="invalid-kernel", text=True
    )
    text = data.decode("utf-8", errors="replace")
    try:
        meta = json.loads(text)
    except RecursionError:
        raise TritonError("not Triton metadata (JSON nested too deeply)", path) from None
    except json.JSONDecodeError as exc:
        where = SourcePos(exc.lineno, exc.colno)
        why = json_reason(exc.msg)
        raise TritonError(f"not Triton metadata (not JSON: {why})", path, where) from None
    except ValueError:  # a number of thousands of digits
        raise TritonError(
            "not Triton metadata (a number of thousands of digits, which Triton never writes)",
            path,
        ) from None
    if not isinstance(meta, dict) or "name" not in meta or "num_warps" not in meta:
        raise TritonError(
            "not Triton metadata: a Triton cache entry's <name>.json has 'name' and 'num_warps'",
            path,
        )
    check(meta, path, text)
    return meta


Fail = Callable[[str, str], NoReturn]  # (what is wrong, the top-level key it is at)


def _integer(key: str, value: Any, low: int, high: int, fail: Fail, field: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        fail(f"{key!r} is {_kind(value)}, not an integer", field or key)
    if not low <= value <= high:
        said = str(value) if value.bit_length() <= 64 else f"a {value.bit_length()}-bit number"
        takes = f"{low:,}" if low == high else f"{low:,} to {high:,}"
        fail(f"{key!r} is {said}; a launch takes {takes}", field or key)


def _kind(value: Any) -> str:
    """``a str ('32')``: the type and a short rendering (a huge integer by its size)."""
    from ...plumbing.arguments import shown

    return shown(value)


def check(meta: dict[str, Any], path: Path, text: str = "") -> None:
    """Every field a launch reads is of its type and in its range (:data:`RANGES`); a refusal
    is placed at its field in ``text``, the file's JSON, where given (:func:`key_position`;
    the target's warp size at ``target``)."""

    def fail(message: str, key: str) -> NoReturn:
        pos = key_position(text, key) if text else None
        if pos is None and key == "warp_size" and text:
            pos = key_position(text, "target")
        raise TritonError(f"unexpected metadata: {message}", path, pos)

    for key in (*RANGES, "cluster_dims"):  # null: as if not written (the defaults apply)
        if key in meta and meta[key] is None and key != "num_warps":
            del meta[key]
    name = meta.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME:
        fail(f"'name' is {_kind(name)}, not a kernel's name", "name")
    target = meta.get("target")
    fields = dict(meta)
    if isinstance(target, dict) and "warp_size" in target and "warp_size" not in fields:
        fields["warp_size"] = target["warp_size"]
    if isinstance(target, list) and len(target) >= 3 and "warp_size" not in fields:
        fields["warp_size"] = target[2]
    for key, (low, high) in RANGES.items():
        value = fields.get(key)
        if value is not None or key == "num_warps":
            top = most_smem_per_block() if high is None else high
            _integer(key, value, low, top, fail)
    dims = meta.get("cluster_dims")
    if dims is not None:
        if not isinstance(dims, list) or len(dims) != 3:
            fail(f"'cluster_dims' is {_kind(dims)}, not 3 integers", "cluster_dims")
        product = 1
        for k, value in enumerate(dims):
            _integer(f"cluster_dims[{k}]", value, *CLUSTER, fail, "cluster_dims")
            product *= value
        if product > CLUSTER[1]:
            fail(
                f"'cluster_dims' {dims} is a cluster of {product} blocks; a cluster holds at "
                f"most {CLUSTER[1]}",
                "cluster_dims",
            )
