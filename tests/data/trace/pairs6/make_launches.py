"""Write pairs6's inputs and launches.json (issue 30): which reads whose lanes pair up merge
their phases when the merged phase asks one bank for two words.

pairs5 showed that such a read keeps its unmerged phases whatever the number of lanes
(16 to 32), while a few reads of the earlier probes merge with a conflict. These reads are
drawn at random (fixed seed) around that question, plus a few chosen ones: lanes come in
slots of two (distance 1: lanes 2p and 2p + 1; distance 2: n and n ^ 2), a slot is off,
half on (its partner off: a vacuous pair) or on with both lanes reading one element; the
elements come from a few bank sets with a few words each; some reads repeat the lower
half-warp in the upper one. Run from this folder: ``python3 make_launches.py``. Each read is
one predicated LDS.64 (``pr_ld64``, ``double bins[256]``: element k on bank pair k % 16) or
LDS.128 (``pr_ld128``, ``float4 bins[128]``: element k on bank set k % 8), lane l reading
element idx[l], -1 leaving it off (pairs5's kernels).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

OFF = -1
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lab"))
from pair_reads import write  # noqa: E402 (the labs' shared writer)

KERNELS = {"pr_ld64": (16, 256), "pr_ld128": (8, 128)}  # bank sets, elements


def slots(d: int) -> list[tuple[int, int]]:
    return [(n, n ^ d) for n in range(32) if not n & d]


def draw(rng: random.Random, kernel: str) -> list[int]:
    sets, elements = KERNELS[kernel]
    d = rng.choice((1, 2))
    p_on = rng.choice((0.3, 0.5, 0.75, 1.0))
    p_half = rng.choice((0.0, 0.3, 0.6, 1.0))
    used = rng.sample(range(sets), rng.randint(1, sets))
    words = rng.choice((1, 2, 2, 3, 4))
    pool = [s + sets * rng.randrange(elements // sets) for s in used for _ in range(words)]
    idx = [OFF] * 32
    for a, b in slots(d):
        if rng.random() >= p_on:
            continue
        k = rng.choice(pool)
        if rng.random() < p_half:
            idx[rng.choice((a, b))] = k
        else:
            idx[a] = idx[b] = k
    if rng.random() < 0.25:
        idx = idx[:16] + idx[:16]
    return idx


def chosen() -> dict[str, tuple[str, list[int]]]:
    """Reads set against the earlier ones: lds_pairs_d16's mirror with the clash at lane
    distance 4, r2_001_double_ld's mirror with 2-way clashes, a_mirror's clash at 4."""
    ld = "pr_ld64"

    def at(pairs: dict[int, int]) -> list[int]:
        idx = [OFF] * 32
        for n, k in pairs.items():
            idx[n] = k
        return idx

    r2_001 = [44, 40, OFF, OFF, 60, 56, OFF, OFF, 12, 8, OFF, OFF, 28, 24, OFF, OFF] * 2
    return {
        "m_d16_c01": (ld, at({0: 0, 1: 32, 16: 0, 17: 32})),
        "m_d16_c04": (ld, at({0: 0, 4: 32, 16: 0, 20: 32})),
        "m_d16_c04_15": (ld, at({0: 0, 1: 1, 4: 32, 5: 33, 16: 0, 17: 1, 20: 32, 21: 33})),
        "m_r2_001": (ld, r2_001),
        "m_r2_001_lo": (ld, r2_001[:16] + [OFF] * 16),
        "m_r2_001_2way": (
            ld,
            [44, 40, OFF, OFF, 60, 56, OFF, OFF, 13, 9, OFF, OFF, 29, 25, OFF, OFF] * 2,
        ),
        "m_r2_001_c01": (
            ld,
            [44, 60, OFF, OFF, 40, 56, OFF, OFF, 12, 28, OFF, OFF, 8, 24, OFF, OFF] * 2,
        ),
        "m_r2_001_more": (
            ld,
            [44, 40, OFF, OFF, 60, 56, OFF, OFF, 12, 8, OFF, OFF, 28, 24, OFF, OFF]
            + [44, 40, OFF, OFF, 60, 56, OFF, OFF, 12, 8, OFF, OFF, 28, 25, OFF, OFF],
        ),
        "m_mirror_c04": (
            ld,
            [0, 65, OFF, OFF, 16, 66, OFF, OFF, 67, 68, OFF, OFF, 69, 70, OFF, OFF] * 2,
        ),
        "m_uniform_lo": (
            ld,
            [0, 1, OFF, OFF, 16, 17, OFF, OFF, OFF, OFF, OFF, OFF, OFF, OFF, OFF, OFF]
            + [2, 3, OFF, OFF, 4, 5, OFF, OFF, 6, 7, OFF, OFF, 8, 9, OFF, OFF],
        ),
        "m_uniform_hi": (
            ld,
            [2, 3, OFF, OFF, 4, 5, OFF, OFF, 6, 7, OFF, OFF, 8, 9, OFF, OFF]
            + [0, 1, OFF, OFF, 16, 17, OFF, OFF, OFF, OFF, OFF, OFF, OFF, OFF, OFF, OFF],
        ),
        "m_vab08_lo": (
            ld,
            [4, 20, 4, 20, 5, 21, 5, 21, 6, 22, 6, 22, 7, 23, 7, 23, 19] + [OFF] * 15,
        ),
        "m_vab08_one": (
            ld,
            [OFF] * 15 + [19, 4, 20, 4, 20, 5, 21, 5, 21, 6, 22, 6, 22, 7, 23, 7, 39],
        ),
        "m_vab08_full": (
            ld,
            [OFF] * 15 + [19, 4, 20, 4, 20, 5, 21, 5, 21, 6, 22, 6, 22, 7, 23, 7, 23][:17],
        ),
    }


def reads() -> dict[str, tuple[str, list[int]]]:
    rng = random.Random(20261205)
    out = chosen()
    for i in range(200):
        out[f"r64_{i:03d}"] = ("pr_ld64", draw(rng, "pr_ld64"))
    for i in range(80):
        out[f"r128_{i:03d}"] = ("pr_ld128", draw(rng, "pr_ld128"))
    return out


def main() -> None:
    # every fourth read launched twice (``_r2``): the same read in two launches
    write(HERE, reads(), lambda n, name: (name, f"{name}_r2") if n % 4 == 0 else (name,))


if __name__ == "__main__":
    main()
