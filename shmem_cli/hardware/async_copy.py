"""The cp.async (LDGSTS) wavefront rule, as measured on the H200.

``cp.async`` copies global memory into shared memory without a register. Nsight Compute
has no wavefront counter of its own for it; the truth is the total shared wavefront
counter less the ld, st, atom, misc, gmma and ipa parts, measured for 54 launches of
the project's own kernels (``tests/data/trace/measured.json``, ``cp_*``). What it shows:

* ``cp.async.ca`` (``LDGSTS.E``, ``.64``, ``.128``: cached in L1) costs, per request, the
  most of three figures: its shared side, a store of its width (the ordinary phase rule
  of :mod:`shmem_cli.hardware.engine`); its global side, read from the L1 data banks like a store
  of its width over the *global* addresses (lanes 128 bytes apart in global memory
  conflict although their shared addresses do not); and the distinct 128-byte global
  lines divided by ``async_copy_lines_per_wavefront`` (4), rounded up (a warp whose 32
  lanes read 32 different lines costs 8 even when no bank is shared). Lanes that copy
  no source byte (``src-size`` 0: all zero fill) take no part in the global figures.
* ``cp.async.cg`` (``LDGSTS.E.BYPASS.128``: the data comes from L2, not through L1)
  costs nothing in the shared pipe for lanes that copy their 16 bytes; lanes with zero
  fill (``src-size`` below 16) write their zeros like a 16-byte store.

Agreement: 51 of 54 launches exact. The exceptions are ``.ca`` copies whose every lane
reads its own global line at a stride that is no power of two (132, 136 and 144
bytes): the hardware took up to 1.7x the figure above (4-byte 17 vs 16, 8-byte 20 vs 16,
16-byte 27 vs 16 over two requests). Contiguous and power-of-two global strides, the
patterns of real tiled kernels, are exact.
"""

from __future__ import annotations

import numpy as np

from . import ops
from .arch import ArchProfile
from .engine import B8, I64, AccessKind, RequestStats, request_stats


def async_copy_stats(
    shared: I64,
    global_: I64,
    active: B8,
    copies_source: B8,
    size: int,
    bypass: bool,
    arch: ArchProfile,
) -> RequestStats:
    """Wavefronts of each cp.async request, all arrays (R, warp_size).

    ``shared`` and ``global_`` are each lane's byte addresses on both sides, ``active``
    the lanes that execute it, ``copies_source`` the lanes that read at least one
    source byte (``src-size`` > 0), ``size`` the bytes per lane (4, 8 or 16) and
    ``bypass`` whether it is ``LDGSTS.E.BYPASS`` (``cp.async.cg``).
    """
    store = AccessKind(op=ops.STORE.name, size=size)  # its shared side: a store of its width
    if bypass:
        # only the lanes that zero-fill part of their 16 bytes write through the pipe;
        # the caller marks them with copies_source False or a partial size
        return request_stats(shared, active & ~copies_source, store, arch)
    shared_side = request_stats(shared, active, store, arch)
    reading = active & copies_source
    line_index, lines = _line_ranks(global_, reading, arch.l1_line_bytes)
    # the same banks and distinct words, in addresses small enough for the engine
    packed = line_index * arch.l1_line_bytes + global_ % arch.l1_line_bytes
    global_side = request_stats(packed, reading, store, arch)
    per_line = -(-lines // arch.async_copy_lines_per_wavefront)
    wavefronts = np.maximum(np.maximum(shared_side.wavefronts, global_side.wavefronts), per_line)
    return RequestStats(
        wavefronts=wavefronts,
        ideal=shared_side.ideal,
        ways=np.maximum(shared_side.ways, global_side.ways),
        cycles=np.maximum(shared_side.cycles, wavefronts),
        phases=shared_side.phases,
        source_extra=np.zeros_like(wavefronts),
        source_ideal_extra=np.zeros_like(wavefronts),
    )


def _line_ranks(addr: I64, active: B8, line_bytes: int) -> tuple[I64, I64]:
    """Each lane's global line renumbered 0, 1, ... within its request, and the count (R,).

    Inactive lanes get rank 0 (they are masked off wherever the ranks are used).
    """
    lines = np.where(active, addr // line_bytes, np.iinfo(np.int64).max)
    order = np.argsort(lines, axis=1, kind="stable")
    ordered = np.take_along_axis(lines, order, axis=1)
    new = np.zeros(ordered.shape, dtype=np.int64)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ranks_sorted = np.cumsum(new, axis=1)
    ranks = np.empty_like(ranks_sorted)
    np.put_along_axis(ranks, order, ranks_sorted, axis=1)
    live = np.take_along_axis(active, order, axis=1)
    count: I64 = np.where(
        live.any(axis=1), ranks_sorted[np.arange(len(addr)), live.sum(axis=1) - 1] + 1, 0
    )
    return np.where(active, ranks, 0), count
