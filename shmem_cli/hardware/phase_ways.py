"""The engine's two ways of counting (:mod:`~shmem_cli.hardware.engine`'s docstring, rules
2-5 and its ``"unit"`` and ``"word"`` methods): each lane's phase, and the worst bank degree
of every (request, phase), which the engine adds up into a request's wavefronts. No I/O."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from .access_kind import AccessKind
from .arch import ArchProfile
from .pairs import merged_rows

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

WORD_BITS = 20  # word bits of a "word" key: covers 4 MiB of shared memory, phase above
UNIT_BITS = 20  # unit bits of a "unit" key (int32: phase above, 31 bits in all)
NO_WORD = np.int64(1) << 40  # "word" key of an inactive lane (sorts last)
NO_UNIT = np.int32(np.iinfo(np.int32).max)  # "unit" key of an inactive lane (sorts last)

__all__ = ["lane_phases", "phase_ways", "phase_ways_by_unit", "phase_ways_by_word"]


def phase_ways(
    addr: I64,
    active: B8,
    kind: AccessKind,
    arch: ArchProfile,
    merge: B8 | bool | None = None,
    method: str = "auto",
) -> tuple[I64, I64]:
    """The worst bank degree of each (request, phase), (R, most phases), and each request's
    phases (R,), by ``method``: "unit", "word", or "auto" (the "unit" method where it
    applies, else the "word" method). "unit" raises ValueError where it does not apply."""
    by_unit = None if method == "word" else phase_ways_by_unit(addr, active, kind, arch, merge)
    if by_unit is None and method == "unit":
        raise ValueError(
            "the unit method needs addresses aligned to the access size, non-negative and "
            "below 2^20 units; use method='word' or 'auto'"
        )
    return by_unit if by_unit is not None else phase_ways_by_word(addr, active, kind, arch, merge)


def lane_phases(
    addr: I64, active: B8, kind: AccessKind, arch: ArchProfile, merge: B8 | bool | None = None
) -> tuple[I64, I64]:
    """The phase of every lane and the number of phases of every request (R,).

    The phases are (R, warp_size), or (1, warp_size) when every request splits its
    lanes the same way (rules 3 and 4 of the engine's docstring; ``merge``, True, False or
    one flag per request, is rule 4's answer for an 8- or 16-byte access where known).
    """
    rows = addr.shape[0]
    lanes = np.arange(arch.warp_size, dtype=np.int64)
    if kind.is_matrix:
        matrix = lanes // arch.matrix_rows
        return matrix[None, :], np.full(rows, kind.matrices, dtype=np.int64)
    if kind.size <= arch.bank_bytes:
        return np.zeros((1, arch.warp_size), dtype=np.int64), np.ones(rows, dtype=np.int64)
    per_phase = arch.lanes_per_phase(kind.size)
    if merge is None:
        merged = merged_rows(addr, active, kind.size, kind.op, arch)
    else:
        merged = np.broadcast_to(np.asarray(merge, dtype=bool), (rows,))
    if merged.any():
        per_row = np.where(merged, 2 * per_phase, per_phase)
        return lanes[None, :] // per_row[:, None], arch.warp_size // per_row
    return (lanes // per_phase)[None, :], np.full(rows, arch.warp_size // per_phase, dtype=np.int64)


def phase_ways_by_unit(
    addr: I64, active: B8, kind: AccessKind, arch: ArchProfile, merge: B8 | bool | None = None
) -> tuple[I64, I64] | None:
    """The "unit" method: distinct units per (phase, bank set); None where it does not apply
    (``merge``: :func:`lane_phases`)."""
    rows = addr.shape[0]
    unit_bytes = max(kind.size, arch.bank_bytes)
    bank_sets = arch.banks * arch.bank_bytes // unit_bytes
    all_active = bool(active.all())
    live_addr = addr if all_active else np.where(active, addr, 0)
    # the OR of all addresses shows at once whether any is negative, too large or misaligned
    seen_bits = int(np.bitwise_or.reduce(live_addr, axis=None)) if addr.size else 0
    words_per_unit = unit_bytes // arch.bank_bytes
    aligned = (seen_bits // arch.bank_bytes) % words_per_unit == 0  # first word of a unit
    if not (_power_of_two(unit_bytes) and _power_of_two(bank_sets) and aligned):
        return None
    if not 0 <= seen_bits < unit_bytes << UNIT_BITS:
        return None

    phase, n_phases = lane_phases(addr, active, kind, arch, merge)
    max_phases = int(n_phases.max()) if rows else 1
    unit = (live_addr // unit_bytes).astype(np.int32)
    if kind.combines_lanes(arch):
        # sort (phase, unit) keys so that lanes asking for the same unit are neighbours
        key = (phase.astype(np.int32) << UNIT_BITS) | unit
        if not all_active:
            key = np.where(active, key, NO_UNIT)
        key.sort(axis=1)
        counted = np.empty(key.shape, dtype=bool)
        counted[:, 0] = True
        np.not_equal(key[:, 1:], key[:, :-1], out=counted[:, 1:])
        if not all_active:
            counted &= key != NO_UNIT
        # the sorted keys are (phase, unit) again; only the unit's low bits (its bank
        # set) are used below, so the phase bits above UNIT_BITS need no masking
        phase, unit = key >> UNIT_BITS, key
    else:
        counted = np.broadcast_to(active, addr.shape)
    # one counter per (request, bank set, phase)
    bins = bank_sets * max_phases
    counter = (
        np.arange(0, rows * bins, bins, dtype=np.int64)[:, None]
        + (unit & (bank_sets - 1)) * max_phases
        + phase
    )
    counts = np.bincount(counter[counted], minlength=rows * bins).reshape(
        rows, bank_sets, max_phases
    )
    return _worst_bank_set(counts), n_phases


def _worst_bank_set(counts: I64) -> I64:
    """(R, bank sets, phases) -> (R, phases): the busiest bank set of each phase."""
    if counts.shape[2] == 1:
        most: I64 = counts.max(axis=1)
        return most
    # halving the bank sets keeps every step one vectorized maximum over whole rows of phases
    while counts.shape[1] > 1:
        half = counts.shape[1] // 2
        counts = np.maximum(counts[:, :half], counts[:, half:])
    return counts[:, 0]


def phase_ways_by_word(
    addr: I64, active: B8, kind: AccessKind, arch: ArchProfile, merge: B8 | bool | None = None
) -> tuple[I64, I64]:
    """The "word" method: each lane's words, the distinct words of every (phase, bank); the
    worst bank of each (request, phase) and each request's phases (``merge``: lane_phases)."""
    rows = addr.shape[0]
    phase, n_phases = lane_phases(addr, active, kind, arch, merge)
    words_per_lane = max(1, kind.size // arch.bank_bytes)
    word = addr // arch.bank_bytes
    key = (phase << WORD_BITS) + word
    key = np.where(active, key, NO_WORD)
    if words_per_lane > 1:
        key = key[:, :, None] + np.arange(words_per_lane, dtype=np.int64)[None, None, :]
        key = np.where(active[:, :, None], key, NO_WORD)
    key = key.reshape(rows, -1)
    if kind.combines_lanes(arch):
        key = np.sort(key, axis=1)
        keep = np.ones(key.shape, dtype=bool)
        keep[:, 1:] = key[:, 1:] != key[:, :-1]
        keep &= key != NO_WORD
    else:
        keep = key < NO_WORD
    row_idx = np.nonzero(keep)[0]
    kept = key[keep]
    bucket = (kept >> WORD_BITS) * arch.banks + (kept & ((1 << WORD_BITS) - 1)) % arch.banks
    max_phases = int(n_phases.max()) if rows else 1
    bins = max_phases * arch.banks
    counts = np.bincount(row_idx * bins + bucket, minlength=rows * bins).reshape(
        rows, max_phases, arch.banks
    )
    most: I64 = counts.max(axis=2)
    return most, n_phases


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0
