"""TMA tensor maps (``CUtensorMap``): the parameters ``cuTensorMapEncodeTiled`` takes, the
128 bytes the driver makes of them, and a launch argument that spells them out.

The byte layout was read off maps the driver encoded on an H200 (CUDA 13.0), one parameter
varied at a time (tests/data/trace/hopper/outputs/enc_*.bin, lab/gen_launches.py
``encodings``); little-endian 32-bit words:

====== =====================================================================
word   content
====== =====================================================================
0-1    global address
2      bits 4-6 rank - 1, bits 7-11 data type code, bits 13-14 swizzle (0 none,
       1 32B, 2 64B, 3 128B), bit 15 OOB fill NaN, bit 16 tf32, bits 17-18 L2
       promotion
3-6    global strides of dimensions 1..4, in 16-byte units
8-12   global dimensions - 1
13     bits 0-14 element strides - 1 (3 bits per dimension), bits 24-31 box[0] - 1
14     box[1..4] - 1, one byte each
16     bytes of one box: element bytes x the product of box // element stride
18     swizzle atom bytes (16 without swizzle)
====== =====================================================================

Interleaved maps (``CU_TENSOR_MAP_INTERLEAVE_16B/32B``) were not decoded: they are refused.
"""

from __future__ import annotations

import re
import struct

from ...plumbing.errors import ShmemError, shorten
from ...plumbing.frozen import frozen

# CUtensorMapDataType -> (internal code in word 2, element bytes, name); tf32 sets bit 16
DTYPES: dict[str, tuple[int, int, bool]] = {
    "uint8": (0, 1, False),
    "uint16": (1, 2, False),
    "uint32": (2, 4, False),
    "int32": (3, 4, False),
    "uint64": (4, 8, False),
    "int64": (5, 8, False),
    "float16": (6, 2, True),
    "float32": (7, 4, True),
    "float32_ftz": (8, 4, True),
    "float64": (9, 8, True),
    "bfloat16": (10, 2, True),
    "tfloat32": (7, 4, True),
    "tfloat32_ftz": (8, 4, True),
}
ALIASES = {
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "s32": "int32",
    "i32": "int32",
    "u64": "uint64",
    "s64": "int64",
    "i64": "int64",
    "f16": "float16",
    "half": "float16",
    "f32": "float32",
    "float": "float32",
    "f64": "float64",
    "double": "float64",
    "bf16": "bfloat16",
    "tf32": "tfloat32",
}
SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}  # code -> bytes (0: none)
#: strides are kept in 16-byte units in 32-bit words (3-6): below 2^36 bytes
MAX_STRIDE = 1 << 36
BYTES = 128


class TensorMapError(ShmemError):
    """A tensor-map argument that cannot be encoded or decoded."""


