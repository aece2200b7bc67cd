"""Write launches.json for issue 30's atomic-loop probes (deterministic).

Usage: python3 tests/data/trace/atomloops/make_launches.py
Every kernel takes (out, mask, stride, hoff, poff, nb, skew): kernels/al_atomics.cu.
"""

import json
from pathlib import Path

here = Path(__file__).parent
launches: list[dict[str, object]] = []
ALL = -1  # every lane (the harness passes ints)


def add(
    id_: str,
    kernel: str,
    threads: int,
    mask: int,
    stride: int,
    hoff: int,
    poff: int,
    nb: int,
    skew: int = 0,
) -> None:
    size = 8 * (3 * threads + 128)
    launches.append(
        {
            "id": id_,
            "source": "kernels/al_atomics.cu",
            "kernel": kernel,
            "block": [threads, 1, 1],
            "grid": [1, 1, 1],
            "dynamic_smem": 0,
            "args": [{"zeros": size}, mask, stride, hoff, poff, nb, skew],
            "mangled": kernel,
        }
    )


# what one execution costs: one warp, lanes and addresses chosen
#   (name, mask, stride, hoff, poff, nb)
patterns = [
    ("half_one", 0x0000FFFF, 0, 0, 0, 1),  # lanes 0-15 on one address
    ("pair_one", 0x00010001, 0, 0, 0, 1),  # lanes 0 and 16 on one address
    ("two_halves", 0xFF00FF00 - (1 << 32), 1, 0, 0, 8),  # lanes 8-15 and 24-31 on 8 addresses
    ("all_one", ALL, 0, 0, 0, 1),  # 32 lanes on one address
    ("halves_apart", ALL, 0, 1, 0, 2),  # lanes 0-15 on one address, 16-31 on another
    ("quarter_four", 0x0000FFFF, 1, 0, 0, 4),  # lanes 0-15 on 4 addresses
    ("distinct", ALL, 1, 0, 0, 32),  # 32 distinct addresses
    ("bank_pair", 0x00000003, 0, 0, 32, 64),  # lanes 0, 1: one bank, two addresses
    ("bank_pairs", 0x00030003, 0, 2, 32, 64),  # that in each half, on other banks
]
for name, mask, stride, hoff, poff, nb in patterns:
    for kernel in ("al_dadd", "al_fadd", "al_x64"):
        add(f"{kernel[3:]}_{name}", kernel, 32, mask, stride, hoff, poff, nb)
# how the loops of several warps interleave: threads x bins, and warps set apart in time
for kernel in ("al_fadd", "al_dadd", "al_h2add"):
    for threads, nb in ((64, 1), (64, 2), (64, 4), (96, 1), (128, 1)):
        add(f"{kernel[3:]}_t{threads}_b{nb}", kernel, threads, ALL, 1, 0, 0, nb)
    for skew in (300, 3000, 30000):
        add(f"{kernel[3:]}_t64_b1_skew{skew}", kernel, 64, ALL, 1, 0, 0, 1, skew)

(here / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")
print(len(launches), "launches")
