"""A kernel's whole parameter block from a file (``--params @FILE``): the bytes a host program
passes to the launch, as a library makes them.

CUTLASS, CuTe and FlashAttention kernels take one ``Params`` struct by value, holding the
device pointers of the real run, sizes, strides and (Hopper) the TMA descriptors. The host
program that launches the kernel can write those bytes to a file (``fwrite(&params,
sizeof(params), 1, f)`` just before the launch; docs/recipes.md); ``--params @FILE`` gives
them back to the traced launch unchanged, so no field layout has to be known. The pointers
point into global memory the launch did not describe, which the emulator treats as untouched
device memory (:mod:`..emulator.global_memory`).

:func:`tensor_maps_in` finds the ``CUtensorMap``\\ s inside the block: 128 bytes at a
multiple of 64 that decode as a tiled map and hold its own box size where the driver writes
it. They are listed in the report; the emulator reads them from the parameter space as the
TMA instructions do.
"""

from __future__ import annotations

import struct

from ...cuda.launch_values import LaunchError
from ...plumbing.errors import shorten
from . import tensormap
from .buffers import read_buffer


def read_param_block(text: str, size: int, kernel: str, first: int = 0) -> bytes:
    """The ``size`` bytes of ``--params @FILE`` (raw bytes, or a ``.npy`` array's data).

    ``first`` is where the kernel's first parameter starts in the block: a struct holding
    TMA descriptors is placed at a 64- or 128-byte aligned address, so the block may begin
    with a gap the host never wrote. A file of ``size - first`` bytes (``sizeof`` of the
    struct, what a host program dumps) is placed at ``first``."""
    if not text.startswith("@"):
        raise LaunchError(
            f"--params expects @FILE (the bytes of the parameter block), got {shorten(text)!r}"
        )
    data = read_buffer(text[1:], "--params", limit=max(size, 1) + (1 << 16))
    if first and len(data) == size - first:
        return bytes(first) + data
    if len(data) != size:
        also = f" ({size - first:,} from its first parameter on)" if first else ""
        raise LaunchError(
            f"--params {shorten(text[1:])}: {len(data):,} bytes; {kernel}'s parameter block is "
            f"{size:,} bytes{also} (write sizeof() of the struct it takes, or each argument in "
            "turn at its offset: --list-params)"
        )
    return data


def tensor_maps_in(block: bytes, base: int = 0) -> list[tuple[int, tensormap.TensorMap]]:
    """(offset, map) of every tensor map the driver made inside a parameter block whose
    first byte is at ``base`` in the constant bank (maps are 64-byte aligned there)."""
    out = []
    for at in range((-base) % 64, len(block) - tensormap.BYTES + 1, 64):
        raw = block[at : at + tensormap.BYTES]
        try:
            tm = tensormap.decode(raw)
            if tm is None or tm.address == 0 or tm.address % 16:
                continue
            tm.check()
        except (tensormap.TensorMapError, ValueError, KeyError):
            continue
        (box_bytes,) = struct.unpack_from("<I", raw, 64)
        if box_bytes == tm.box_bytes:
            out.append((at, tm))
    return out
