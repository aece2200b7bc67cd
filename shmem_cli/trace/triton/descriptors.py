"""Host-side tensor descriptors of a Triton kernel (``TensorDescriptor``) as launch arguments.

Triton passes a host-side descriptor whose loads it lowered to TMA as a ``CUtensorMap`` by value,
followed by the tensor's shape (one i32 per dimension) and strides (one i64 each). Its launcher
encodes the map from the tensor and from the entry's metadata (``tensordesc_meta``, one record
per descriptor parameter, in order): the block shape, the element type (in the map's own data
type codes), the element size and the swizzle (a ``CUtensorMapSwizzle`` code); the L2
promotion is 128 bytes, the element strides 1, out-of-bounds elements zero unless the
descriptor's padding is ``"nan"``.

The user gives only what the tensor is: ``--arg a_desc=tensordesc:shape=256x256,strides=256x1``
(Python's order, outermost first, strides in elements; ``padding=nan`` optional). The map is
then written as the ``tensormap:`` argument :mod:`shmem_cli.cuda.launch.tensormap` reads
(dimensions innermost first, strides in bytes), over a zero-filled buffer.
"""

from __future__ import annotations

import re
from typing import Any

from ...cuda.launch import tensormap
from ...plumbing.errors import shorten
from ..kernel.launch import LaunchError
from .cache import TritonEntry, TritonParam, desc_rank
from .metadata import TritonError, field_error

PREFIX = "tensordesc:"
_KEYS = ("shape", "strides", "padding")
_CODES = {code: name for name, (code, _, _) in tensormap.DTYPES.items() if "tfloat" not in name}
#: the largest size of a dimension (Triton passes the shape as int32) and of a stride in
#: elements (int64; a tensor map's byte strides stay below 2^40)
_MOST = {"shape": (1 << 31) - 1, "strides": 1 << 32}
_NUMBER = re.compile(r"[0-9]{1,20}\Z")  # ASCII digits only: int() also takes '1_0' and '１'
_MOST_DIMS = 5  # a tensor map's rank


def _sizes(text: str, key: str, name: str) -> tuple[int, ...]:
    parts = text.lower().split("x") if len(text) <= 200 else []
    if not parts or not all(_NUMBER.match(p.strip()) for p in parts):
        raise LaunchError(
            f"--arg {name}: {key}={shorten(text)!r} is not numbers joined by 'x' "
            f"(e.g. {key}=256x256)"
        )
    out = tuple(int(p.strip()) for p in parts)
    most = _MOST[key]
    if len(out) > _MOST_DIMS or any(not 0 < v <= most for v in out):
        raise LaunchError(
            f"--arg {name}: {key} must be 1 to {_MOST_DIMS} numbers, each from 1 to {most:,}"
        )
    return out


def parse(text: str, name: str) -> dict[str, Any]:
    """``tensordesc:shape=AxB,strides=Cx1[,padding=nan]`` -> its fields."""
    fields: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text[len(PREFIX) :].split(","))):
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if not eq or key not in _KEYS or key in fields:
            raise LaunchError(
                f"--arg {name}: '{part}' is not one of shape=, strides=, padding= (each once): "
                f"write {name}=tensordesc:shape=256x256,strides=256x1"
            )
        fields[key] = value.strip()
    for need in ("shape", "strides"):
        if need not in fields:
            raise LaunchError(
                f"--arg {name}: a tensor descriptor needs {need}= "
                f"({name}=tensordesc:shape=256x256,strides=256x1)"
            )
    padding = fields.get("padding", "zero").lower()
    if padding not in ("zero", "nan"):
        raise LaunchError(f"--arg {name}: padding is zero or nan, not {fields['padding']!r}")
    return {
        "shape": _sizes(fields["shape"], "shape", name),
        "strides": _sizes(fields["strides"], "strides", name),
        "nan": padding == "nan",
    }


