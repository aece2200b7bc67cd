"""A step's atomic lanes served in rounds (shmem_cli/trace/emulator/sync/atomic_words.py)
against the same lanes served one by one in serving order, the way the emulator served them
before (a reference written here, one lane at a time: the integer ops in plain Python, a float
or half2 lane as ``apply_many`` takes one lane): the words left in memory, each lane's old
word, whether its compare held, and whether a word changed, bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shmem_cli.trace.emulator.sync.atomic_words import apply_many, serve


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) else v


def apply(opname: str, old: int, val: int, cmp: int, mods: tuple[str, ...], bits: int) -> int:
    """One lane's atomic on ``bits``-wide unsigned words: integer ops by Python's ints (the
    reference), float and half2 lanes through ``apply_many`` on that one lane."""
    if any(m in mods for m in ("F32", "F64", "F16x2", "BF16x2")) and opname in (
        "ADD",
        "MIN",
        "MAX",
    ):
        return int(apply_many(opname, [old], [val], [cmp], mods, bits)[0])
    signed = "S32" in mods or "S64" in mods
    so, sv = (_signed(old, bits), _signed(val, bits)) if signed else (old, val)
    table = {
        "ADD": old + val,
        "POPC": old + 1,
        "MIN": min(so, sv),
        "MAX": max(so, sv),
        "INC": 0 if old >= val else old + 1,
        "DEC": val if old == 0 or old > val else old - 1,
        "AND": old & val,
        "OR": old | val,
        "XOR": old ^ val,
        "EXCH": val,
        "CAS": val if old == cmp else old,
        "CAST": val if old == cmp else old,
    }
    return table[opname] & ((1 << bits) - 1)


def _one_by_one(cells: Any, cell: Any, order: Any, new: Any, cmp: Any, how: Any, reached: Any,
                phase: Any) -> tuple[Any, Any, Any, bool]:  # fmt: skip
    opname, mods, bits = how
    old = np.zeros(len(cell), dtype=np.uint64)
    ok = np.zeros(len(cell), dtype=bool)
    tried: set[tuple[int, int]] = set()
    changed = False
    for k in order:
        c = int(cell[k])
        o = int(cells[c])
        old[k] = o
        if reached is not None:
            key = (int(phase[k]), c)
            if key in tried or not reached[k] or o != int(cmp[k]):
                continue
            tried.add(key)
        ok[k] = o == int(cmp[k])
        cells[c] = value = apply(opname, o, int(new[k]), int(cmp[k]), mods, bits)
        changed = changed or value != o
    return cells, old, ok, changed


CASES = [
    ("ADD", ("F32",), 32),
    ("ADD", ("F32", "FTZ"), 32),
    ("MIN", ("F32",), 32),
    ("MAX", ("F64",), 64),
    ("ADD", ("F64",), 64),
    ("ADD", (), 32),
    ("ADD", ("64",), 64),
    ("MIN", ("S32",), 32),
    ("MAX", ("S64",), 64),
    ("MIN", (), 32),
    ("INC", (), 32),
    ("DEC", (), 32),
    ("POPC", (), 32),
    ("AND", (), 32),
    ("OR", (), 64),
    ("XOR", (), 32),
    ("EXCH", (), 32),
    ("CAS", (), 32),
    ("CAS", (), 64),
    ("CAST", (), 32),
    ("ADD", ("F16x2",), 32),
    ("MAX", ("BF16x2",), 32),
]


def _floats(rng: Any, n: int, bits: int) -> Any:
    """Words holding floats of every kind: normal, denormal, zeros, infinities, NaNs."""
    fmt, ut = (np.float32, np.uint32) if bits == 32 else (np.float64, np.uint64)
    f = rng.standard_normal(n).astype(fmt) * fmt(rng.choice([1e-3, 1, 1e30], n))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40 if bits == 32 else 1e-310])
    f = np.where(rng.random(n) < 0.2, special.astype(fmt)[rng.integers(0, 6, n)], f)
    return f.astype(fmt).view(ut).astype(np.uint64)


@pytest.mark.parametrize(("opname", "mods", "bits"), CASES)
@pytest.mark.parametrize("words", [1, 5, 300])  # every lane on one word, a few, mostly apart
def test_rounds_serve_as_lane_by_lane(opname: str, mods: tuple[str, ...], bits: int,
                                      words: int) -> None:  # fmt: skip
    rng = np.random.default_rng(words * 1000 + len(mods) * 10 + bits)
    n = 256  # 8 warps
    ut = np.uint32 if bits == 32 else np.uint64
    floating = any(m in mods for m in ("F32", "F64")) and opname in ("ADD", "MIN", "MAX")
    if floating:
        start, new = _floats(rng, 400, bits), _floats(rng, n, bits)
    else:
        top = 1 << bits if bits == 32 else 1 << 63
        start = rng.integers(0, top, 400, dtype=np.uint64)
        new = rng.integers(0, top, n, dtype=np.uint64)
        if opname in ("INC", "DEC"):
            start, new = start % 7, new % 9  # small bounds: wraps at the bound and at zero
    cell = rng.integers(0, words, n)
    cells = start.astype(ut)
    # compares that hold for some lanes: the word's starting value, else another
    cmp = np.where(rng.random(n) < 0.6, start[cell], new[::-1]).astype(np.uint64)
    order = rng.permutation(n)
    spin = opname == "CAST"
    phase = np.arange(n) // 32
    reached = rng.random(n) < 0.8 if spin else None
    want, want_old, want_ok, want_changed = _one_by_one(
        cells.copy(), cell, order, new, cmp, (opname, mods, bits), reached, phase
    )
    got = cells.copy()
    old = np.zeros(n, dtype=np.uint64)
    ok = np.zeros(n, dtype=bool)
    changed = serve(got, cell, order, (new, cmp), (opname, mods, bits), reached, phase, old, ok)
    assert got.tobytes() == want.tobytes()
    assert old.tobytes() == want_old.tobytes()
    assert (ok == want_ok).all()
    assert changed == want_changed


def test_apply_many_is_apply_word_by_word() -> None:
    """Signed minimum of 32-bit words holding negatives, and an add that wraps."""
    old = np.array([0xFFFFFFFF, 5, 0x80000000], dtype=np.uint64)
    val = np.array([3, 0xFFFFFFFE, 0x7FFFFFFF], dtype=np.uint64)
    got = apply_many("MIN", old, val, val, ("S32",), 32)
    assert [int(x) for x in got] == [0xFFFFFFFF, 0xFFFFFFFE, 0x80000000]  # -1, -2, INT_MIN
    got = apply_many("ADD", old, val, val, (), 32)
    assert [int(x) for x in got] == [2, 3, 0xFFFFFFFF]
