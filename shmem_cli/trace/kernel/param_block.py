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


def read_param_block(text: str, size: int, kernel: str) -> bytes:
    """The ``size`` bytes of ``--params @FILE`` (raw bytes, or a ``.npy`` array's data)."""
    if not text.startswith("@"):
        raise LaunchError(
            f"--params expects @FILE (the bytes of the parameter block), got {shorten(text)!r}"
        )
    data = read_buffer(text[1:], "--params", limit=max(size, 1) + (1 << 16))
    if len(data) != size:
        raise LaunchError(
            f"--params {shorten(text[1:])}: {len(data):,} bytes; {kernel}'s parameter block is "
            f"{size:,} bytes (write sizeof() of the struct it takes, or each argument in turn "
            "at its offset: --list-params)"
        )
    return data


def tensor_maps_in(block: bytes) -> list[tuple[int, tensormap.TensorMap]]:
    """(offset, map) of every tensor map the driver made inside a parameter block."""
    out = []
    for at in range(0, len(block) - tensormap.BYTES + 1, 64):
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
