"""The wavefront engine: pure NumPy, no I/O.

Input: a batch of warp-level requests, each 32 lanes of byte addresses and an
active mask. Output: per request the wavefronts it costs, the ideal (its
phases with active lanes, each conflict-free), the worst bank degree and a cycle
estimate. The rules come from :mod:`shmem_cli.arch`; ``explain_request`` gives the
same answer for one request lane by lane, for the tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from .arch import ArchProfile

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

WORD_BITS = 20  # word index bits inside a sort key: covers 4 MiB of shared memory
SENTINEL = np.int64(1) << 40
MAX_GROUPS = 4
SLOT_BITS = 20  # slot index bits inside a fast-path key (int32: phase above, 31 bits in all)
INACTIVE = np.int32(np.iinfo(np.int32).max)  # fast-path key of an inactive lane (sorts last)

OPS = ("load", "store", "atomic", "ldmatrix", "stmatrix")
MATRIX_OPS = ("ldmatrix", "stmatrix")
ATOMIC_KINDS = ("inc", "add", "exch")


def matrix_address_lanes(matrices: int, warp_size: int) -> B8:
    """ldmatrix/stmatrix: the lanes whose addresses count, (1, warp_size).

    Lanes 8m..8m+7 give the row addresses of matrix m; the other lanes' addresses are ignored.
    """
    return (np.arange(warp_size) < 8 * matrices)[None, :]


@dataclass(frozen=True)
class AccessKind:
    """What one lane of the instruction does."""

    op: str  # one of OPS
    size: int  # bytes per lane (16 for ldmatrix/stmatrix rows)
    atomic: str = "inc"
    matrices: int = 1

    @property
    def is_matrix(self) -> bool:
        return self.op in MATRIX_OPS

    @property
    def combines_lanes(self) -> bool:
        """Whether lanes on the same word share one bank access."""
        return not (self.op == "atomic" and self.atomic in ("add", "exch"))


@dataclass(frozen=True)
class RequestStats:
    """Per-request results for a batch (arrays of one entry per request)."""

    wavefronts: I64
    ideal: I64
    ways: I64
    cycles: I64


def phase_groups(addr: I64, active: B8, kind: AccessKind, arch: ArchProfile) -> tuple[I64, I64]:
    """The phase of every lane and the number of phases of every request (R,).

    The phases are (R, 32), or (1, 32) when every request splits its lanes the same way.
    """
    rows = addr.shape[0]
    lanes = np.arange(arch.warp_size, dtype=np.int64)
    if kind.is_matrix:
        return (lanes // 8)[None, :], np.full(rows, kind.matrices, dtype=np.int64)
    if kind.op == "atomic" or kind.size <= arch.bank_bytes:
        return np.zeros((1, arch.warp_size), dtype=np.int64), np.ones(rows, dtype=np.int64)
    per_phase = arch.lanes_per_phase(kind.size)
    if kind.op == "load" and arch.pair_merge_loads:
        merged = lanes_pair_up(addr, active, 1) | lanes_pair_up(addr, active, 2)
        if merged.any():
            per_row = np.where(merged, 2 * per_phase, per_phase)
            return lanes[None, :] // per_row[:, None], arch.warp_size // per_row
    return (lanes // per_phase)[None, :], np.full(rows, arch.warp_size // per_phase, dtype=np.int64)


def lanes_pair_up(addr: I64, active: B8, distance: int) -> B8:
    """Rows where lane n and lane n^distance read the same address wherever both are active."""
    # most rows already differ in lanes 0 and 0^distance: check the others in full
    pairs: B8 = (addr[:, 0] == addr[:, distance]) | ~(active[:, 0] & active[:, distance])
    rows = np.flatnonzero(pairs)
    if len(rows):
        # view the lanes as (pairs, 2, distance): [:, :, 0] holds lane n, [:, :, 1] lane n^distance
        shape = (len(rows), -1, 2, distance)
        a, on = addr[rows].reshape(shape), active[rows].reshape(shape)
        same = (a[:, :, 0] == a[:, :, 1]) | ~(on[:, :, 0] & on[:, :, 1])
        pairs[rows] = same.all(axis=(1, 2))
    return pairs


def request_stats(addr: I64, active: B8, kind: AccessKind, arch: ArchProfile) -> RequestStats:
    """Wavefronts of each request in a batch: ``addr`` and ``active`` are (R, 32).

    This fast path counts *slots* rather than words. A lane moving ``size`` bytes
    from an address aligned to its size (the layout guarantees it) stays inside one
    slot of ``unit = max(size, 4)`` bytes, ``slot = addr // unit``: the ``unit / 4``
    consecutive banks of bank group ``slot % groups``. Every bank of a group is
    asked for the same slots, so a phase costs the most distinct slots of any one
    group (the most lanes, for atomics that do not combine). That is exactly the
    word-by-word count of :func:`request_stats_by_word`, which also serves the
    inputs this path does not cover (misaligned, negative or huge addresses);
    tests/test_engine_paths.py checks that both agree.
    """
    rows, lanes = addr.shape
    if kind.is_matrix:
        active = active & matrix_address_lanes(kind.matrices, lanes)
    unit = max(kind.size, arch.bank_bytes)
    groups = arch.banks * arch.bank_bytes // unit
    all_active = bool(active.all())
    live_addr = addr if all_active else np.where(active, addr, 0)
    # the OR of all addresses shows at once whether any is negative, too large or misaligned
    seen_bits = int(np.bitwise_or.reduce(live_addr, axis=None)) if addr.size else 0
    words_per_slot = unit // arch.bank_bytes
    aligned = (seen_bits // arch.bank_bytes) % words_per_slot == 0  # first word of a slot
    if not (_power_of_two(unit) and _power_of_two(groups) and aligned):
        return request_stats_by_word(addr, active, kind, arch)
    if not 0 <= seen_bits < unit << SLOT_BITS:
        return request_stats_by_word(addr, active, kind, arch)

    phase, n_phases = phase_groups(addr, active, kind, arch)
    max_phases = int(n_phases.max()) if rows else 1
    slot = (live_addr // unit).astype(np.int32)
    if kind.combines_lanes:
        # sort (phase, slot) keys so that lanes asking for the same slot are neighbours
        key = (phase.astype(np.int32) << SLOT_BITS) | slot
        if not all_active:
            key = np.where(active, key, INACTIVE)
        key.sort(axis=1)
        counted = np.empty(key.shape, dtype=bool)
        counted[:, 0] = True
        np.not_equal(key[:, 1:], key[:, :-1], out=counted[:, 1:])
        if not all_active:
            counted &= key != INACTIVE
        # the sorted keys are (phase, slot) again; only the slot's low bits (its bank
        # group) are used below, so the phase bits above SLOT_BITS need no masking
        phase, slot = key >> SLOT_BITS, key
    else:
        counted = np.broadcast_to(active, addr.shape)
    # one counter per (request, bank group, phase)
    bins = groups * max_phases
    counter = (
        np.arange(0, rows * bins, bins, dtype=np.int64)[:, None]
        + (slot & (groups - 1)) * max_phases
        + phase
    )
    counts = np.bincount(counter[counted], minlength=rows * bins).reshape(rows, groups, max_phases)
    return _summarize(_max_over_groups(counts), n_phases, addr, active, kind, arch)


def _max_over_groups(counts: I64) -> I64:
    """(R, groups, phases) -> (R, phases), the worst bank group of each phase."""
    if counts.shape[2] == 1:
        most: I64 = counts.max(axis=1)
        return most
    # halving the groups keeps every step one vectorized maximum over whole rows of phases
    while counts.shape[1] > 1:
        half = counts.shape[1] // 2
        counts = np.maximum(counts[:, :half], counts[:, half:])
    return counts[:, 0]


def request_stats_by_word(
    addr: I64, active: B8, kind: AccessKind, arch: ArchProfile
) -> RequestStats:
    """The rule applied literally, word by word: each lane's ``size / 4`` words, the
    distinct words of every (phase, bank) counted. Same result as :func:`request_stats`."""
    rows = addr.shape[0]
    if kind.is_matrix:
        active = active & matrix_address_lanes(kind.matrices, arch.warp_size)
    group, n_phases = phase_groups(addr, active, kind, arch)
    words_per_lane = max(1, kind.size // arch.bank_bytes)
    word = addr // arch.bank_bytes
    key = (group << WORD_BITS) + word
    key = np.where(active, key, SENTINEL)
    if words_per_lane > 1:
        key = key[:, :, None] + np.arange(words_per_lane, dtype=np.int64)[None, None, :]
        key = np.where(active[:, :, None], key, SENTINEL)
    key = key.reshape(rows, -1)
    if kind.combines_lanes:
        key = np.sort(key, axis=1)
        keep = np.ones(key.shape, dtype=bool)
        keep[:, 1:] = key[:, 1:] != key[:, :-1]
        keep &= key != SENTINEL
    else:
        keep = key < SENTINEL
    row_idx = np.nonzero(keep)[0]
    kept = key[keep]
    bucket = (kept >> WORD_BITS) * arch.banks + (kept & ((1 << WORD_BITS) - 1)) % arch.banks
    counts = np.bincount(
        row_idx * (MAX_GROUPS * arch.banks) + bucket, minlength=rows * MAX_GROUPS * arch.banks
    ).reshape(rows, MAX_GROUPS, arch.banks)
    return _summarize(counts.max(axis=2), n_phases, addr, active, kind, arch)


def _summarize(
    ways_per_phase: I64, n_phases: I64, addr: I64, active: B8, kind: AccessKind, arch: ArchProfile
) -> RequestStats:
    """Per-request totals from the worst bank degree of each (request, phase)."""
    rows = addr.shape[0]
    wavefronts = ways_per_phase.sum(axis=1)
    ideal = (ways_per_phase > 0).sum(axis=1)
    ways = ways_per_phase.max(axis=1)
    if kind.op == "atomic" and kind.atomic == "add":
        first = np.argmax(active, axis=1)
        lead = addr[np.arange(rows), first]
        uniform = np.all((addr == lead[:, None]) | ~active, axis=1) & active.any(axis=1)
        wavefronts = np.where(uniform, 1, wavefronts)
        ways = np.where(uniform, 1, ways)
    if kind.size == 16 and not kind.is_matrix:
        # every phase of the instruction takes a cycle, even one without an active lane
        in_range = np.arange(ways_per_phase.shape[1])[None, :] < n_phases[:, None]
        floor = arch.min_cycles_per_16b_phase
        cycles = np.where(in_range, np.maximum(ways_per_phase, floor), 0).sum(axis=1)
    else:
        cycles = wavefronts
    return RequestStats(
        wavefronts=wavefronts.astype(np.int64, copy=False),
        ideal=ideal.astype(np.int64, copy=False),
        ways=ways.astype(np.int64, copy=False),
        cycles=cycles.astype(np.int64, copy=False),
    )


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


# --- one request, lane by lane (for tables and pictures) ------------------------------


@dataclass(frozen=True)
class Cell:
    """One bank in one wavefront: the word it delivers and the lanes that get it."""

    bank: int
    word: int
    lanes: tuple[int, ...]


@dataclass(frozen=True)
class Wavefront:
    """One cycle of the shared-memory pipe: the phase it serves and its bank cells."""

    phase: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class RequestDetail:
    """A request explained: its lanes' addresses and its wavefronts in order."""

    addresses: tuple[int | None, ...]  # per lane, None when inactive
    wavefronts: tuple[Wavefront, ...]
    phases: int
    lanes_per_phase: int
    merged_pairs: bool


