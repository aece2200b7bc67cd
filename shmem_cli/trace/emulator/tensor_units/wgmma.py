"""wgmma (HGMMA/IGMMA/QGMMA): matrix descriptors, the shared-memory layout they describe,
the operands' values, and what the instruction costs the shared-memory pipe.

A descriptor is 64 bits (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address
>> 4, 16-29 leading byte offset (LBO) >> 4, 32-45 stride byte offset (SBO) >> 4, 49-51
base offset, 62-63 layout (0 no swizzle, 1 128B, 2 64B, 3 32B swizzle). An operand of R
rows (M = 64 for A, N for B) and 32 bytes of K per instruction (k16 of 16-bit types, k8 of
tf32, k32 of 8-bit types) is made of core matrices of 8 rows x 16 bytes. Byte ``kb`` of K
of row ``r`` lies at (K-major)

* no swizzle: ``start + (r // 8) * SBO + (kb // 16) * LBO + (r % 8) * 16 + kb % 16``;
* W-byte swizzle: ``start + (r // 8) * SBO + (r % 8) * W + kb`` (LBO unused),

and for an MN-major operand (``.tnspA``/``.tnspB``, 16-bit types), with ``mb`` the byte of
the row index along M or N and ``k`` the K index,

* no swizzle: ``start + (mb // 16) * SBO + (k // 8) * LBO + (k % 8) * 16 + mb % 16``;
* W-byte swizzle: ``start + (mb // W) * LBO + (k // 8) * SBO + (k % 8) * W + mb % W``,

then the W-byte swizzle exchanges 16-byte chunks by the address (:func:`.tma.swizzle`).

The cost (measured on the H200, tests/data/trace/hopper: 346 launches over every shape
N = 8..256, f16/bf16/tf32/e4m3/e5m2/s8, K- and MN-major, the four swizzle modes, A from
registers and from shared memory, and non-canonical descriptors): one request per warp
of the warpgroup (4 per instruction), counted in ``..._op_gmma`` only, and one wavefront
per core matrix read: 16 for A from shared memory (64 x 32 bytes) plus N / 4 for B
(N x 32 bytes), whatever the layout, swizzle or descriptor offsets; the bank-conflict
counter stays 0. The layouts a descriptor can express put the 8 rows of a core matrix in
8 different 16-byte bank groups (contiguous rows, or rows W bytes apart with the
swizzle's XOR), so no layout can make a core matrix conflict.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from ....plumbing.frozen import frozen
from .tma import swizzle

if TYPE_CHECKING:
    import numpy.typing as npt

K_BYTES = 32  # bytes of K one instruction reads per row
CORE_BYTES = 128  # one core matrix: 8 rows x 16 bytes
#: the PTX ISA's warpgroup: four warps of 32 lanes (the fragment layouts below are its)
WARP_LANES = 32
GROUP_THREADS = 4 * WARP_LANES
M = 64
LAYOUTS = {0: 0, 1: 128, 2: 64, 3: 32}  # descriptor layout code -> swizzle bytes (0 none)


@frozen
class Descriptor:
    start: int  # shared address, bytes
    lbo: int
    sbo: int
    base_offset: int
    swizzle: int  # 0, 32, 64, 128

    @classmethod
    def decode(cls, value: int) -> Descriptor:
        return cls(
            start=(value & 0x3FFF) << 4,
            lbo=((value >> 16) & 0x3FFF) << 4,
            sbo=((value >> 32) & 0x3FFF) << 4,
            base_offset=(value >> 49) & 7,
            swizzle=LAYOUTS[(value >> 62) & 3],
        )

    def describe(self, mn_major: bool) -> str:
        swz = f"{self.swizzle}B swizzle" if self.swizzle else "no swizzle"
        major = "MN-major" if mn_major else "K-major"
        base = f", base offset {self.base_offset}" if self.base_offset else ""
        return f"{major}, {swz}, start 0x{self.start:x}, LBO {self.lbo}, SBO {self.sbo}{base}"


def byte_addresses(d: Descriptor, rows: int, esize: int, mn_major: bool) -> npt.NDArray[Any]:
    """(rows, 32) shared byte addresses of the K bytes of every row of an operand."""
    r = np.arange(rows, dtype=np.int64)[:, None]
    kb = np.arange(K_BYTES, dtype=np.int64)[None, :]
    w = d.swizzle
    if not mn_major:
        if w == 0:
            addr = d.start + (r // 8) * d.sbo + (kb // 16) * d.lbo + (r % 8) * 16 + kb % 16
        else:
            addr = d.start + (r // 8) * d.sbo + (r % 8) * w + kb
    else:
        # byte kb of row r holds K element kb // esize; an MN-major layout stores K rows
        k = kb // esize
        mb = r * esize + kb % esize
        if w == 0:
            addr = d.start + (mb // 16) * d.sbo + (k // 8) * d.lbo + (k % 8) * 16 + mb % 16
        else:
            addr = d.start + (mb // w) * d.lbo + (k // 8) * d.sbo + (k % 8) * w + mb % w
    out: npt.NDArray[Any] = swizzle(addr, w)
    return out


def core_matrices(addr: npt.NDArray[Any]) -> list[int]:
    """The start addresses of the core matrices (8 rows x 16 bytes) an operand reads."""
    rows = addr.shape[0]
    return [int(addr[8 * g, 16 * c]) for g in range(rows // 8) for c in range(K_BYTES // 16)]


def wavefronts(n: int, a_from_shared: bool) -> int:
    """Wavefronts of one instruction: one per core matrix read (module docstring)."""
    a = M * K_BYTES // CORE_BYTES if a_from_shared else 0
    return a + n * K_BYTES // CORE_BYTES


def per_warp(total: int, warps: int = 4) -> list[int]:
    """The instruction's wavefronts over its warps' requests (only the sum was measured:
    each warp gets an equal share, the remainder going to the first)."""
    share, extra = divmod(total, warps)
    return [share + (1 if k < extra else 0) for k in range(warps)]


# --- operand values ----------------------------------------------------------------------


@cache
def fp8_values(kind: str) -> npt.NDArray[np.float64]:
    """The 256 values of an e4m3 or e5m2 byte (NaN where the format has one)."""
    ebits, mbits, bias = (4, 3, 7) if kind == "e4m3" else (5, 2, 15)
    out = np.zeros(256, dtype=np.float64)
    for v in range(256):
        s = -1.0 if v & 0x80 else 1.0
        e = (v >> mbits) & ((1 << ebits) - 1)
        m = v & ((1 << mbits) - 1)
        if kind == "e4m3" and e == 15 and m == 7:
            out[v] = np.nan
        elif kind == "e5m2" and e == 31:
            out[v] = np.nan if m else s * np.inf
        elif e == 0:
            out[v] = s * m * 2.0 ** (1 - bias - mbits)
        else:
            out[v] = s * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
    return out


def esize(dtype: str) -> int:
    return {"f16": 2, "bf16": 2, "tf32": 4}.get(dtype, 1)


def values(raw: npt.NDArray[np.uint8], dtype: str) -> npt.NDArray[np.float64]:
    """Element values of little-endian bytes (..., n * esize) -> (..., n)."""
    flat = np.ascontiguousarray(raw)
    if dtype == "f16":
        return flat.view(np.float16).astype(np.float64)
    if dtype == "bf16":
        u = flat.view(np.uint16).astype(np.uint32) << np.uint32(16)
        return u.view(np.float32).astype(np.float64)
    if dtype == "tf32":
        u = flat.view(np.uint32) & np.uint32(0xFFFFE000)
        return u.view(np.float32).astype(np.float64)
    if dtype in ("e4m3", "e5m2"):
        return fp8_values(dtype)[flat]
    if dtype == "s8":
        return flat.view(np.int8).astype(np.float64)
    return flat.astype(np.float64)  # u8


def types_of(opcode: str, mods: tuple[str, ...]) -> tuple[str, str, str, int, int]:
    """(A type, B type, accumulator type, N, K) of an HGMMA/IGMMA/QGMMA."""
    shape = next(m for m in mods if m.count("x") == 2)
    _, n, k = (int(x) for x in shape.split("x"))
    if opcode == "HGMMA":
        t = "bf16" if "BF16" in mods else "tf32" if "TF32" in mods else "f16"
        return t, t, ("f16" if "F16" in mods else "f32"), n, k
    names = [m.lower() for m in mods if m in ("E4M3", "E5M2", "S8", "U8")]
    if len(names) == 1:
        names = names * 2
    if opcode == "IGMMA":
        return names[0], names[1], "s32", n, k
    return names[0], names[1], ("f16" if "F16" in mods else "f32"), n, k


def accumulator_layout(n: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(row, column) of accumulator element i of thread t of the warpgroup: arrays (n/2, 128)."""
    t = np.arange(GROUP_THREADS, dtype=np.int64)[None, :]
    i = np.arange(n // 2, dtype=np.int64)[:, None]
    lane, warp = t % WARP_LANES, t // WARP_LANES
    row = 16 * warp + lane // 4 + 8 * ((i // 2) % 2)
    col = 8 * (i // 4) + 2 * (lane % 4) + i % 2
    return row, col


def a_fragment_layout(dtype: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(row, K byte) of byte j of A register r of thread t (A from registers): arrays
    (4, 4, 128) indexed [r, j, t]."""
    t = np.arange(GROUP_THREADS, dtype=np.int64)[None, None, :]
    r = np.arange(4, dtype=np.int64)[:, None, None]
    j = np.arange(4, dtype=np.int64)[None, :, None]
    lane, warp = t % WARP_LANES, t // WARP_LANES
    row = 16 * warp + lane // 4 + 8 * (r % 2)
    kb = 4 * (lane % 4) + 16 * (r // 2) + j  # four bytes per register, K-halves by r // 2
    return row + 0 * j, kb