@frozen
class TensorMap:
    """A tiled tensor map: what ``cuTensorMapEncodeTiled`` takes (dimension 0 innermost)."""

    address: int
    dtype: str
    dims: tuple[int, ...]
    strides: tuple[int, ...]  # bytes, dimensions 1..rank-1
    box: tuple[int, ...]
    elem_strides: tuple[int, ...]
    swizzle: int = 0  # bytes: 0, 32, 64 or 128
    l2_promotion: int = 0  # 0 none, 1 64B, 2 128B, 3 256B
    oob_nan: bool = False

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def esize(self) -> int:
        return DTYPES[self.dtype][1]

    @property
    def is_float(self) -> bool:
        return DTYPES[self.dtype][2]

    @property
    def box_elements(self) -> tuple[int, ...]:
        """Elements moved along each dimension (the box traversed at the element strides;
        box // stride, as the driver counts the box's bytes in word 16)."""
        return tuple(max(1, b // e) for b, e in zip(self.box, self.elem_strides, strict=True))

    @property
    def box_bytes(self) -> int:
        n = self.esize
        for k in self.box_elements:
            n *= k
        return n

    def check(self) -> None:
        """The driver's own limits, so that an impossible map is said in words."""
        r = self.rank
        if not 1 <= r <= 5:
            raise TensorMapError(f"a tensor map has rank 1 to 5, not {r}")
        if len(self.strides) != r - 1 or len(self.box) != r or len(self.elem_strides) != r:
            raise TensorMapError(
                f"a rank-{r} tensor map needs {r} dims, {r - 1} strides, {r} box sizes and "
                f"{r} element strides"
            )
        if any(not 1 <= d <= 1 << 32 for d in self.dims):
            raise TensorMapError("tensor-map dims must be between 1 and 2^32")
        # a stride of 0 is what CUTLASS passes for a batch of one (dims[k + 1] == 1), and the
        # driver takes it there
        if any(
            s % 16 or s < 0 or s >= 1 << 40 or (s == 0 and self.dims[k + 1] != 1)
            for k, s in enumerate(self.strides)
        ):
            raise TensorMapError(
                "tensor-map strides are bytes, multiples of 16 below 2^40 (0 only for a "
                "dimension of size 1)"
            )
        if any(s >= MAX_STRIDE for s in self.strides):  # the driver's 32-bit stride words
            raise TensorMapError(
                f"a tensor-map stride of {MAX_STRIDE >> 30} GiB or more spans more global "
                "memory than the trace keeps (64 GiB): give smaller strides"
            )
        if any(not 1 <= b <= 256 for b in self.box):
            raise TensorMapError("tensor-map box sizes must be between 1 and 256")
        if any(not 1 <= e <= 8 for e in self.elem_strides):
            raise TensorMapError("tensor-map element strides must be between 1 and 8")
        if self.box_bytes >= 1 << 32:  # word 16 holds it; shared memory holds far less
            raise TensorMapError(
                f"a tensor-map box of {self.box_bytes:,} bytes cannot land in shared memory "
                "(its size word holds less than 4 GiB): give smaller box sizes"
            )
        if (self.box[0] * self.esize) % 16:
            raise TensorMapError("the box's inner dimension must be a multiple of 16 bytes")
        if self.swizzle not in (0, 32, 64, 128):
            raise TensorMapError("swizzle must be none, 32B, 64B or 128B")
        if self.swizzle and self.box[0] * self.esize > self.swizzle:
            raise TensorMapError(
                f"with a {self.swizzle}B swizzle the box's inner dimension may span at most "
                f"{self.swizzle} bytes ({self.box[0]} x {self.esize} B given)"
            )


def encode(tm: TensorMap) -> bytes:
    """The 128 bytes the driver makes of ``tm`` (the layout in the module docstring)."""
    tm.check()
    code, _, _ = DTYPES[tm.dtype]
    w = [0] * 32
    w[0], w[1] = tm.address & 0xFFFFFFFF, tm.address >> 32
    swz = {0: 0, 32: 1, 64: 2, 128: 3}[tm.swizzle]
    tf32 = tm.dtype.startswith("tfloat32")
    w[2] = (
        ((tm.rank - 1) << 4)
        | (code << 7)
        | (swz << 13)
        | (int(tm.oob_nan) << 15)
        | (int(tf32) << 16)
        | (tm.l2_promotion << 17)
    )
    for k, s in enumerate(tm.strides):
        w[3 + k] = s >> 4
    for k, d in enumerate(tm.dims):
        w[8 + k] = d - 1
    w[13] = ((tm.box[0] - 1) << 24) | sum((e - 1) << (3 * k) for k, e in enumerate(tm.elem_strides))
    w[14] = sum((b - 1) << (8 * k) for k, b in enumerate(tm.box[1:]))
    w[16] = tm.box_bytes
    w[18] = 16 if not tm.swizzle else 8 * tm.swizzle
    return struct.pack("<32I", *w)


_CODES = {v[0]: k for k, v in DTYPES.items() if not k.startswith("tfloat")}


def decode(raw: bytes) -> TensorMap | None:
    """The tensor map in 128 bytes; None for zero bytes (a map that was not given)."""
    if len(raw) != BYTES:
        raise TensorMapError(f"a CUtensorMap is {BYTES} bytes, not {len(raw)}")
    w = struct.unpack("<32I", raw)
    if not any(w):
        return None
    rank = ((w[2] >> 4) & 7) + 1
    code = (w[2] >> 7) & 0x1F
    if code not in _CODES or rank > 5:
        raise TensorMapError("these 128 bytes are not a tiled CUtensorMap (unknown data type)")
    dtype = _CODES[code]
    if w[2] & (1 << 16):
        dtype = "tfloat32" if dtype == "float32" else "tfloat32_ftz"
    box = ((w[13] >> 24) + 1, *(((w[14] >> (8 * k)) & 0xFF) + 1 for k in range(rank - 1)))
    tm = TensorMap(
        address=w[0] | (w[1] << 32),
        dtype=dtype,
        dims=tuple(w[8 + k] + 1 for k in range(rank)),
        strides=tuple(w[3 + k] << 4 for k in range(rank - 1)),
        box=box,
        elem_strides=tuple(((w[13] >> (3 * k)) & 7) + 1 for k in range(rank)),
        swizzle=SWIZZLE_BYTES[(w[2] >> 13) & 3],
        l2_promotion=(w[2] >> 17) & 3,
        oob_nan=bool(w[2] & (1 << 15)),
    )
    return tm


# --- the launch argument ---------------------------------------------------------------

KEYS = ("dtype", "dims", "strides", "box", "elem", "swizzle", "l2", "oob", "data")
#: the value text of a ``CUtensorMap`` argument: ``tensormap:dtype=...,dims=...,box=...``
PREFIX = "tensormap:"


@frozen
class TensorMapSpec:
    """A tensor-map argument as written: the map without its address, and where its global
    memory comes from (``data`` = a file, or None for a zero-filled buffer)."""

    map: TensorMap
    data: str | None


def parse_spec(text: str) -> TensorMapSpec:
    """``tensormap:dtype=bf16,dims=4096x128,box=64x128,swizzle=128B[,strides=8192]
    [,elem=1x1][,l2=128B][,oob=nan][,data=@A.bin]`` (dims, box innermost first; strides in
    bytes for dimensions 1.. , default dense)."""
    body = text[len(PREFIX) :] if text.startswith(PREFIX) else text
    fields: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if not eq or key not in KEYS:
            raise TensorMapError(
                f"tensor-map field '{shorten(part)}' is not one of "
                + ", ".join(k + "=" for k in KEYS)
            )
        if key in fields:
            raise TensorMapError(f"tensor-map field '{shorten(key)}' given twice")
        fields[key] = value.strip()
    for need in ("dtype", "dims", "box"):
        if need not in fields:
            raise TensorMapError(f"a tensor map needs {need}= (e.g. '{_EXAMPLE}')")
    dtype = ALIASES.get(fields["dtype"].lower(), fields["dtype"].lower())
    if dtype not in DTYPES:
        raise TensorMapError(
            f"tensor-map dtype '{shorten(fields['dtype'])}' is not one of {', '.join(DTYPES)}"
        )
    dims = _sizes(fields["dims"], "dims")
    box = _sizes(fields["box"], "box")
    esize = DTYPES[dtype][1]
    if "strides" in fields:
        strides = _sizes(fields["strides"], "strides")
    else:
        dense: list[int] = []
        run = dims[0] * esize
        for d in dims[1:]:
            dense.append(-(-run // 16) * 16)
            run = dense[-1] * d
        strides = tuple(dense)
    elem = _sizes(fields["elem"], "elem") if "elem" in fields else (1,) * len(dims)
    swz = fields.get("swizzle", "none").lower().removesuffix("b")
    if swz not in ("none", "0", "32", "64", "128"):
        raise TensorMapError(
            f"swizzle '{shorten(fields['swizzle'])}' is not none, 32B, 64B or 128B"
        )
    l2 = fields.get("l2", "none").lower().removesuffix("b")
    if l2 not in ("none", "0", "64", "128", "256"):
        raise TensorMapError(f"l2 '{shorten(fields['l2'])}' is not none, 64B, 128B or 256B")
    oob = fields.get("oob", "zero").lower()
    if oob not in ("zero", "nan"):
        raise TensorMapError(f"oob '{shorten(fields['oob'])}' is not zero or nan")
    data = fields.get("data")
    if data is not None and (not data.startswith("@") or not data[1:].strip()):
        raise TensorMapError("data= names a file: data=@FILE.bin or data=@FILE.npy")
    tm = TensorMap(
        address=0,
        dtype=dtype,
        dims=tuple(dims),
        strides=tuple(strides),
        box=tuple(box),
        elem_strides=tuple(elem),
        swizzle=0 if swz == "none" else int(swz),
        l2_promotion={"none": 0, "0": 0, "64": 1, "128": 2, "256": 3}[l2],
        oob_nan=oob == "nan",
    )
    tm.check()
    return TensorMapSpec(tm, data[1:] if data else None)


_EXAMPLE = "tensormap:dtype=bf16,dims=4096x128,box=64x128,swizzle=128B"
_SIZE = re.compile(r"[0-9]{1,20}\Z")  # ASCII, bounded: below 2^67 ('x' joins sizes: no 0x...)


def _sizes(text: str, what: str) -> tuple[int, ...]:
    parts = text.lower().split("x") if len(text) <= 128 else []
    if not parts or not all(_SIZE.match(p.strip()) for p in parts):
        raise TensorMapError(
            f"tensor-map {what} '{shorten(text)}' is not numbers joined by 'x' (e.g. 4096x128)"
        )
    return tuple(int(p.strip(), 10) for p in parts)  # decimal: 064 is 64 (int(, 0) refused it)


def extent(tm: TensorMap) -> int:
    """Bytes of global memory the map spans."""
    end = tm.dims[0] * tm.esize
    for d, s in zip(tm.dims[1:], tm.strides, strict=True):
        end = max(end, (d - 1) * s + end if d > 1 else end)
    return end


def describe(tm: TensorMap) -> str:
    """One line: dtype, dims, box, swizzle."""
    swz = f"{tm.swizzle}B swizzle" if tm.swizzle else "no swizzle"
    x = "x".join
    return f"{tm.dtype} {x(map(str, tm.dims))}, box {x(map(str, tm.box))}, {swz}" + (
        f", element strides {x(map(str, tm.elem_strides))}" if max(tm.elem_strides) > 1 else ""
    )
