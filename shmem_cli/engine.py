"""The wavefront engine: pure NumPy, no I/O.

Input: a batch of warp-level requests, each 32 lanes of byte addresses and an
active mask. Output: per request the wavefronts it costs, the ideal (its
phases with active lanes, each conflict-free), the worst bank degree and a cycle
estimate. The rules come from :mod:`shmem_cli.arch`; ``explain_request`` gives the
same answer for one request lane by lane, for the tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .arch import ArchProfile

I64 = npt.NDArray[np.int64]
B8 = npt.NDArray[np.bool_]

WORD_BITS = 20  # word index bits inside a sort key: covers 4 MiB of shared memory
SENTINEL = np.int64(1) << 40
MAX_GROUPS = 4

OPS = ("load", "store", "atomic", "ldmatrix", "stmatrix")
ATOMIC_KINDS = ("inc", "add", "exch")


@dataclass(frozen=True)
class AccessKind:
    """What one lane of the instruction does."""

    op: str  # one of OPS
    size: int  # bytes per lane (16 for ldmatrix/stmatrix rows)
    atomic: str = "inc"
    matrices: int = 1

    @property
    def is_matrix(self) -> bool:
        return self.op in ("ldmatrix", "stmatrix")

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
    """The phase of every lane (R, 32) and the number of phases of every request (R,)."""
    rows = addr.shape[0]
    lanes = np.arange(arch.warp_size, dtype=np.int64)
    if kind.is_matrix:
        group = np.broadcast_to(lanes // 8, addr.shape)
        return group, np.full(rows, kind.matrices, dtype=np.int64)
    if kind.op == "atomic" or kind.size <= arch.bank_bytes:
        return np.zeros(addr.shape, dtype=np.int64), np.ones(rows, dtype=np.int64)
    per_phase = np.full(rows, arch.lanes_per_phase(kind.size), dtype=np.int64)
    if kind.op == "load" and arch.pair_merge_loads:
        merged = lanes_pair_up(addr, active, 1) | lanes_pair_up(addr, active, 2)
        per_phase = np.where(merged, per_phase * 2, per_phase)
    group = lanes[None, :] // per_phase[:, None]
    return group, arch.warp_size // per_phase


def lanes_pair_up(addr: I64, active: B8, distance: int) -> B8:
    """Rows where lane n and lane n^distance read the same address wherever both are active."""
    partner = np.arange(addr.shape[1]) ^ distance
    both = active & active[:, partner]
    same = addr == addr[:, partner]
    paired: B8 = np.all(same | ~both, axis=1)
    return paired


def request_stats(addr: I64, active: B8, kind: AccessKind, arch: ArchProfile) -> RequestStats:
    """Wavefronts of each request in a batch: ``addr`` and ``active`` are (R, 32)."""
    rows = addr.shape[0]
    if kind.is_matrix:
        active = active & (np.arange(arch.warp_size) < 8 * kind.matrices)[None, :]
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
    ways_g = counts.max(axis=2)
    wavefronts = ways_g.sum(axis=1)
    ideal = (ways_g > 0).sum(axis=1)
    ways = ways_g.max(axis=1)
    if kind.op == "atomic" and kind.atomic == "add":
        first = np.argmax(active, axis=1)
        lead = addr[np.arange(rows), first]
        uniform = np.all((addr == lead[:, None]) | ~active, axis=1) & active.any(axis=1)
        wavefronts = np.where(uniform, 1, wavefronts)
        ways = np.where(uniform, 1, ways)
    if kind.size == 16 and not kind.is_matrix:
        in_range = np.arange(MAX_GROUPS)[None, :] < n_phases[:, None]
        cycles = np.where(in_range, np.maximum(ways_g, arch.min_cycles_per_16b_phase), 0).sum(axis=1)
    else:
        cycles = wavefronts
    return RequestStats(
        wavefronts=wavefronts.astype(np.int64),
        ideal=ideal.astype(np.int64),
        ways=ways.astype(np.int64),
        cycles=cycles.astype(np.int64),
    )


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


def explain_request(
    addr: list[int | None], kind: AccessKind, arch: ArchProfile
) -> RequestDetail:
    """Schedule one request's words into wavefronts (same counts as ``request_stats``)."""
    lanes = len(addr)
    a = np.array([x if x is not None else 0 for x in addr], dtype=np.int64)[None, :]
    act = np.array([x is not None for x in addr], dtype=bool)[None, :]
    if lanes < arch.warp_size:
        pad = arch.warp_size - lanes
        a = np.pad(a, ((0, 0), (0, pad)))
        act = np.pad(act, ((0, 0), (0, pad)))
    if kind.is_matrix:
        act = act & (np.arange(arch.warp_size) < 8 * kind.matrices)[None, :]
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
