"""Write launches.json: the global-memory instructions' op_misc lab (kernels/globalops.cu,
globalops.sm_90.cubin). Every kernel takes (out, in, lanes): lanes 0..lanes-1 of every warp run
the operation. One CTA each, 1 and 4 warps, 1 and 32 lanes.
Usage: python3 make_launches.py > launches.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab_common"))
from one_cta import launch, write  # noqa: E402

CUBIN = "globalops.sm_90.cubin"
KERNELS = [
    "g_base",
    "g_stg",
    "g_stg_x4",
    "g_ldg_stg",
    "g_atomg",
    "g_atomg_ret",
    "g_red",
    "g_ldg_off",
    "g_stg_off",
    "g_st_generic_off",
    "g_ld_generic_off",
    "g_atomg_off",
    "g_red_off",
    "g_sts_off",
    "g_ldg_sts",
    "g_lds_stg",
    "g_tile",
]
launches = []


def add(kernel: str, warps: int, lanes: int) -> None:
    args = [{"zeros": 8192}, {"zeros": 4096}, {"int": lanes}]
    launches.append(launch(f"{kernel}_w{warps}_l{lanes}", CUBIN, kernel, (32 * warps, 1, 1), args))


for k in KERNELS:
    for w in (1, 4):
        for lanes in (1, 32):
            add(k, w, lanes)
write(launches)
