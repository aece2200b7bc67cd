"""Swizzle synthesis: the XOR map of an array's byte offsets that costs its accesses least.

Input: every access to one shared array (a spec's accesses, or a traced kernel's
instructions), each as its warp requests with in-array byte offsets. Output: the map,
the total wavefronts it gives all those accesses together, costed with the
architecture profile's rules through the engine (phases, banks, words, broadcast,
pair merge: nothing approximated), a lower bound and whether the map reaches it.

**The class searched.** A bank is bits ``2..6`` of the address (32 banks of 4 bytes);
the cost of a phase depends only on which of its distinct words share a bank. A map
that XORs address bits above the bank bits (``7..``, the *sources*) into bank bits
(the *targets*) permutes every aligned 128-byte line, keeps every word whole and
changes which words share a bank: it is the class searched (CuTe ``Swizzle<B,M,S>``,
the TMA modes and Triton's ``swizzled_shared`` layouts are members). Mixing bank bits
among themselves would only rename banks, and a target above bit 6 changes no bank,
so nothing outside the class does better with an XOR map. Targets start at
``log2`` of the widest access (a 16-byte access stays one aligned 16-byte piece:
one ``LDS.128``), and an array that TMA fills may only take the TMA modes.

**The search.** The requests of each access are first reduced to their distinct
shapes: XOR-ing every address of a request with a constant above bit 6 renames its
banks and changes no cost, so requests equal after that are costed once, weighted.
Every CuTe swizzle of the class is tried, then each source bit's target mask is
improved in turn (all masks of one bit costed at once) from the best of those and
from no swizzle, until nothing improves. Where the class is small enough every map
is costed. The answer is *optimal* when it reaches the lower bound (each request's
ideal: one wavefront per phase with an active lane) or when every map was costed.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..hardware.arch import ArchProfile
from ..hardware.engine import B8, I64, AccessKind
from ..hardware.swizzle import TMA_SWIZZLES, Swizzle
from ..plumbing.frozen import frozen
from .cost import CopySource, RequestBatch, batch_stats

Fill = Literal["free", "tma"]
EXHAUSTIVE_MAPS = 1 << 12  # cost every map of the class when there are at most this many
CHUNK_ROWS = 1 << 16  # rows costed per engine call


@frozen
class ArrayAccess:
    """One access (instruction or spec access) to the array: its requests, offsets
    relative to the array's first byte, and how many times each row occurs."""

    kind: AccessKind
    batch: RequestBatch  # addr holds in-array byte offsets
    label: str = ""
    weight: I64 | None = None  # (R,) occurrences of each row (default 1)


@frozen
class Synthesis:
    """The best map found for one array and what it costs."""

    swizzle: Swizzle  # the identity (no terms) when nothing beats the layout as it is
    wavefronts: int  # all accesses together under the map
    per_access: tuple[int, ...]
    current: int  # as laid out today (no map)
    current_per_access: tuple[int, ...]
    bound: int  # no layout can cost less (each phase with an active lane: one wavefront)
    optimal: bool  # reaches the bound, or every map of the class was costed
    exhaustive: bool
    targets: tuple[int, ...]  # the bits a map may write
    sources: tuple[int, ...]  # the bits a map may read
    tried: int  # maps costed
    notes: tuple[str, ...] = field(default=())

    @property
    def reaches_bound(self) -> bool:
        return self.wavefronts == self.bound


@dataclass
class _Rows:
    """The distinct request shapes of one access, ready to cost under many maps."""

    kind: AccessKind
    addr: I64  # (R, lanes) offsets, inactive lanes 0
    active: B8
    weight: I64
    source: CopySource | None
    base: int


def _reduce(access: ArrayAccess, base: int, line: int) -> _Rows:
    """Rows of ``access`` with equal shapes merged (module docstring): offsets XOR-ed
    with their first active lane's bits above the bank line, when the array starts
    on a line (otherwise the line bits of the address are not the offset's)."""
    b = access.batch
    addr = np.where(b.active, b.addr, 0).astype(np.int64)
    weight = np.ones(len(addr), dtype=np.int64) if access.weight is None else access.weight.copy()
    if b.source is not None or b.wavefronts is not None or base % line or not len(addr):
        return _Rows(access.kind, addr, b.active, weight, b.source, base)
    first = addr[np.arange(len(addr)), np.argmax(b.active, axis=1)]
    shifted = np.where(b.active, addr ^ (first & ~(line - 1))[:, None], -1)
    key = np.concatenate([shifted, b.active.astype(np.int64)], axis=1)
    uniq, inverse = np.unique(key, axis=0, return_inverse=True)
    lanes = addr.shape[1]
    merged = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(merged, inverse.reshape(-1), weight)
    act = uniq[:, lanes:].astype(bool)
    return _Rows(access.kind, np.where(act, uniq[:, :lanes], 0), act, merged, None, base)


