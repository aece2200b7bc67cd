"""Write launches.json for issue 30's probes of the compare-and-swap loops (deterministic).

Usage: python3 tests/data/trace/casloops/make_launches.py
Every cl_ kernel takes (out, zmask, nb, stride, skew, mode): kernels/cl_atomics.cu. The ev_
launches run tests/data/trace/everyday's binary again (ev_atomics.sm_90.cubin, copied here).
Every launch is made twice (the second's id ends in _r2): the counters of the two agree
where the loops' order is a rule and not the warps' timing.
"""

import json
from pathlib import Path

here = Path(__file__).parent
launches: list[dict[str, object]] = []
ALL = -1  # every lane (the harness passes ints)


def cl(
    id_: str,
    kernel: str,
    threads: int,
    zmask: int,
    nb: int = 1,
    stride: int = 1,
    skew: int = 0,
    mode: int = 0,
    rows: int = 3,
) -> None:
    launches.append(
        {
            "id": id_,
            "source": "kernels/cl_atomics.cu",
            "kernel": kernel,
            "block": [threads, 1, 1],
            "grid": [1, 1, 1],
            "dynamic_smem": 0,
            "args": [{"zeros": 8 * (rows * threads + 64)}, zmask, nb, stride, skew, mode],
            "mangled": kernel,
        }
    )


def ev(id_: str, kernel: str, threads: int, nb: int, elem: int) -> None:
    launches.append(
        {
            "id": id_,
            "source": "kernels/ev_atomics.cu",
            "kernel": kernel,
            "block": [threads, 1, 1],
            "grid": [1, 1, 1],
            "dynamic_smem": 0,
            "args": [{"zeros": 64 * elem}, nb],
            "mangled": kernel,
        }
    )


# one warp on one address: which lanes one execution serves when swaps change nothing
#   zmask: the lanes whose swap changes nothing
MASKS = {
    "none": 0,
    "l0": 0x1,
    "l01": 0x3,
    "l0_16": 0x10001,
    "l0to3": 0xF,
    "l0to15": 0xFFFF,
    "l16": 0x10000,
    "even": 0x55555555,
    "all": ALL,
}
for name, zmask in MASKS.items():
    cl(f"add64_{name}", "cl_add64", 32, zmask)
for name in ("none", "l0", "l01", "l0_16", "l0to15", "all"):
    cl(f"dadd_{name}", "cl_dadd", 32, MASKS[name])
    cl(f"fadd_{name}", "cl_fadd", 32, MASKS[name])
for kernel in ("cl_or64", "cl_xor64", "cl_and64"):
    for name in ("l0", "l0_16", "l0to15"):
        cl(f"{kernel[3:]}_{name}", kernel, 32, MASKS[name])
for kernel in ("cl_min64", "cl_max64"):
    for mode in (0, 1):
        cl(f"{kernel[3:]}_m{mode}", kernel, 32, 0, mode=mode)
# two half-warps on two addresses (lanes 0-15 on bin 0, 16-31 on bin 1 with stride 0: no),
# 8 bins: lanes l, l+8, l+16, l+24 on one
cl("add64_b8_l0", "cl_add64", 32, 0x1, nb=8)
cl("add64_b8_none", "cl_add64", 32, 0, nb=8)
# two warps on one address
for name in ("none", "l0", "l0_16"):
    cl(f"add64_t64_{name}", "cl_add64", 64, MASKS[name])
for name in ("none", "l0"):
    cl(f"dadd_t64_{name}", "cl_dadd", 64, MASKS[name])
    cl(f"fadd_t64_{name}", "cl_fadd", 64, MASKS[name])
cl("add64_t64_b8_l0", "cl_add64", 64, 0x1, nb=8)
# ev_u64's loops, each begun by both warps together
for nb in (1, 8):
    cl(f"u64sync_t64_b{nb}", "cl_u64sync", 64, 0, nb=nb, stride=1)
# the __half2 loop: two warps, one address, clocks kept; set apart by skew cycles
for skew in (0, 100, 300, 1000):
    cl(f"h2add_t64_skew{skew}", "cl_h2add", 64, 0, skew=skew)
cl("h2add_t64_old", "cl_h2add", 64, 0, mode=1)
cl("h2add_t32", "cl_h2add", 32, 0)
cl("fadd_t64_skew0", "cl_fadd", 64, 0)
cl("fadd_t64_skew300", "cl_fadd", 64, 0, skew=300)
# ev_h2add's and ev_fadd's shape (the atomic right after the barrier) with the SM clock
cl("h2ev_t64_b1", "cl_h2ev", 64, 0)
cl("h2ev_t64_b2", "cl_h2ev", 64, 0, nb=2)
cl("h2ev_t128_b1", "cl_h2ev", 128, 0)
cl("fev_t64_b1", "cl_fev", 64, 0)
# ev_u64's loops as there, the clock read after each
for nb in (1, 8):
    cl(f"u64ev_t64_b{nb}", "cl_u64ev", 64, 0, nb=nb, rows=7)
# tests/data/trace/everyday's binary again
ev("ev_h2add_t64_b1", "ev_h2add", 64, 1, 4)
ev("ev_fadd_t64_b1", "ev_fadd", 64, 1, 4)
ev("ev_u64_t64_b1", "ev_u64", 64, 1, 8)
ev("ev_u64_t64_b8", "ev_u64", 64, 8, 8)
launches += [dict(x, id=f"{x['id']}_r2") for x in launches]
(here / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")
print(len(launches), "launches")
