"""C types of launch values as kernels spell them, and their bytes: the one table of them.

A by-value ``--arg`` is read in its parameter's C type (:mod:`.values`), a ``--const`` or
``--memory`` value (a spec's ``kernel.const``, ``kernel.memory``) in its ``TYPE:`` or its
variable's declared type (trace/kernel/constants.py); :func:`scalar_of` names the element of
any such spelling, so a spec's ``TYPE:`` is checked before any trace by the same table the
trace reads it with.
"""

from __future__ import annotations

import re

#: floating-point parameter types (C++, CUTLASS, PyTorch and Triton spellings), and their
#: bytes: a decimal integer given to one is that number as a float (``--arg alpha=1`` is 1.0,
#: as C++ converts it at the call); a hexadecimal one stays the raw bits
BF16 = ("bfloat16", "__nv_bfloat16", "cutlass::bfloat16_t", "c10::BFloat16")
FLOATING = {
    "float": 4,
    "double": 8,
    "half": 2,
    "__half": 2,
    "cutlass::half_t": 2,
    "c10::Half": 2,
    **dict.fromkeys(BF16, 2),
}
#: C++'s integer types as a kernel's signature spells them (the demangler writes a typedef's
#: type: ``int64_t`` is ``long``) and as a Triton entry's TTGIR gives them (``int32_t``), and
#: their bytes: a float given to one is refused (``1e3`` stored the float's bits,
#: 1,148,846,080, where C++ converts it to 1000 and Triton's launcher refuses it); a ``bool``
#: takes any integer as C++ converts it, 0 or 1 (``2`` stored a byte the kernel's code never
#: expects)
INTEGRAL = {
    "bool": 1,
    **dict.fromkeys(("char", "signed char", "unsigned char"), 1),
    **dict.fromkeys(("short", "unsigned short"), 2),
    **dict.fromkeys(("int", "unsigned", "unsigned int"), 4),
    **dict.fromkeys(("long", "unsigned long", "long long", "unsigned long long"), 8),
    **{f"{u}int{8 * n}_t": n for u in ("", "u") for n in (1, 2, 4, 8)},
}
#: CUDA's vectors of floating components: each one's component type and count. Its ``--arg``
#: is its components, ``X,Y`` for a ``float2``, each taken as its component type takes a
#: number (``1,2`` is 1.0f, 2.0f); one number alone is refused (it filled the 8 bytes of a
#: ``float2`` as a double)
FLOAT_VECTORS = {
    **{f"float{n}": ("float", n) for n in (1, 2, 3, 4)},
    **{f"double{n}": ("double", n) for n in (1, 2, 3, 4)},
    "double4_16a": ("double", 4),
    "double4_32a": ("double", 4),
    "__half2": ("__half", 2),
    "half2": ("half", 2),
    "__nv_bfloat162": ("__nv_bfloat16", 2),
}


#: other spellings of these C types: typedefs a declaration may use, and the components of
#: CUDA's integer vectors (``uint4``'s ``uint``)
_SPELLINGS = {
    "signed": "int",
    "uchar": "unsigned char",
    "ushort": "unsigned short",
    "uint": "unsigned int",
    "ulong": "unsigned long",
    "longlong": "long long",
    "ulonglong": "unsigned long long",
    "size_t": "unsigned long",
    "nv_bfloat16": "__nv_bfloat16",
}
#: CUDA's vectors of integers (those of floats: :data:`FLOAT_VECTORS`)
_VECTOR = re.compile(r"(u?(?:char|short|int|long|longlong))[1-4]\Z")


def scalar_of(type_name: str) -> tuple[str, int] | None:
    """(C type, bytes) of one element of a C type, as these tables spell and size it
    (:data:`INTEGRAL`, :data:`FLOATING`; ``float4``: ``float``, 4 bytes; ``uint``: ``unsigned
    int``), or None where they have no such type."""
    t = " ".join(type_name.replace("const ", "").split()).removeprefix("std::")
    vector, m = FLOAT_VECTORS.get(t), _VECTOR.match(t)
    if vector is not None:  # float4: float
        t = vector[0]
    elif m:  # uint4: uint
        t = m.group(1)
    t = _SPELLINGS.get(t, t)
    size = INTEGRAL.get(t, FLOATING.get(t))
    return None if size is None else (t, size)
