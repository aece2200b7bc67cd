"""Write launches.json: the barrier completions' op_misc lab (kernels/barrules.cu,
barrules.sm_90a.cubin). Every kernel takes (out, in, n); one CTA of 1 or 4 warps each.
Usage: python3 make_launches.py > launches.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab_common"))
from one_cta import launch, write  # noqa: E402

CUBIN = "barrules.sm_90a.cubin"
KERNELS = ["r_bar1", "r_bar2", "r_bar2_ldc", "r_bar2_sts", "r_bar2_ldg", "r_bar2_shfl"]
KERNELS += ["r_div_bar2", "r_init_bar1", "r_init_bar2", "r_init1_bar2", "r_init_fence_bar1"]
KERNELS += ["r_init_fence_bar2", "r_fence_bar1", "r_fence_bar2"]
launches = []
for k in KERNELS:
    for w in (1, 4):
        args = [{"zeros": 4096}, {"zeros": 4096}, {"int": 1}]
        launches.append(launch(f"{k}_w{w}", CUBIN, k, (32 * w, 1, 1), args))
write(launches)
