"""Write launches.json: the warp-level instructions' op_misc lab (kernels/warpops.cu,
warpops.sm_90.cubin). Every kernel takes (out, lanes): lanes 0..lanes-1 of every warp run the
operation. One CTA each, 1 and 4 warps, 1 and 32 lanes (16 too for the plain shuffle).
Usage: python3 make_launches.py > launches.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab_common"))
from one_cta import launch, write  # noqa: E402

CUBIN = "warpops.sm_90.cubin"
KERNELS = [
    "w_base",
    "w_bar_base",
    "w_shfl_bfly",
    "w_shfl_bfly_x8",
    "w_shfl_idx",
    "w_shfl_idx_reg",
    "w_shfl_up",
    "w_shfl_down",
    "w_shfl_u64",
    "w_vote_any",
    "w_ballot",
    "w_ballot_x8",
    "w_activemask",
    "w_match_any",
    "w_match_all",
    "w_redux_add",
    "w_redux_min",
    "w_redux_and",
    "w_redux_add_x8",
    "w_syncwarp",
    "w_nanosleep",
    "w_clock",
    "w_globaltimer",
    "w_lds_used",
    "w_lds_unused",
    "w_lds_used_x8",
    "w_lds_after_bar",
]
launches = []


def add(kernel: str, warps: int, lanes: int) -> None:
    args = [{"zeros": 4096}, {"int": lanes}]
    launches.append(launch(f"{kernel}_w{warps}_l{lanes}", CUBIN, kernel, (32 * warps, 1, 1), args))


for k in KERNELS:
    for w in (1, 4):
        for lanes in (1, 32):
            add(k, w, lanes)
add("w_shfl_bfly", 1, 16)
add("w_shfl_bfly", 4, 16)
write(launches)