def _apply_terms(addr: I64, terms: Sequence[tuple[int, int]]) -> I64:
    out = addr.copy()
    for s, m in terms:
        out ^= ((addr >> s) & 1) * m
    return out


class _Costs:
    """Total wavefronts of every access under candidate maps, many maps per engine call."""

    def __init__(self, rows: list[_Rows], arch: ArchProfile) -> None:
        self.rows = rows
        self.arch = arch
        self.count = 0

    def per_access(self, terms: Sequence[tuple[int, int]]) -> tuple[int, ...]:
        out = []
        for r in self.rows:
            moved = _apply_terms(r.addr, terms) + r.base
            batch = _batch(moved, r.active, r.source)
            stats = batch_stats(batch, r.kind, self.arch)
            out.append(int((stats.wavefronts * r.weight).sum()))
        self.count += 1
        return tuple(out)

    def totals(self, maps: Sequence[Sequence[tuple[int, int]]]) -> list[int]:
        """The total of each map, costed together (rows of all maps in few engine calls)."""
        totals = [0] * len(maps)
        for r in self.rows:
            n = len(r.addr)
            if not n:
                continue
            per_call = max(1, CHUNK_ROWS // n)
            for start in range(0, len(maps), per_call):
                part = maps[start : start + per_call]
                moved = np.concatenate([_apply_terms(r.addr, t) for t in part]) + r.base
                active = np.tile(r.active, (len(part), 1))
                source = None
                if r.source is not None:
                    s = r.source
                    source = CopySource(
                        np.tile(s.addr, (len(part), 1)),
                        np.tile(s.copies, (len(part), 1)),
                        s.bypass,
                    )
                stats = batch_stats(_batch(moved, active, source), r.kind, self.arch)
                w = stats.wavefronts.reshape(len(part), n) * r.weight
                for k, v in enumerate(w.sum(axis=1)):
                    totals[start + k] += int(v)
        self.count += len(maps)
        return totals


def _batch(addr: I64, active: B8, source: CopySource | None) -> RequestBatch:
    zeros = np.zeros(len(addr), dtype=np.int64)
    return RequestBatch(addr=addr, active=active, warp=zeros, iteration=zeros, source=source)


def _bound(rows: list[_Rows], arch: ArchProfile) -> int:
    total = 0
    for r in rows:
        stats = batch_stats(_batch(r.addr + r.base, r.active, r.source), r.kind, arch)
        total += int((stats.phases * r.weight).sum())  # no layout changes which lanes are on
    return total


def _cute_family(
    targets: Sequence[int], sources: Sequence[int]
) -> list[tuple[tuple[int, int], ...]]:
    """Every CuTe Swizzle<B,M,S> whose targets and sources lie in the class's bits."""
    out = []
    tset, sset = set(targets), set(sources)
    for bits in range(1, len(targets) + 1):
        for base in targets:
            tb = range(base, base + bits)
            if not set(tb) <= tset:
                continue
            for src in sources:
                sb = range(src, src + bits)
                if set(sb) <= sset and src - base >= bits:
                    out.append(tuple((s, 1 << t) for s, t in zip(sb, tb, strict=True)))
    return out


def synthesize(
    accesses: Sequence[ArrayAccess],
    size: int,
    arch: ArchProfile,
    *,
    base: int = 0,
    fill: Fill = "free",
) -> Synthesis:
    """The XOR map of an array of ``size`` bytes starting at shared byte ``base`` that
    minimises the wavefronts of ``accesses`` together (module docstring)."""
    line = arch.banks * arch.bank_bytes
    low_bank = arch.bank_bytes.bit_length() - 1
    top_bank = line.bit_length() - 2
    widest = max((_piece(a.kind, arch) for a in accesses), default=arch.bank_bytes)
    low = max(low_bank, widest.bit_length() - 1)
    targets = tuple(range(low, top_bank + 1))
    top = (size - 1).bit_length() if size > 1 else 0
    sources = tuple(range(top_bank + 1, top))
    rows = [_reduce(a, base, line) for a in accesses]
    costs = _Costs(rows, arch)
    now = costs.per_access(())
    bound = _bound(rows, arch)
    notes: list[str] = []
    if size % line or base % line:
        notes.append(
            f"the array is not made of whole {line}-byte lines starting on one "
            f"(size {size} B, starting at byte {base}): no swizzle keeps it in place"
        )
        return _answer((), costs, now, now, bound, False, targets, sources, notes)
    if fill == "tma":
        modes = [()] + [m.terms for m in TMA_SWIZZLES.values() if m.period <= size]
        totals = costs.totals(modes)
        k = min(range(len(modes)), key=lambda i: (totals[i], i))
        notes.append("TMA fills the array: its layout can only be one of the TMA modes")
        return _answer(
            modes[k],
            costs,
            now,
            costs.per_access(modes[k]),
            bound,
            True,
            targets,
            sources,
            notes,
            exhaustive=True,
        )
    if not targets or not sources:
        return _answer((), costs, now, now, bound, sum(now) == bound, targets, sources, notes)
    family = _cute_family(targets, sources)
    totals = costs.totals([(), *family])
    best_total = totals[0]
    best: tuple[tuple[int, int], ...] = ()
    for t, terms in zip(totals[1:], family, strict=True):
        if t < best_total:
            best_total, best = t, terms
    exhaustive = (1 << len(targets)) ** len(sources) <= EXHAUSTIVE_MAPS
    if best_total > bound:
        if exhaustive:
            best, best_total = _every_map(costs, targets, sources, best, best_total)
        else:
            for seed in (best, ()):
                found, total = _descend(costs, targets, sources, seed)
                if total < best_total:
                    best, best_total = found, total
    optimal = best_total == bound or exhaustive
    return _answer(
        best,
        costs,
        now,
        costs.per_access(best),
        bound,
        optimal,
        targets,
        sources,
        notes,
        exhaustive=exhaustive,
    )


def _piece(kind: AccessKind, arch: ArchProfile) -> int:
    """The bytes one lane moves whole (an ldmatrix row: 16)."""
    return arch.ldmatrix_row_bytes if kind.is_matrix else max(kind.size, 1)


def _masks(targets: Sequence[int]) -> list[int]:
    out = [0]
    for t in targets:
        out += [m | 1 << t for m in out]
    return sorted(out)


def _every_map(
    costs: _Costs,
    targets: Sequence[int],
    sources: Sequence[int],
    best: tuple[tuple[int, int], ...],
    best_total: int,
) -> tuple[tuple[tuple[int, int], ...], int]:
    masks = _masks(targets)
    maps = [
        tuple((s, m) for s, m in zip(sources, choice, strict=True) if m)
        for choice in itertools.product(masks, repeat=len(sources))
    ]
    totals = costs.totals(maps)
    for t, terms in zip(totals, maps, strict=True):
        if t < best_total or (t == best_total and _simpler(terms, best)):
            best, best_total = terms, t
    return best, best_total


def _simpler(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    ones = sum(bin(m).count("1") for _, m in a)
    return (ones, len(a)) < (sum(bin(m).count("1") for _, m in b), len(b))


def _descend(
    costs: _Costs,
    targets: Sequence[int],
    sources: Sequence[int],
    seed: tuple[tuple[int, int], ...],
) -> tuple[tuple[tuple[int, int], ...], int]:
    """Coordinate descent: each source bit's target mask in turn, all masks at once."""
    masks = _masks(targets)
    current = dict(seed)
    total = costs.totals([seed])[0]
    improved = True
    while improved:
        improved = False
        for s in sources:
            trials = []
            for m in masks:
                c = dict(current)
                c[s] = m
                trials.append(tuple(sorted((k, v) for k, v in c.items() if v)))
            found = costs.totals(trials)
            k = min(range(len(masks)), key=lambda i: (found[i], i))
            if found[k] < total:
                total = found[k]
                current = dict(trials[k])
                improved = True
    return tuple(sorted(current.items())), total


def _answer(
    terms: Sequence[tuple[int, int]],
    costs: _Costs,
    now: tuple[int, ...],
    after: tuple[int, ...],
    bound: int,
    optimal: bool,
    targets: tuple[int, ...],
    sources: tuple[int, ...],
    notes: list[str],
    *,
    exhaustive: bool = False,
) -> Synthesis:
    swz = Swizzle.from_terms(tuple(terms))
    return Synthesis(
        swizzle=swz,
        wavefronts=sum(after),
        per_access=after,
        current=sum(now),
        current_per_access=now,
        bound=bound,
        optimal=optimal or sum(after) == bound,
        exhaustive=exhaustive,
        targets=targets,
        sources=sources,
        tried=costs.count,
        notes=tuple(notes),
    )
