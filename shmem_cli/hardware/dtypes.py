"""Element types a shared-memory array may hold."""

from __future__ import annotations

from ..plumbing.frozen import frozen


@frozen
class DType:
    """An element type: its canonical name, size in bytes and what it is."""

    name: str
    size: int
    c_type: str
    integer: bool = False
    vector: bool = False

    @property
    def alignment(self) -> int:
        """CUDA aligns every built-in (vector) type to its size."""
        return self.size


_CANONICAL = [
    DType("int8", 1, "signed char", integer=True),
    DType("uint8", 1, "unsigned char", integer=True),
    DType("int16", 2, "short", integer=True),
    DType("uint16", 2, "unsigned short", integer=True),
    DType("float16", 2, "__half"),
    DType("bfloat16", 2, "__nv_bfloat16"),
    DType("int32", 4, "int", integer=True),
    DType("uint32", 4, "unsigned int", integer=True),
    DType("float32", 4, "float"),
    DType("half2", 4, "__half2", vector=True),
    DType("int64", 8, "long long", integer=True),
    DType("uint64", 8, "unsigned long long", integer=True),
    DType("float64", 8, "double"),
    DType("float2", 8, "float2", vector=True),
    DType("int2", 8, "int2", vector=True),
    DType("uint2", 8, "uint2", vector=True),
    DType("float4", 16, "float4", vector=True),
    DType("int4", 16, "int4", vector=True),
    DType("uint4", 16, "uint4", vector=True),
    DType("double2", 16, "double2", vector=True),
]

DTYPES: dict[str, DType] = {d.name: d for d in _CANONICAL}
ALIASES: dict[str, str] = {
    "char": "int8",
    "signed char": "int8",
    "unsigned char": "uint8",
    "short": "int16",
    "unsigned short": "uint16",
    "half": "float16",
    "__half": "float16",
    "bf16": "bfloat16",
    "__nv_bfloat16": "bfloat16",
    "int": "int32",
    "unsigned": "uint32",
    "unsigned int": "uint32",
    "float": "float32",
    "long long": "int64",
    "unsigned long long": "uint64",
    "double": "float64",
    "__half2": "half2",
    # the short names of other tools (PyTorch, NumPy, CUTLASS)
    "fp16": "float16",
    "f16": "float16",
    "fp32": "float32",
    "f32": "float32",
    "fp64": "float64",
    "f64": "float64",
}


def lookup(name: str) -> DType | None:
    """The dtype for a canonical name or CUDA spelling, or None."""
    key = " ".join(name.split())
    return DTYPES.get(key) or DTYPES.get(ALIASES.get(key, ""))


def known_names() -> list[str]:
    return sorted(DTYPES) + sorted(ALIASES)