def _meta(entry: TritonEntry, index: int, name: str) -> dict[str, Any]:
    metas = entry.metadata.get("tensordesc_meta")
    if not isinstance(metas, list) or index >= len(metas) or not isinstance(metas[index], dict):
        raise LaunchError(
            f"{name} is a tensor descriptor the entry's metadata has no tensordesc_meta for "
            "(Triton did not lower it to a TMA tensor map): shmem cannot pass it"
        )
    meta: dict[str, Any] = metas[index]
    return meta


def _int(entry: TritonEntry, meta: dict[str, Any], key: str, name: str) -> int:
    value = meta.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _unexpected(entry, f"{name}: the metadata's tensordesc_meta has no integer {key!r}")
    return value


def _unexpected(entry: TritonEntry, message: str) -> TritonError:
    """A ``tensordesc_meta`` record Triton never writes: the entry's error, at the key in its
    .json (it named the entry's folder alone), with what to do."""
    return field_error(
        entry.cubin.with_suffix(".json"),
        f"unexpected metadata: {message} (remove the entry; Triton writes it anew)",
        "tensordesc_meta",
    )


def expand(
    entry: TritonEntry, params: list[TritonParam], index: int, text: str
) -> list[tuple[int, str]]:
    """The arguments (parameter position, ``--arg`` value) that the descriptor ``params[index]``
    given as ``text`` stands for: its tensor map, then its shape and strides."""
    desc = params[index]
    name = desc.name
    rank = desc_rank(desc)
    given = parse(text, name)
    shape, strides = list(given["shape"]), list(given["strides"])
    if len(shape) != rank or len(strides) != rank:
        raise LaunchError(
            f"--arg {name}: the kernel's descriptor has {rank} dimensions; give {rank} sizes "
            f"in shape= and strides= (got {len(shape)} and {len(strides)})"
        )
    if strides[-1] != 1:
        raise LaunchError(f"--arg {name}: the last stride must be 1 (a TMA tensor is dense inside)")
    ordinal = sum(1 for p in params[:index] if p.is_desc)
    meta = _meta(entry, ordinal, name)
    code = _int(entry, meta, "elem_type", name)
    if code not in _CODES:
        raise _unexpected(
            entry, f"{name}: element type code {shorten(code)} of tensordesc_meta is not known"
        )
    dtype = _CODES[code]
    esize = tensormap.DTYPES[dtype][1]
    block = meta.get("block_size")
    if (
        not isinstance(block, list)
        or len(block) != rank
        or not all(isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= 256 for b in block)
    ):  # a tensor map's box: 1 to 256 elements a dimension (a number read is never echoed)
        raise _unexpected(
            entry,
            f"{name}: tensordesc_meta's block_size is not {rank} integers from 1 to 256 (a TMA "
            "box)",
        )
    swizzle = tensormap.SWIZZLE_BYTES.get(_int(entry, meta, "swizzle", name))
    if swizzle is None:
        raise _unexpected(entry, f"{name}: tensordesc_meta's swizzle code is not 0 to 3")
    if meta.get("fp4_padded"):
        shape[-1] *= 2  # two fp4 values a byte: the launcher doubles the inner size
    dims = list(reversed(shape))
    byte_strides = [s * esize for s in reversed(strides[:-1])]
    spec = (
        f"{tensormap.PREFIX}dtype={dtype},dims={'x'.join(map(str, dims))},"
        f"box={'x'.join(str(b) for b in reversed(block))},"
        + (f"strides={'x'.join(map(str, byte_strides))}," if byte_strides else "")
        + f"swizzle={swizzle or 'none'},l2=128B,oob={'nan' if given['nan'] else 'zero'}"
    )
    try:  # the map the launcher would encode: said in the descriptor's terms when impossible
        tensormap.parse_spec(spec)
    except tensormap.TensorMapError as err:
        raise LaunchError(
            f"--arg {name}: no TMA tensor map of {dtype} with shape={'x'.join(map(str, shape))}"
            f", strides={'x'.join(map(str, strides))} and the entry's block "
            f"{'x'.join(map(str, block))}: {err.message} (strides are in elements)"
        ) from None
    out = [(index, spec)]
    for k, value in enumerate([*shape, *strides]):
        out.append((index + 1 + k, str(value)))
    return out
