"""What distributed shared memory traffic costs on the H200: 32-byte sectors over the
crossbar, and a remote atomic's ``op_atom`` wavefronts (docs/hardware-model.md, 9d;
tests/data/trace/cluster, tests/data/trace/dsmrule and tests/data/trace/miscops), the
``op_atom`` wavefronts of every generic atomic that the CTA's own shared memory does not
serve (:func:`generic_atom_wavefronts`: a remote one, one on global memory, one that shared
memory declines; docs/hardware-model.md 9e, tests/data/trace/genatom).

A remote access (another CTA's shared memory in the cluster) has no load or store
wavefronts. A remote atomic (``atom``/``red.shared::cluster`` on another CTA, a generic
``ATOM.E``) costs one ``op_atom`` wavefront per warp execution per 4 bytes of operands a
lane sends: 1 for a 32-bit add or reduction, 2 for a 64-bit add or a 32-bit
compare-and-swap, 4 for a 64-bit compare-and-swap. Counted by phases: a 64-bit operand
is sent by half-warps (as a local 8-byte access is, docs/hardware-model.md section 3), so a
warp pays one per phase with a lane on, twice for a compare-and-swap (one lane of a 64-bit
add costs 1, of a 64-bit compare-and-swap 2). A generic ``ATOM`` on global memory pays the
same (measured: 1 a warp for a 32-bit add, 2 for a 64-bit one), and so does one that shared
memory declines (a 32-bit float, half2 or bf16x2 add: 1 a warp, beside its fall-back's own
wavefronts), none of it in the instruction's source-counter row; a 64-bit one declined on
the CTA's own memory is a request of the ``declined`` class instead (the same 1 a phase, on
its row: :mod:`.arch`).

Per warp request a remote access moves, counted per destination CTA and 32-byte sector:

* a load: one sector per distinct sector its lanes read;
* a store: one per sector written where its bytes lie within one of the sector's two
  16-byte halves, or fill the sector while the request fills another sector of the same
  128-byte line of that CTA; else two (whatever the gaps, the access width or the lanes
  and their order: a filled sector beside none in its line moves two, beside a half
  written or in another line too);
* an atomic (or a reduction, 32- or 64-bit, compare-and-swap too): two per sector and
  lane on its busiest word (lanes on one word are served one after another; lanes on
  different words of a sector together).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arch import SM90


def sectors(warps: Any, at: Any, width: int, op: str, ctas: Any = None) -> int:
    """The sectors the lanes of ``warps`` (each lane's warp) moved at byte offsets ``at``
    (each lane's, ``width`` bytes; offsets that name the destination CTA too: each CTA's
    memory at its own offsets), for ``op`` ``ld``, ``st`` or ``atom``; ``ctas`` (each
    lane's destination CTA; one CTA for all where not given) tells a store's lone sectors."""
    size = SM90.dsmem_sector_bytes
    warps = np.asarray(warps, dtype=np.int64)
    at = np.asarray(at, dtype=np.int64)
    if not len(at):
        return 0
    sector = at // size
    if op == "ld":
        return len(np.unique(_key(warps, sector)))
    if op == "atom":
        pair = _key(warps, sector)
        _, first, counts = np.unique(_key(pair, at), return_index=True, return_counts=True)
        owner = np.unique(pair[first], return_inverse=True)[1].ravel()
        busiest = np.zeros(len(at), np.int64)  # per (warp, sector): its busiest word's lanes
        np.maximum.at(busiest, owner, counts)
        return 2 * int(busiest.sum())
    ctas = np.zeros(len(at), np.int64) if ctas is None else np.asarray(ctas, np.int64)
    return _store_sectors(warps, at, width, ctas)


def _key(a: Any, b: Any) -> Any:
    """One int64 per lane, equal where both ``a`` and ``b`` are: a 1-D key sorts fast where
    ``np.unique(..., axis=1)`` sorts rows as bytes (8 ms a step of a 16-CTA cluster's
    16,384 lanes). ``a * span + b`` where that fits, else their ranks combined."""
    lo_a, lo_b = int(a.min()), int(b.min())
    span = int(b.max()) - lo_b + 1
    if (int(a.max()) - lo_a + 1) * span < 1 << 62:
        fits: Any = (a - lo_a) * span + (b - lo_b)
        return fits
    a_rank = np.unique(a, return_inverse=True)[1].ravel()
    b_rank = np.unique(b, return_inverse=True)[1].ravel()
    ranks: Any = a_rank.astype(np.int64) * len(a) + b_rank
    return ranks


def _store_sectors(warps: Any, at: Any, width: int, ctas: Any) -> int:
    """A store's sectors: per warp and sector, 1 where the bytes written lie within one
    half of it, or fill it while the warp fills another sector of that CTA's same line,
    else 2."""
    size, half = SM90.dsmem_sector_bytes, SM90.dsmem_store_half_bytes
    per_line = SM90.dsmem_store_line_bytes // size
    written = (at[:, None] + np.arange(width)[None, :]).ravel()
    owner = np.repeat(warps, width)
    sector = written // size
    cta = np.repeat(ctas, width)
    # per (warp, sector), the CTA aside: how many distinct bytes it writes, in how many halves
    pair = _key(owner, sector)
    group = np.unique(pair, return_inverse=True)[1].ravel()
    groups = int(group.max()) + 1

    def distinct(values: Any) -> Any:  # per group, how many distinct ``values`` it has
        return np.bincount(group[np.unique(_key(pair, values), return_index=True)[1]], None, groups)

    nbytes, halves = distinct(written), distinct(written // half)
    # each (warp, CTA, sector) written once; how many filled sectors its line of that CTA has
    first = np.unique(_key(_key(owner, cta), sector), return_index=True)[1]
    mine = group[first]
    filled = nbytes[mine] == size
    line = np.unique(
        _key(_key(owner[first], cta[first]), sector[first] // per_line), return_inverse=True
    )[1].ravel()
    filled_in_line = np.bincount(line, filled.astype(np.int64))
    paired = filled & (filled_in_line[line] > 1)
    return int(np.where((halves[mine] == 1) | paired, 1, 2).sum())


def generic_atom_wavefronts(warps: Any, lanes: Any, width: int, operands: int = 1) -> int:
    """The ``op_atom`` wavefronts of a generic atomic (or a remote reduction) that the CTA's
    own shared memory does not serve (on another CTA's shared memory, on global memory, or
    declined there) whose active lanes are ``lanes`` (each lane's number in its warp
    ``warps``), ``width`` bytes a lane and ``operands`` operands (2 for a compare-and-swap):
    ``operands`` per phase with a lane on, the phases being the warp for 4-byte lanes, its
    half-warps for 8-byte ones and its quarter-warps for 16-byte ones, so a full warp costs a
    lane's operand bytes over 4 (measured on global memory for every operation, partial warps,
    one half-warp of 64-bit lanes and lanes on one word alike: tests/data/trace/genatom2)."""
    if not len(lanes):
        return 0
    per_phase = SM90.warp_size * 4 // width
    phases = np.unique(_key(np.asarray(warps), np.asarray(lanes) // per_phase))
    return operands * len(phases)
