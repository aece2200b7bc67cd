"""Write launches.json: the generic atomics' op_misc lab (kernels/genatom.cu,
genatom.sm_90.cubin). Every kernel takes (out, glob, where): where 0 points the generic
pointer at shared memory, 1 at global memory. One CTA of 1 or 4 warps.
Usage: python3 make_launches.py > launches.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab_common"))
from one_cta import launch, write  # noqa: E402

CUBIN = "genatom.sm_90.cubin"
KERNELS = ["ga_none", "ga_u32", "ga_f32", "ga_h2", "ga_bf2", "ga_u64", "ga_f64"]
launches = []
for k in KERNELS:
    for where in (0, 1):
        for w in (1, 4):
            lid = f"{k}_{'global' if where else 'shared'}_w{w}"
            args = [{"zeros": 8192}, {"zeros": 8192}, {"int": where}]
            launches.append(launch(lid, CUBIN, k, (32 * w, 1, 1), args))
write(launches)
