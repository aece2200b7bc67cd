"""Write pairs5's inputs and launches.json (issue 30): which 16-lane and wider reads merge
their pair phases when the merged phase asks one bank for two words.

Run from this folder: ``python3 make_launches.py``. Each read is one predicated LDS.64
(``pr_ld64``, ``double bins[256]``: element k on bank pair k % 16) or LDS.128 (``pr_ld128``,
``float4 bins[128]``: element k on bank set k % 8); lane l reads element idx[l], -1 leaves
it off. The reads vary where the clash sits (which half-warp, which lanes), how the lanes
pair up (distance 1 or 2, vacuously or by equal addresses) and how many lanes are on.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

OFF = -1
HERE = Path(__file__).resolve().parent


def bit1_clear() -> list[int]:
    """The 16 lanes with bit 1 clear: distance 2 pairs up vacuously."""
    return [n for n in range(32) if not n & 2]


ODD = list(range(1, 32, 2))
EVEN = list(range(0, 32, 2))


def build(kernel: str, lanes: list[int], clash: dict[int, int], partners: int = 0) -> list[int]:
    """idx for one read: ``clash`` gives lanes their elements (two lanes on one bank set with
    different words); the other ``lanes`` get elements of bank sets no other lane in their
    phase scope uses (the warp for LDS.64, a half-warp for LDS.128), so that the clash is the
    only conflict. ``partners`` (1 or 2): every lane not in ``lanes`` whose partner at that
    distance is on reads the partner's element (pairs by equal addresses)."""
    sets, base = (16, 64) if kernel == "pr_ld64" else (8, 32)
    scope = 32 if kernel == "pr_ld64" else 16
    idx = [OFF] * 32
    for lane, element in clash.items():
        idx[lane] = element
    for lane in lanes:
        if lane in clash:
            continue
        first = lane - lane % scope
        used = {idx[n] % sets for n in range(first, first + scope) if idx[n] != OFF}
        free = [s for s in range(sets) if s not in used]
        assert free, (kernel, lanes, clash)
        idx[lane] = base + free[0] + sets * (lane // scope)
    if partners:
        for n in range(32):
            if idx[n] == OFF and idx[n ^ partners] != OFF:
                idx[n] = idx[n ^ partners]
    return idx


def only(idx: list[int], lanes: list[int]) -> list[int]:
    """``idx`` with every lane not in ``lanes`` off."""
    return [k if n in lanes else OFF for n, k in enumerate(idx)]


def mirror(idx: list[int]) -> list[int]:
    """The upper half-warp reading what the lower half reads (lane n as lane n - 16)."""
    return idx[:16] + idx[:16]


def reads() -> dict[str, tuple[str, list[int]]]:
    b1 = bit1_clear()
    ld, lq = "pr_ld64", "pr_ld128"
    lo01 = build(ld, b1, {0: 0, 1: 16})
    k32 = build(ld, b1, {0: 0, 1: 16}, partners=2)
    return {
        # LDS.64, 16 lanes with bit 1 clear: where the clash sits
        "a_lo01": (ld, lo01),
        "a_hi1617": (ld, build(ld, b1, {16: 0, 17: 16})),
        "a_hi2021": (ld, build(ld, b1, {20: 0, 21: 16})),
        "a_both": (ld, build(ld, b1, {0: 0, 1: 16, 16: 1, 17: 17})),
        "a_mirror": (ld, mirror(lo01)),
        "a_c04": (ld, build(ld, b1, {0: 0, 4: 16})),
        "a_c45": (ld, build(ld, b1, {4: 0, 5: 16})),
        "a_c1213": (ld, build(ld, b1, {12: 0, 13: 16})),
        "a_c0_12": (ld, build(ld, b1, {0: 0, 12: 16})),
        "a_lo3way": (ld, build(ld, b1, {0: 0, 1: 16, 4: 32})),
        # ... with lanes whose distance-2 partner reads the same element: 20, 24, 32 lanes
        "a_k20": (ld, only(k32, b1 + [2, 3, 18, 19])),
        "a_k24": (ld, only(k32, b1 + [2, 3, 6, 7, 18, 19, 22, 23])),
        "a_k32": (ld, k32),
        "a_k17": (ld, only(k32, b1 + [2])),
        "a_clean": (ld, build(ld, b1, {})),
        # odd (or even) lanes: distance 1 pairs up vacuously
        "b_odd_lo": (ld, build(ld, ODD, {1: 0, 3: 16})),
        "b_odd_lo57": (ld, build(ld, ODD, {5: 0, 7: 16})),
        "b_odd_hi": (ld, build(ld, ODD, {17: 0, 19: 16})),
        "b_odd_both": (ld, build(ld, ODD, {1: 0, 3: 16, 17: 1, 19: 17})),
        "b_even_lo": (ld, build(ld, EVEN, {0: 0, 2: 16})),
        # lanes 2k and 2k + 1 on one element, 24 and 32 lanes
        "c_d1_k24": (ld, build(ld, [*range(0, 12, 2), *range(16, 28, 2)], {0: 0, 2: 16}, 1)),
        "c_d1_k32": (ld, build(ld, EVEN, {0: 0, 2: 16}, partners=1)),
        # LDS.128 (merged phases: the half-warps)
        "p_lo01": (lq, build(lq, b1, {0: 0, 1: 8})),
        "p_hi1617": (lq, build(lq, b1, {16: 0, 17: 8})),
        "p_both": (lq, build(lq, b1, {0: 0, 1: 8, 16: 1, 17: 9})),
        "p_q1_89": (lq, build(lq, b1, {8: 0, 9: 8})),
        "p_lo16_d1": (lq, build(lq, list(range(0, 16, 2)), {0: 0, 2: 8}, partners=1)),
        "p_k32_d1": (lq, build(lq, EVEN, {0: 0, 2: 8}, partners=1)),
        "p_odd_q0": (lq, build(lq, ODD, {1: 0, 3: 8})),
        "p_odd_q1": (lq, build(lq, ODD, {9: 0, 11: 8})),
        "p_clean": (lq, build(lq, b1, {})),
    }


def main() -> None:
    launches = []
    for name, (kernel, idx) in reads().items():
        assert len(idx) == 32 and all(-1 <= k < (256 if kernel == "pr_ld64" else 128) for k in idx)
        (HERE / "inputs" / f"{name}.bin").write_bytes(struct.pack("<32i", *idx))
        for rid in (name, f"{name}_r2"):
            launches.append(
                {
                    "id": rid,
                    "source": "kernels/pr.cu",
                    "kernel": kernel,
                    "block": [32, 1, 1],
                    "grid": [1, 1, 1],
                    "dynamic_smem": 0,
                    "args": [{"zeros": 512}, {"file": f"inputs/{name}.bin"}],
                    "mangled": kernel,
                }
            )
    (HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")


if __name__ == "__main__":
    main()
