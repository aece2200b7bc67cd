"""The wavefront engine: the hardware rule of docs/hardware-model.md, in NumPy, no I/O.

Input: a batch of warp requests, each ``warp_size`` lanes of byte addresses and an
active mask. Output: per request the wavefronts it costs, its ideal (the phases
with an active lane, each costing one), the worst bank degree and a cycle estimate.
Every number and choice of the rule (banks, bank bytes, phase bytes, the warp size,
the lanes of a matrix, which ops pair-merge and at which lane distances, the cycle
floors, each atomic class's combining, the ops the profile has rules for) comes from
the :class:`~shmem_cli.hardware.arch.ArchProfile`; this module applies them, and the
numbers below are sm_90's.

Words used here, each in one sense only: a *lane* gives one byte address; a *word*
is 4 bytes (``bank_bytes``) of shared memory, ``word = address // 4``; a word lives
in *bank* ``word % banks``; a *phase* is a set of lanes served together; a
*wavefront* is one pass of the data path, in which each bank delivers one word;
*broadcast* is one word delivered to every lane of a phase that asks for it; *pair
merge* is the widening of a load's phases when its lanes come in equal pairs.

The rule (the specification; ``tests/reference.py`` writes it out lane by lane):

1. Only active lanes take part. For ldmatrix/stmatrix only lanes 8m..8m+7 give
   the row addresses of matrix m; the caller masks the others off (the iteration
   space does it, see :meth:`AccessKind.address_lanes`), and the engine refuses a
   request where they are active.
2. A lane moving ``size`` bytes from address ``a`` asks for the words
   ``a // 4 .. a // 4 + max(1, size // 4) - 1`` (16 bytes for an ldmatrix row).
3. The lanes are cut into phases of consecutive lanes:
   ldmatrix/stmatrix one phase per matrix (lanes 8m..8m+7); accesses (atomics too)
   of 1, 2 or 4 bytes one phase (the whole warp); 8 bytes half-warps; 16 bytes
   quarter-warps (``phase_bytes // size`` lanes each).
4. Pair merge: a load of 8 or 16 bytes whose lane n and lane n^1 (or n and n^2)
   have the same address wherever both are active has phases twice as wide, bank
   conflicts or not (:mod:`~shmem_cli.hardware.pairs`; Nsight's source view counts
   some such loads otherwise: ``RequestStats.source_extra``, from both layouts' phases).
5. A phase costs the most words any one bank must deliver. Lanes asking for the
   same word share it (broadcast), except for atomics that do not combine
   (atomicAdd with a value other than 1 and atomicExch: every lane is its own
   bank access). A phase without an active lane costs nothing.
6. A request costs the sum of its phases' wavefronts; its ways, the costliest phase; it has
   a bank conflict when it costs more than its phases with an active lane. Its ideal is
   those phases, at most ``ceil(active lanes * max(size, 4) / 128)`` but for ldmatrix and
   stmatrix (Nsight's ideal packs the lanes, hardware-model 8). Nsight's Source page has
   another ideal for a pair-merged load, :func:`source_ideal` (``source_ideal_extra``).
7. An atomicAdd whose active lanes all give one address is reduced in one
   wavefront: the compiler's warp reduction (one lane's ``ATOMS``), what a spec's
   ``atomic: add`` means; an ``ATOMS`` that several lanes reach is never reduced (the
   trace charges it as ``exch``).
7a. A compare-and-swap costs two passes: ``ATOMS.CAS`` (``atomic="cas"``) twice the
   cost of the same lanes as an exchange (no lane combines, not even on one word);
   ``ATOMS.CAST.SPIN`` (``"cas_spin"``, the compare-and-swap of the loops nvcc
   emits for float, double, half2 and 64-bit atomics) serves only the first
   wavefront of each phase of the same lanes as a load without pair merge (lanes on
   one word combine: the hardware lets one lane per address try; a 64-bit one in
   half-warps, rule 3), twice: 2 per phase with an active lane. The lanes it does not
   reach fail and retry (the emulator's business). Ideal wavefronts double likewise. A
   generic 64-bit atomic that shared memory declines (``"declined"``) costs that first
   wavefront per phase once: 1 per phase with an active lane.
8. Cycles: a 16-byte load or store spends at least one cycle on each of its
   phases, active or not; any other request, its wavefronts.

One public function, :func:`request_stats`, with two algorithms behind it
(``method=``, in :mod:`~shmem_cli.hardware.phase_ways`), documented and tested
(tests/test_engine_paths.py) to give the same answer:

* ``"word"``: the rule applied literally: each lane's words, the distinct words
  of every (phase, bank) counted;
* ``"unit"``: a lane moving ``size`` bytes from an address aligned to its size
  stays inside one *unit* of ``max(size, 4)`` bytes, ``unit = address // max(size,
  4)``, whose words sit in ``size / 4`` consecutive banks: a *bank set*, bank set
  ``unit % (banks * 4 / max(size, 4))``. Every bank of a set is asked for the same
  units, so a phase costs the most distinct units of any one bank set. One key
  per lane instead of ``size / 4``, small enough for int32: the fast path.
  It covers addresses that are aligned, non-negative and below ``unit << 20``.

``"auto"`` (the default) takes ``"unit"`` where it applies, ``"word"`` elsewhere.
:func:`explain_request` gives the same answer for one request, wavefront by
wavefront, for the tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeAlias

import numpy as np

from ..plumbing.frozen import frozen

if TYPE_CHECKING:
    import numpy.typing as npt

from ..model import BankCell, RequestDetail, Wavefront
from . import ops
from .access_kind import AccessKind
from .arch import ArchProfile
from .pairs import merged_rows, one_address, source_extra, split_phases
from .phase_ways import lane_phases, phase_ways

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"
Method: TypeAlias = Literal["auto", "unit", "word"]

__all__ = [
    "B8",
    "I64",
    "METHODS",
    "AccessKind",
    "Method",
    "RequestStats",
    "explain_request",
    "request_stats",
    "source_ideal",
]

METHODS = ("auto", "unit", "word")


@frozen
class RequestStats:
    """Per-request results for a batch (arrays of one entry per request)."""

    wavefronts: I64
    ideal: I64
    ways: I64
    cycles: I64
    phases: I64  # phases with an active lane (times passes): the cost without a bank conflict
    source_extra: I64  # Nsight's source-view wavefronts less ``wavefronts`` (pairs.source_extra)
    source_ideal_extra: I64  # Nsight's source-view ideal less ``ideal`` (:func:`source_ideal`)


def request_stats(
    addr: I64,
    active: B8,
    kind: AccessKind,
    arch: ArchProfile,
    *,
    method: Method = "auto",
) -> RequestStats:
    """Wavefronts of each request in a batch: ``addr`` and ``active`` are (R, warp_size).

    ``method`` picks the algorithm (module docstring); all give the same answer.
    ``"unit"`` raises ValueError for addresses it does not cover (misaligned,
    negative or too large), which ``"auto"`` sends to ``"word"``. For ldmatrix and
    stmatrix only :meth:`AccessKind.address_lanes` may be active (ValueError else).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    _check_address_lanes(active, kind, arch)
    merged = merged_rows(addr, active, kind.size, kind.op, arch)  # rule 4, asked once
    ways = phase_ways(addr, active, kind, arch, merged, method)
    stats = _summarize(*ways, addr, active, kind, arch)
    if merged.any():
        _source_view(stats, ways[0], np.flatnonzero(merged), addr, active, kind, arch)
        # elsewhere the phases hold no more lanes than a wavefront's bytes: the two agree
        stats.source_ideal_extra[:] = source_ideal(stats, active, kind, arch) - stats.ideal
    return stats


