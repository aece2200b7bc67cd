"""Write launches.json: the barriers' op_misc lab (kernels/barriers.cu, barriers.sm_90.cubin).
Every kernel takes (out, in, n): one CTA of 1 or 4 warps (b_arrive_sync: 2 and 4, its first
warp arriving at a named barrier the others wait at); b_bar_loop_sts with n = 1 and 4.
Usage: python3 make_launches.py > launches.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab_common"))
from one_cta import launch, write  # noqa: E402

CUBIN = "barriers.sm_90.cubin"
KERNELS = ["b_none", "b_bar1", "b_bar2", "b_bar4", "b_bar2_alu", "b_bar2_sts", "b_bar2_lds"]
KERNELS += ["b_bar2_stg", "b_bar2_clock", "b_bar2_shfl", "b_named", "b_named2", "b_count2"]
KERNELS += ["b_mbar_init", "b_lemask", "b_gemask", "b_gtmask", "b_eqmask"]
launches = []


def add(kernel: str, warps: int, n: int = 1) -> None:
    lid = f"{kernel}_w{warps}" + (f"_n{n}" if n != 1 else "")
    args = [{"zeros": 8192}, {"zeros": 4096}, {"int": n}]
    launches.append(launch(lid, CUBIN, kernel, (32 * warps, 1, 1), args))


for k in KERNELS:
    for w in (1, 4):
        add(k, w)
for w in (2, 4):
    add("b_arrive_sync", w)
for w in (1, 4):
    for n in (1, 4):
        add("b_bar_loop_sts", w, n)
write(launches)
