"""The words atomics leave in memory: many lanes' on distinct words at once
(:func:`apply_many`), and a step's lanes served in order (:func:`serve`), round by round,
for ``ops/atomic.py``.

A step of a batch of blocks may hold thousands of atomic lanes (a layer norm's backward
pass adds each row's gradients into shared memory: 12.6 million lanes over 264 blocks);
served one lane at a time in Python they took most of its minute. Served in rounds, each
word's lanes in the order the warps are served, the values are the same bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ops.convert import bf16_bits
from ..ops.floating import flush, minimum_maximum

_FLOAT = {"F32": np.float32, "F64": np.float64}


def _half2(old: int, val: int, opname: str, bf16: bool) -> int:
    """Lane by lane ``F16x2``/``BF16x2`` add, minimum or maximum (a minimum or maximum by the
    emulator's one rule, :func:`.floating.minimum_maximum`: -0 below +0, a NaN loses to a
    number, of two NaNs 0x7fff, as the H200's half2 and bf16x2 atomics compute them,
    tests/data/trace/probes' ``atomics_half``)."""
    if bf16:  # bf16 lanes are float32's high halves; a sum of two is exact there or far off
        a, b = ((np.array([w], np.uint32).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
                for w in (old, val))  # fmt: skip
        if opname == "ADD":
            with np.errstate(over="ignore", invalid="ignore"):
                r = bf16_bits(a + b)
        else:
            r = minimum_maximum(a, b, opname == "MIN").view(np.uint32) >> np.uint32(16)
        return int(r[0] | (r[1] << 16))
    h, g = np.array([old], np.uint32).view(np.float16), np.array([val], np.uint32).view(np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        r = h + g if opname == "ADD" else minimum_maximum(h, g, opname == "MIN")
    return int(np.asarray(r, dtype=np.float16).view(np.uint32)[0])


def _float_one(opname: str, old: int, val: int, mods: tuple[str, ...], bits: int) -> int:
    """One lane's float ``ADD``/``MIN``/``MAX`` on ``bits``-wide words, its NaN's bits as the
    hardware leaves them (the lanes :func:`apply_many` cannot take whole)."""
    fmt = next(f for m, f in _FLOAT.items() if m in mods)
    ut = np.uint32 if bits == 32 else np.uint64
    o, v = np.array([old, val], dtype=ut).view(fmt)
    ftz = "FTZ" in mods and fmt is np.float32  # PTX's atom.add.f32: no denormal in or out
    if ftz:
        o, v = flush(np.array([o, v], dtype=np.float32))
    with np.errstate(all="ignore"):  # inf + -inf is the NaN the hardware writes too
        r = o + v if opname == "ADD" else minimum_maximum(o, v, opname == "MIN")
    if ftz:
        r = flush(np.array([r], dtype=np.float32))[0]
    return int(np.array([r], dtype=fmt).view(ut)[0])


def apply_many(opname: str, old: Any, val: Any, cmp: Any, mods: tuple[str, ...], bits: int) -> Any:
    """The values atomics leave in memory, of lanes on distinct words (uint64 arrays of
    ``bits``-wide unsigned words): each lane's op on its word's ``old`` value with its
    ``val`` (and compare value ``cmp``)."""
    old, val, cmp = (np.asarray(x, dtype=np.uint64) for x in (old, val, cmp))
    if "F16x2" in mods or "BF16x2" in mods:
        bf16 = "BF16x2" in mods
        each = [_half2(int(o), int(v), opname, bf16) for o, v in zip(old, val, strict=True)]
        return np.array(each, dtype=np.uint64)
    ut = np.uint32 if bits == 32 else np.uint64
    fmt = next((f for m, f in _FLOAT.items() if m in mods), None)
    if fmt is not None and opname in ("ADD", "MIN", "MAX"):
        o, v = old.astype(ut).view(fmt), val.astype(ut).view(fmt)
        ftz = "FTZ" in mods and fmt is np.float32  # PTX's atom.add.f32: no denormal in or out
        if ftz:
            o, v = flush(o), flush(v)
        with np.errstate(over="ignore", invalid="ignore"):
            r = o + v if opname == "ADD" else minimum_maximum(o, v, opname == "MIN")
        r = flush(r) if ftz else np.asarray(r, dtype=fmt)
        got = r.view(ut).astype(np.uint64)
        for k in np.flatnonzero(np.isnan(r)):  # a NaN's bits as the one-lane rule makes them
            got[k] = _float_one(opname, int(old[k]), int(val[k]), mods, bits)
        return got
    so, sv = old, val
    if "S32" in mods or "S64" in mods:  # compared as signed, stored as the same bits
        so, sv = (x.astype(ut).view(np.int32 if bits == 32 else np.int64) for x in (old, val))
    one = np.uint64(1)
    with np.errstate(over="ignore"):
        table: dict[str, Callable[[], Any]] = {
            "ADD": lambda: old + val,
            "POPC": lambda: old + one,
            "MIN": lambda: np.minimum(so, sv).astype(ut).astype(np.uint64),
            "MAX": lambda: np.maximum(so, sv).astype(ut).astype(np.uint64),
            "INC": lambda: np.where(old >= val, np.uint64(0), old + one),
            "DEC": lambda: np.where((old == 0) | (old > val), val, old - one),
            "AND": lambda: old & val,
            "OR": lambda: old | val,
            "XOR": lambda: old ^ val,
            "EXCH": lambda: val,
            "CAS": lambda: np.where(old == cmp, val, old),
            "CAST": lambda: np.where(old == cmp, val, old),
        }
        return np.asarray(table[opname](), dtype=np.uint64) & np.uint64((1 << bits) - 1)


def serve(
    cells: Any,
    cell: Any,
    order: Any,
    values: tuple[Any, Any],
    how: tuple[str, tuple[str, ...], int],
    reached: Any,
    phase: Any,
    old: Any,
    ok: Any,
) -> bool:
    """Apply the lanes' atomics to ``cells`` in serving ``order`` (:func:`warp_order`),
    filling each lane's ``old`` word and ``ok`` (its compare held; a spin's: it swapped).
    The lanes on one word go in that order, in rounds: round r serves each word's r-th lane,
    all words at once, so that each sees the word as the lanes before it left it, as lane by
    lane. A spin (``reached`` given, :func:`served`) swaps only the first lane of a (phase,
    word) whose compare value matches. Returns whether a word took another value."""
    new_v, cmp_v = values
    opname, mods, bits = how
    by_word = order[np.argsort(cell[order], kind="stable")]  # word by word, served order
    w = cell[by_word]
    starts = np.r_[True, w[1:] != w[:-1]] if len(w) else np.zeros(0, dtype=bool)
    rank = np.empty(len(w), dtype=np.int64)
    rank[by_word] = np.arange(len(w)) - np.maximum.accumulate(
        np.where(starts, np.arange(len(w)), 0)
    )
    group: Any = None
    tried: Any = None
    if reached is not None and len(cell):  # the (phase, word) pairs, each swapped at most once
        key = phase.astype(np.int64) * (int(cell.max()) + 1) + cell
        group = np.unique(key, return_inverse=True)[1].reshape(-1)
        tried = np.zeros(int(group.max()) + 1, dtype=bool)
    changed = False
    rounds = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[rounds], np.arange(int(rank.max()) + 2 if len(rank) else 1))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=False):
        lanes = rounds[lo:hi]
        c = cell[lanes]
        o = cells[c].astype(np.uint64)
        old[lanes] = o
        if group is not None:  # the spin: the first matching lane of a (phase, word) swaps
            go = reached[lanes] & (o == cmp_v[lanes]) & ~tried[group[lanes]]
            tried[group[lanes[go]]] = True
            lanes, c, o = lanes[go], c[go], o[go]
        ok[lanes] = o == cmp_v[lanes]
        value = apply_many(opname, o, new_v[lanes], cmp_v[lanes], mods, bits)
        cells[c] = value.astype(cells.dtype)
        changed = changed or bool((value != o).any())
    return changed
