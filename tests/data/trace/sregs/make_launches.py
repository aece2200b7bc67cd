"""Write launches.json: the special-register and loop op_misc lab (kernels/sregs.cu,
sregs.sm_90.cubin). Every kernel takes (out, in, n). The special-register kernels with a 1D
block of 128 threads and a 2D one of 32 x 4; the loops with both blocks and n = 1 and 4; the
transpose with blocks of 32 x 1, 32 x 4 and 32 x 8 (32, 8 and 4 passes).
Usage: python3 make_launches.py > launches.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab_common"))
from one_cta import launch, write  # noqa: E402

CUBIN = "sregs.sm_90.cubin"
SREGS = ["s_none", "s_tid_x", "s_tid_y", "s_tid_z", "s_ntid_y", "s_ctaid_y", "s_laneid"]
SREGS += ["s_warpid", "s_smid", "s_lanemask_lt", "s_linear", "s_bar"]
LOOPS = ["s_loop", "s_loop_sts", "s_loop_lds_stg", "s_loop_bar"]
launches = []


def add(kernel: str, block: tuple[int, int], n: int) -> None:
    lid = f"{kernel}_b{block[0]}x{block[1]}_n{n}"
    args = [{"zeros": 8192}, {"zeros": 4096}, {"int": n}]
    launches.append(launch(lid, CUBIN, kernel, (*block, 1), args))


for k in SREGS:
    for b in ((128, 1), (32, 4)):
        add(k, b, 1)
for k in LOOPS:
    for b in ((128, 1), (32, 4)):
        for n in (1, 4):
            add(k, b, n)
for b in ((32, 1), (32, 4), (32, 8)):
    add("s_transpose", b, 1)
write(launches)