def source_ideal(stats: RequestStats, active: B8, kind: AccessKind, arch: ArchProfile) -> I64:
    """The "L1 Wavefronts Shared Ideal" of Nsight Compute's source page for each request
    (R,): for a plain load or store, its active lanes' bytes in whole 128-byte wavefronts,
    never more than its source-view wavefronts (``wavefronts + source_extra``); any other
    instruction, the engine's ``ideal`` (docs/hardware-model.md section 8). It differs from
    ``ideal`` only on a pair-merged load, whose merged phases hold more lanes than a
    wavefront's worth of its bytes or whose source view counts otherwise."""
    if kind.is_atomic or kind.is_matrix or ops.get(kind.op).copy:
        return stats.ideal
    moved = active.sum(axis=1, dtype=np.int64) * kind.size
    packed: I64 = np.minimum(-(-moved // arch.phase_bytes), stats.wavefronts + stats.source_extra)
    return packed


def _source_view(
    stats: RequestStats,
    ways: I64,
    rows: I64,
    addr: I64,
    active: B8,
    kind: AccessKind,
    arch: ArchProfile,
) -> None:
    """Fill ``stats.source_extra`` for the requests ``rows``, whose phases merge (rule 4),
    from the worst bank degree of their phases merged (``ways``) and, where the source
    counters count a phase unmerged (:func:`~shmem_cli.hardware.pairs.split_phases`),
    unmerged: :func:`~shmem_cli.hardware.pairs.source_extra`."""
    merged_phases = arch.warp_size // (2 * arch.lanes_per_phase(kind.size))
    merged = ways[rows, :merged_phases]
    a, on = addr[rows], active[rows]
    unmerged = np.zeros((len(rows), 2 * merged_phases), dtype=np.int64)
    split = split_phases(merged, a, on, arch)
    hot = np.flatnonzero(split.any(axis=1))  # only these need their phases unmerged
    if len(hot):
        at = rows[hot]
        unmerged[hot] = phase_ways(addr[at], active[at], kind, arch, merge=False)[0]
    stats.source_extra[rows] = source_extra(merged, unmerged, split, a, on, arch)


def _check_address_lanes(active: B8, kind: AccessKind, arch: ArchProfile) -> None:
    if kind.op not in arch.ops:
        raise ValueError(f"{arch.name} has no rule for op {kind.op!r}")
    rows = arch.matrix_rows * kind.matrices
    if kind.is_matrix and active[:, rows:].any():
        raise ValueError(
            f"{kind.op} with {kind.matrices} matrices reads addresses from lanes "
            f"0..{rows - 1} only; AND the active mask with "
            "kind.address_lanes(arch) before calling the engine"
        )


def _summarize(
    ways_per_phase: I64, n_phases: I64, addr: I64, active: B8, kind: AccessKind, arch: ArchProfile
) -> RequestStats:
    """Per-request totals from the worst bank degree of each (request, phase): rules 6-8."""
    rows = addr.shape[0]
    wavefronts = ways_per_phase.sum(axis=1)
    ideal = phases = (ways_per_phase > 0).sum(axis=1)
    ways = ways_per_phase.max(axis=1)
    if kind.uniform_in_one(arch):
        uniform = one_address(addr, active)
        wavefronts = np.where(uniform, 1, wavefronts)
        ways = np.where(uniform, 1, ways)
    rule = arch.atomic_rule(kind.atomic) if kind.is_atomic else None
    passes = 1 if rule is None else rule.passes
    if rule is not None and rule.first_wavefront_only:
        wavefronts = ideal
        ways = np.minimum(ways, 1)
    if not kind.is_matrix:  # rule 6: no more than the active lanes packed into wavefronts
        moved = active.sum(axis=1, dtype=np.int64) * max(kind.size, arch.bank_bytes)
        ideal = np.minimum(phases, -(-moved // arch.phase_bytes))
    wavefronts, ideal, phases = passes * wavefronts, passes * ideal, passes * phases
    floor = None if kind.is_matrix else arch.cycle_floor(kind.size)
    if floor is not None:
        # every phase of the instruction takes its cycles, even one without an active lane
        in_range = np.arange(ways_per_phase.shape[1])[None, :] < n_phases[:, None]
        cycles = np.where(in_range, np.maximum(ways_per_phase, floor), 0).sum(axis=1)
    else:
        cycles = wavefronts
    return RequestStats(
        wavefronts=wavefronts.astype(np.int64, copy=False),
        ideal=ideal.astype(np.int64, copy=False),
        ways=ways.astype(np.int64, copy=False),
        cycles=cycles.astype(np.int64, copy=False),
        phases=phases.astype(np.int64, copy=False),
        source_extra=np.zeros(rows, dtype=np.int64),
        source_ideal_extra=np.zeros(rows, dtype=np.int64),
    )


# --- one request, wavefront by wavefront (for tables and pictures) -----------------------


def explain_request(addr: list[int | None], kind: AccessKind, arch: ArchProfile) -> RequestDetail:
    """Schedule one request's words into wavefronts (same counts as ``request_stats``).

    ``addr`` has one entry per lane (up to ``warp_size``), None for an inactive lane.
    """
    lanes = len(addr)
    a = np.array([x if x is not None else 0 for x in addr], dtype=np.int64)[None, :]
    act = np.array([x is not None for x in addr], dtype=bool)[None, :]
    if lanes < arch.warp_size:
        pad = arch.warp_size - lanes
        a = np.pad(a, ((0, 0), (0, pad)))
        act = np.pad(act, ((0, 0), (0, pad)))
    _check_address_lanes(act, kind, arch)
    phase_of, n_phases = lane_phases(a, act, kind, arch)
    per_phase = arch.warp_size // int(n_phases[0])
    words_per_lane = max(1, kind.size // arch.bank_bytes)
    uniform_add = False
    if kind.uniform_in_one(arch):
        live = [int(x) for x, on in zip(a[0], act[0], strict=True) if on]
        uniform_add = len(set(live)) == 1
    waves: list[Wavefront] = []
    for phase in range(int(n_phases[0])):
        # bank -> its queue of (word, [lanes]) in order of first use
        queues: dict[int, list[tuple[int, list[int]]]] = {}
        for lane in range(arch.warp_size):
            if not act[0, lane] or phase_of[0, lane] != phase:
                continue
            first_word = int(a[0, lane]) // arch.bank_bytes
            for word in range(first_word, first_word + words_per_lane):
                queue = queues.setdefault(word % arch.banks, [])
                if kind.combines_lanes(arch) or uniform_add:
                    for queued, users in queue:
                        if queued == word:
                            users.append(lane)  # a broadcast
                            break
                    else:
                        queue.append((word, [lane]))
                else:
                    queue.append((word, [lane]))
        depth = max((len(q) for q in queues.values()), default=0)
        if uniform_add or (kind.is_atomic and arch.atomic_rule(kind.atomic).first_wavefront_only):
            depth = min(depth, 1)
        for level in range(depth):
            cells = tuple(
                BankCell(bank=bank, word=q[level][0], lanes=tuple(q[level][1]))
                for bank, q in sorted(queues.items())
                if level < len(q)
            )
            waves.append(Wavefront(phase=phase, cells=cells))
    if kind.is_atomic and arch.atomic_rule(kind.atomic).passes > 1:
        # rule 7a: the compare pass, then the swap pass over the same banks
        first = int(n_phases[0])
        waves += [Wavefront(phase=w.phase + first, cells=w.cells) for w in waves]
    return RequestDetail(
        addresses=tuple(int(a[0, i]) if act[0, i] else None for i in range(lanes)),
        wavefronts=tuple(waves),
        phases=int(n_phases[0]),
        lanes_per_phase=per_phase,
        merged_pairs=(not kind.is_matrix and per_phase > arch.lanes_per_phase(kind.size)),
        banks=arch.banks,
    )
