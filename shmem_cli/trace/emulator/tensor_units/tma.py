"""What the tensor memory accelerator moves: a tensor map's box between global and shared
memory, with the map's swizzle applied to the shared side.

The box is laid out densely in shared memory, dimension 0 innermost; a swizzle of W bytes
(32, 64, 128) then exchanges 16-byte chunks by the shared address itself: the chunk bits
4..6 are XORed with address bits 7..9 (one bit for 32B, two for 64B, three for 128B), the
pattern CUTLASS calls ``Swizzle<1|2|3, 4, 3>``. Checked on the H200 for all four modes
(tests/data/trace/hopper, ``tma_tile_*``: every element read back through the swizzle).
Elements outside the tensor read as zero (NaN for a float map with NaN fill) and are not
written by a store.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ....cuda.launch.tensormap import TensorMap, TensorMapError, decode
from ....cuda.sass import Instruction
from ..op_table import unsupported
from ..state import PARAM_WINDOW, TAINT_GLOBAL, Block, TraceError

_MASK = {0: 0, 32: 1, 64: 3, 128: 7}


def swizzle(addr: Any, width: int) -> Any:
    """Shared byte addresses after a TMA swizzle of ``width`` bytes (0: none)."""
    mask = _MASK[width]
    return addr ^ (((addr >> 7) & mask) << 4) if mask else addr


def _box(tm: TensorMap, coords: tuple[int, ...], ins: Instruction, room: int) -> tuple[Any, Any]:
    """Global byte offsets (from the map's address) of the box's elements in shared order,
    and which of them lie inside the tensor; a box larger than ``room`` (the block's shared
    memory) is refused before they are made (a box of 32^5 words, 128 MiB, took 2.2 GB)."""
    if len(coords) != tm.rank:  # the copy's .nD names a coordinate for each of the map's
        raise TraceError(
            f"a {len(coords)}-D TMA copy through a tensor map of rank {tm.rank}: the copy "
            f"names one coordinate per dimension of its map; give a map of rank "
            f"{len(coords)} (tensormap:dims= with {len(coords)} sizes)",
            ins,
        )
    if tm.box_bytes > room:
        raise TraceError(
            f"a TMA box of {tm.box_bytes:,} bytes is larger than the block's shared memory "
            f"(0x{room:x} bytes): give the tensor map a smaller box",
            ins,
        )
    n = tm.box_elements
    grids = np.indices(n[::-1], dtype=np.int64)[::-1]  # dimension 0 varies fastest
    inside = np.ones(grids[0].shape, dtype=bool)
    goff = np.zeros(grids[0].shape, dtype=np.int64)
    strides = (tm.esize, *tm.strides)
    for d in range(tm.rank):
        c = coords[d] + grids[d] * tm.elem_strides[d]
        inside &= (c >= 0) & (c < tm.dims[d])
        goff += c * strides[d]
    return goff.ravel(), inside.ravel()


def _shared_bytes(
    b: Block, tm: TensorMap, dst: int, count: int, ins: Instruction, base: int
) -> Any:
    """The box's bytes in the batch's shared memory: the CTA's window at ``base``."""
    lin = dst + np.arange(count * tm.esize, dtype=np.int64)
    phys = swizzle(lin, tm.swizzle)
    if dst < 0 or int(phys.max()) >= b.smem_size:
        raise TraceError(
            f"a TMA box of {count * tm.esize} bytes at shared 0x{dst:x} runs past the block's "
            f"shared memory (0x{b.smem_size:x} bytes)",
            ins,
        )
    return phys + base


def load(
    b: Block, tm: TensorMap, dst: int, coords: tuple[int, ...], ins: Instruction, base: int = 0
) -> int:
    """Copy the box at ``coords`` into shared memory at ``dst`` (of the CTA whose window
    starts at ``base`` in the batch's shared memory); the bytes it delivers."""
    goff, inside = _box(tm, coords, ins, b.smem_size)
    phys = _shared_bytes(b, tm, dst, len(goff), ins, base)
    e = tm.esize
    data = np.zeros(len(goff) * e, dtype=np.uint8)
    taint = np.full(len(goff) * e, TAINT_GLOBAL, dtype=np.uint8)
    if inside.any():
        mem = b.launch.memory
        addr = tm.address + goff[inside]
        src = mem.offsets(addr, e, ins)
        idx = (src[:, None] + np.arange(e)).ravel()
        sel = (np.flatnonzero(inside)[:, None] * e + np.arange(e)).ravel()
        data[sel] = mem.data[idx]
        read = np.asarray(mem.read_taint(src, e), dtype=np.uint8)
        taint[sel] |= np.repeat(np.broadcast_to(read, src.shape), e)
    if tm.oob_nan and tm.is_float and not inside.all():
        nan = np.array([np.nan], dtype={2: np.float16, 4: np.float32, 8: np.float64}[e])
        fill = np.frombuffer(nan.tobytes(), dtype=np.uint8)
        out = np.flatnonzero(~inside)
        data[(out[:, None] * e + np.arange(e)).ravel()] = np.tile(fill, len(out))
    b.smem[phys] = data
    b.tsmem[phys] = taint
    return tm.box_bytes


def store(
    b: Block, tm: TensorMap, src: int, coords: tuple[int, ...], ins: Instruction, base: int = 0
) -> None:
    """Write the box at ``coords`` from shared memory at ``src`` (of the CTA at ``base``;
    inside elements only)."""
    reduce(b, tm, src, coords, None, ins, base)


def reduce(
    b: Block,
    tm: TensorMap,
    src: int,
    coords: tuple[int, ...],
    combine: Callable[[Any, Any], Any] | None,
    ins: Instruction,
    base: int = 0,
) -> None:
    """Combine the box at ``coords`` from shared memory at ``src`` (of the CTA at ``base``)
    into global memory (inside elements only): ``combine(old, new)`` on byte arrays of
    shape (n, element size) gives the bytes written back."""
    goff, inside = _box(tm, coords, ins, b.smem_size)
    phys = _shared_bytes(b, tm, src, len(goff), ins, base)
    e = tm.esize
    if not inside.any():
        return
    mem = b.launch.memory
    dst = mem.store_offsets(tm.address + goff[inside], e, ins)
    where = (dst[:, None] + np.arange(e)).ravel()
    sel = (np.flatnonzero(inside)[:, None] * e + np.arange(e)).ravel()
    new = b.smem[phys[sel]]
    if combine is not None:  # only a reduction reads what it writes over
        new = np.asarray(combine(mem.data[where].reshape(-1, e), new.reshape(-1, e)))
    mem.data[where] = new.astype(np.uint8).ravel()


def tensor_map(b: Block, addr: int, ins: Instruction) -> TensorMap | None:
    """The tensor map at a generic address: in the parameters, or in global memory."""
    bank = b.cbank[0]
    off = addr - PARAM_WINDOW
    if off >= 0 and off + 128 <= len(bank):
        raw = bank[off : off + 128].tobytes()
    else:
        mem = b.launch.memory
        src = int(mem.offsets(np.array([addr], dtype=np.int64), 128, ins)[0])
        raw = mem.data[src : src + 128].tobytes()
    try:
        return decode(raw)
    except TensorMapError as exc:
        raise TraceError(f"tensor map at 0x{addr:x}: {exc.message}", ins) from None


def rank_of(ins: Instruction) -> int:
    d = next((m for m in ins.mods if re.fullmatch(r"[1-5]D", m)), None)
    if d is None:
        raise unsupported(ins, "no dimension modifier")
    return int(d[0])
