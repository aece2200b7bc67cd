"""``shmem trace --suggest``: layout changes for each shared array with bank conflicts,
tried on the traced addresses.

For every array that a conflicting instruction touches, each candidate change (row
padding of 1..32 elements, the TMA swizzle modes, CuTe ``Swizzle<B,M,S>``) is applied
alike to every instruction of that array (:mod:`.relayout`), vector accesses it
misaligns split as ptxas would split them, and the whole kernel is costed again. The
candidates are ranked by the kernel's total wavefronts, then by the shared memory
they add; those that lower the total are listed, and so are the misaligning pads
below the best aligned one (the "textbook" pad of one element), marked, with what
they really cost.

The row length padding works on is the declared one (:mod:`.declared`) when the
source declares a 2-D array, otherwise the traced row stride: the smallest positive
distance of at least 128 bytes, dividing the array, between the addresses one lane
gives in successive executions of an instruction or between neighbouring lanes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...analysis.swizzle_terms import SwizzleTerms, terms
from ...analysis.synthesis import Synthesis
from ...hardware import ops
from ...hardware.arch import ArchProfile
from ...hardware.ops import OP_NAMES as OPS
from ...hardware.swizzle import TMA_SWIZZLES, Swizzle
from ...plumbing.errors import ShmemError
from ...plumbing.frozen import frozen
from ..requests import InstructionRecords, TmaFill
from ..result import KernelTrace
from .arrays import SharedArray, array_of
from .declared import Shape
from .relayout import Change, MovedCost, cost_moved
from .synthesized import synthesize_array, tma_changes, tma_mode

PADS = range(1, 33)  # elements added to each row

#: distinct requests of one array the search costs (each under some hundred layouts, about
#: 0.7 ms a request: 65,536 take under a minute); past it --suggest is refused before it starts
MAX_SEARCH_ROWS = 1 << 16
#: the same for the kernel's searched arrays together (about two minutes): many arrays each
#: under the bound above would otherwise add up to any time
MAX_KERNEL_SEARCH_ROWS = 1 << 17
LISTED = 5  # improving candidates listed per array
MISALIGNED_LISTED = 3  # misaligning pads below the best aligned one, listed as a warning


@frozen
class InstructionChange:
    """One instruction of the array under a suggestion: before and after."""

    pc: int
    sass: str
    opcode: str
    requests: int
    wavefronts: int
    new: MovedCost

    def to_json(self) -> dict[str, Any]:
        return {
            "pc": self.pc,
            "sass": self.sass,
            "requests": self.requests,
            "wavefronts": self.wavefronts,
            "new_requests": self.new.requests,
            "new_wavefronts": self.new.wavefronts,
            "becomes": self.new.becomes(self.opcode) if self.new.split else None,
        }


@frozen
class Suggestion:
    array: str
    change: Change
    extra_bytes: int
    breaks_vector_alignment: bool
    predicted: dict[str, tuple[int, int]]  # op -> (requests, wavefronts), whole kernel
    instructions: tuple[InstructionChange, ...]
    fix: str  # the change in the kernel's own terms
    sweep: str | None  # the macro or template parameter to sweep, and how
    terms: SwizzleTerms | None = None  # a swizzle written every way (JSON)
    synthesis: Synthesis | None = None  # set when the swizzle is the synthesized map

    @property
    def wavefronts(self) -> int:
        return sum(w for _, w in self.predicted.values())

    def to_json(self) -> dict[str, Any]:
        c = self.change
        out: dict[str, Any] = {"array": self.array, "kind": c.kind}
        if c.kind == "pad":
            out["pad_bytes"] = c.pad_bytes
        else:
            assert c.swizzle is not None
            out["swizzle"] = c.swizzle.to_json()
            if self.terms is not None:
                out["swizzle_terms"] = self.terms.to_json()
            out["synthesized"] = self.synthesis is not None
            if self.synthesis is not None:
                out["array_wavefronts"] = self.synthesis.wavefronts
                out["array_ideal_wavefronts"] = self.synthesis.bound
                out["optimal"] = self.synthesis.optimal
        out.update(
            extra_bytes=self.extra_bytes,
            breaks_vector_alignment=self.breaks_vector_alignment,
            predicted={
                op: {"requests": r, "wavefronts": w} for op, (r, w) in self.predicted.items()
            },
            wavefronts=self.wavefronts,
            fix=self.fix,
            sweep=self.sweep,
            instructions=[i.to_json() for i in self.instructions],
        )
        return out


@frozen
class ArraySuggestions:
    """The suggestions for one array, best first, and what they start from."""

    array: SharedArray
    shape: Shape | None
    pitch: int | None  # row bytes padding works on
    pitch_from: str  # "declared" or "traced strides"
    current: dict[str, tuple[int, int]]  # op -> (requests, wavefronts) as traced
    conflicted: int  # conflicting instructions of the array
    suggestions: tuple[Suggestion, ...]
    element: int = 4  # bytes of one element (pads are whole elements)
    synthesis: Synthesis | None = None  # the best XOR map for the array, with its bound
    tma: int | None = None  # the swizzle bytes of the TMA copies that fill it (None: no TMA)

    @property
    def wavefronts(self) -> int:
        return sum(w for _, w in self.current.values())


def traced_pitch(recs: Sequence[InstructionRecords], array: SharedArray) -> int | None:
    """The row stride of an array seen in its traced addresses (see the module docstring)."""
    strides: set[int] = set()
    for rec in recs:
        addr, active = rec.rows()
        if not len(addr):
            continue
        on = np.where(active, addr, -1)
        lanes = np.diff(on, axis=1)[(on[:, 1:] >= 0) & (on[:, :-1] >= 0)]
        strides |= {int(s) for s in np.unique(np.abs(lanes))}
        warp, occ = np.asarray(rec.warp[: rec.n]), np.asarray(rec.iteration[: rec.n])
        order = np.lexsort((occ, warp))
        first = addr[order, np.argmax(active[order], axis=1)]
        same = np.diff(warp[order]) == 0
        strides |= {int(s) for s in np.unique(np.abs(np.diff(first)[same]))}
    fits = sorted(s for s in strides if s >= 128 and array.size % s == 0 and s < array.size)
    return fits[0] if fits else None


def _element_bytes(shape: Shape | None, recs: Sequence[InstructionRecords]) -> int:
    if shape is not None:
        return shape.element_bytes
    return max(1, min(4, *(r.kind.size for r in recs)))


def candidates(array: SharedArray, pitch: int | None, element: int) -> list[Change]:
    """Every change tried: pads of 1..32 elements, the TMA modes, CuTe Swizzle<B,M,S>."""
    out = []
    if pitch is not None and array.size % pitch == 0 and array.size > pitch:
        out += [Change("pad", pitch=pitch, pad_bytes=e * element) for e in PADS]
    top = max(1, (array.size - 1).bit_length())  # offset bits of the array
    seen = set()
    for swz in TMA_SWIZZLES.values():
        if swz.period <= 1 << top:
            seen.add(swz.cute_form())
            out.append(Change("swizzle", swizzle=swz))
    low = max(2, (element - 1).bit_length())
    for bits in (1, 2, 3):
        for base in range(low, 8):
            for shift in range(max(bits, 1), top - base - bits + 1):
                if (bits, base, shift) not in seen:
                    out.append(Change("swizzle", swizzle=Swizzle.cute(bits, base, shift)))
    return out


def _evaluate(
    recs: Sequence[InstructionRecords],
    array: SharedArray,
    change: Change,
    arch: ArchProfile,
    before: dict[int, tuple[int, int]],
) -> tuple[dict[str, tuple[int, int]], tuple[InstructionChange, ...]] | None:
    delta = {op: [0, 0] for op in OPS}
    changes = []
    for rec in recs:
        new = cost_moved(rec, array, change, arch)
        if new.refused is not None:
            return None
        r, w = before[rec.index]
        new = _for_grid(new, r, rec.n)
        d = delta[rec.kind.op]
        d[0] += new.requests - r
        d[1] += new.wavefronts - w
        if (new.requests, new.wavefronts) != (r, w) or new.split:
            ins = rec.instruction
            changes.append(InstructionChange(ins.pc, ins.text, ins.name, r, w, new))
    return {op: (d[0], d[1]) for op, d in delta.items()}, tuple(changes)


def _for_grid(new: MovedCost, grid: int, traced: int) -> MovedCost:
    """``new`` (of the traced blocks' requests) counted for the whole grid: a grid whose
    blocks behave alike is traced once and its requests counted for each block, so the
    records hold ``traced`` of the instruction's ``grid`` requests."""
    if traced <= 0 or grid == traced:
        return new
    return dataclasses.replace(
        new,
        requests=_grid_count(new.requests, grid, traced),
        wavefronts=_grid_count(new.wavefronts, grid, traced),
    )


def _grid_count(value: int, grid: int, traced: int) -> int:
    """A count of the ``traced`` requests scaled to the ``grid`` requests, rounded."""
    return (value * grid + traced // 2) // traced


def _synthesis_for_grid(synth: Synthesis | None, grid: int, traced: int) -> Synthesis | None:
    """The synthesized map's counts (of the traced blocks) counted for the whole grid."""
    if synth is None or traced <= 0 or grid == traced:
        return synth

    def each(values: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(_grid_count(v, grid, traced) for v in values)

    return dataclasses.replace(
        synth,
        wavefronts=_grid_count(synth.wavefronts, grid, traced),
        per_access=each(synth.per_access),
        current=_grid_count(synth.current, grid, traced),
        current_per_access=each(synth.current_per_access),
        bound=_grid_count(synth.bound, grid, traced),
    )


Scored = tuple[
    tuple[int, int, int], Change, dict[str, tuple[int, int]], tuple[InstructionChange, ...], bool
]


def _pick(scored: Sequence[Scored], current: int) -> list[Scored]:
    """What is listed, best first: the best changes that lower the total (one per kind and
    total: pad 2 and pad 6 giving the same count, only the cheaper), the best pad that
    keeps every vector access, and the misaligning pads below it."""
    seen: set[tuple[str, int]] = set()
    better: list[Scored] = []
    for s in scored:
        key = (s[1].kind, s[0][0])
        if s[0][0] < current and key not in seen and len(better) < LISTED:
            seen.add(key)
            better.append(s)
    aligned = next((s for s in scored if s[1].kind == "pad" and not s[4]), None)
    if aligned is not None and aligned[0][0] < current and aligned not in better:
        better.append(aligned)
    limit = aligned[1].pad_bytes if aligned is not None and aligned[0][0] < current else 0
    totals: set[int] = {s[0][0] for s in better}
    warn: list[Scored] = []
    for s in sorted(scored, key=lambda s: s[1].pad_bytes):
        misaligned = s[1].kind == "pad" and s[4] and s[1].pad_bytes < limit
        if misaligned and s[0][0] not in totals and len(warn) < MISALIGNED_LISTED:
            totals.add(s[0][0])
            warn.append(s)
    return sorted([*better, *warn], key=lambda s: s[0])


def _check_search(array: SharedArray, rows: int) -> None:
    """Refuse a search over more distinct requests than :data:`MAX_SEARCH_ROWS`: 16 M
    requests that all differ (a hash of block, thread and iteration, 256 blocks) took it past
    5 minutes, after a trace of 20 s, with no budget of the trace's to stop it."""
    if rows > MAX_SEARCH_ROWS:
        raise ShmemError(
            f"--suggest: the traced requests of array {array.name} hold {rows:,} distinct "
            f"ones; the layout search costs at most {MAX_SEARCH_ROWS:,} (each under every "
            "layout tried): trace fewer blocks (--grid) to search, or leave --suggest out",
            code="limit",
        )


def _check_kernel_search(rows: dict[str, int]) -> None:
    """Refuse a search whose arrays together hold more distinct requests than
    :data:`MAX_KERNEL_SEARCH_ROWS`, naming the largest."""
    total = sum(rows.values())
    if total > MAX_KERNEL_SEARCH_ROWS:
        largest = sorted(rows.items(), key=lambda kv: -kv[1])[:3]
        plural = "" if len(rows) == 1 else "s"
        named = ", ".join(f"{name} {n:,}" for name, n in largest) + (
            ", ..." if len(rows) > 3 else ""
        )
        raise ShmemError(
            f"--suggest: the traced requests of the {len(rows)} array{plural} with a conflict hold "
            f"{total:,} distinct ones ({named}); the layout search costs at most "
            f"{MAX_KERNEL_SEARCH_ROWS:,} for a kernel: trace fewer blocks (--grid) to "
            "search, or leave --suggest out",
            code="limit",
        )


def suggest_kernel(
    trace: KernelTrace,
    arrays: Sequence[SharedArray],
    shapes: dict[str, Shape | None],
    arch: ArchProfile,
    *,
    say: Any,
) -> tuple[ArraySuggestions, ...]:
    """The suggestions for every array with a conflicting instruction.

    ``say(array, shape, change, widest access bytes) -> (fix, sweep)`` words a change in
    the kernel's own terms (:mod:`shmem_cli.trace.fixes.kernel_terms`)."""
    records: list[InstructionRecords] = list(trace.records)
    fills: Sequence[TmaFill] = trace.fills
    by_pc = {a.site.pc: a for a in trace.accesses}
    owner = {rec.index: array_of(rec, arrays) for rec in records}
    before = {}
    for rec in records:
        r = by_pc[rec.instruction.pc].cost
        before[rec.index] = (r.requests, r.wavefronts)
    base = {op: (t.requests, t.wavefronts) for op, t in trace.totals.items()}
    rows: dict[str, int] = {}
    conflicted_arrays: set[str] = set()
    for rec in records:
        held = owner[rec.index]
        if held is not None:
            name = held.name
            rows[name] = rows.get(name, 0) + rec.distinct.n
            if by_pc[rec.instruction.pc].cost.conflicted_requests:
                conflicted_arrays.add(name)
    _check_kernel_search({n: k for n, k in rows.items() if n in conflicted_arrays})
    out = []
    for array in arrays:
        recs = [r for r in records if owner[r.index] is array]
        conflicted = sum(1 for r in recs if by_pc[r.instruction.pc].cost.conflicted_requests > 0)
        if not conflicted:
            continue
        shape = shapes.get(array.name)
        pitch: int | None
        if shape is not None and len(shape.sizes) >= 2:
            pitch, source = shape.pitch, "declared"
        else:
            pitch, source = traced_pitch(recs, array), "traced strides"
        current = sum(w for _, w in base.values())
        element = _element_bytes(shape, recs)
        widest = max((r.kind.size for r in recs if ops.get(r.kind.op).splits), default=0)
        tma = tma_mode(array, fills)
        _check_search(array, sum(r.distinct.n for r in recs))
        synth = synthesize_array(recs, array, arch, tma)
        grid, traced = sum(before[r.index][0] for r in recs), sum(r.n for r in recs)
        synth = _synthesis_for_grid(synth, grid, traced)
        tried = candidates(array, pitch, element) if tma is None else tma_changes(tma)
        if synth is not None and not synth.swizzle.identity and tma is None:
            have = {c.swizzle.terms for c in tried if c.swizzle is not None}
            if synth.swizzle.terms not in have:
                tried.insert(0, Change("swizzle", swizzle=synth.swizzle))
        scored: list[Scored] = []
        for n, change in enumerate(tried):
            got = _evaluate(recs, array, change, arch, before)
            if got is None:
                continue
            delta, changes = got
            predicted = {op: (base[op][0] + delta[op][0], base[op][1] + delta[op][1]) for op in OPS}
            total = sum(w for _, w in predicted.values())
            extra = change.extra_bytes(array)
            split = any(c.new.split for c in changes)
            scored.append(((total, extra, n), change, predicted, changes, split))
        scored.sort(key=lambda s: s[0])
        listed = _pick(scored, current)
        suggestions = []
        row = shape.sizes[-1] if shape is not None and len(shape.sizes) >= 2 else None
        for _key, change, predicted, changes, split in listed:
            fix, sweep = say(array, shape, change, widest)
            said = None
            if change.swizzle is not None:
                esize = shape.element_bytes if shape is not None else None
                kind = shape.declaration.type if shape is not None else None
                said = terms(change.swizzle, esize, kind, row)
            mine = None
            if change.swizzle is not None and synth is not None:
                mine = synth if change.swizzle.terms == synth.swizzle.terms else None
            suggestions.append(
                Suggestion(
                    array.name,
                    change,
                    change.extra_bytes(array),
                    split,
                    {op: v for op, v in predicted.items() if v != (0, 0) or base[op] != (0, 0)},
                    changes,
                    fix,
                    sweep,
                    said,
                    mine,
                )
            )
        out.append(
            ArraySuggestions(
                array,
                shape,
                pitch,
                source,
                {op: v for op, v in base.items() if v != (0, 0)},
                conflicted,
                tuple(suggestions),
                element,
                synth,
                tma,
            )
        )
    return tuple(out)