def explain_request(addr: list[int | None], kind: AccessKind, arch: ArchProfile) -> RequestDetail:
    """Schedule one request's words into wavefronts (same counts as ``request_stats``)."""
    lanes = len(addr)
    a = np.array([x if x is not None else 0 for x in addr], dtype=np.int64)[None, :]
    act = np.array([x is not None for x in addr], dtype=bool)[None, :]
    if lanes < arch.warp_size:
        pad = arch.warp_size - lanes
        a = np.pad(a, ((0, 0), (0, pad)))
        act = np.pad(act, ((0, 0), (0, pad)))
    if kind.is_matrix:
        act = act & matrix_address_lanes(kind.matrices, arch.warp_size)
    group, n_phases = phase_groups(a, act, kind, arch)
    per_phase = arch.warp_size // int(n_phases[0])
    words_per_lane = max(1, kind.size // arch.bank_bytes)
    uniform_add = False
    if kind.op == "atomic" and kind.atomic == "add":
        live = [int(x) for x, on in zip(a[0], act[0], strict=True) if on]
        uniform_add = len(set(live)) == 1
    waves: list[Wavefront] = []
    for g in range(int(n_phases[0])):
        # bank -> list of (word, [lanes]) in order of first use
        per_bank: dict[int, list[tuple[int, list[int]]]] = {}
        for lane in range(arch.warp_size):
            if not act[0, lane] or group[0, lane] != g:
                continue
            base = int(a[0, lane]) // arch.bank_bytes
            for k in range(words_per_lane):
                w = base + k
                slots = per_bank.setdefault(w % arch.banks, [])
                if kind.combines_lanes or uniform_add:
                    for word, users in slots:
                        if word == w:
                            users.append(lane)
                            break
                    else:
                        slots.append((w, [lane]))
                else:
                    slots.append((w, [lane]))
        depth = max((len(s) for s in per_bank.values()), default=0)
        if uniform_add:
            depth = min(depth, 1)
        for level in range(depth):
            cells = tuple(
                Cell(bank=b, word=s[level][0], lanes=tuple(s[level][1]))
                for b, s in sorted(per_bank.items())
                if level < len(s)
            )
            waves.append(Wavefront(phase=g, cells=cells))
    return RequestDetail(
        addresses=tuple(int(a[0, i]) if act[0, i] else None for i in range(lanes)),
        wavefronts=tuple(waves),
        phases=int(n_phases[0]),
        lanes_per_phase=per_phase,
        merged_pairs=(not kind.is_matrix and per_phase > arch.lanes_per_phase(kind.size)),
    )
