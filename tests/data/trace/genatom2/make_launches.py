"""Write launches.json: the generic atomics' op_atom lab, second round (kernels/genatom2.cu,
genatom2.sm_90.cubin). Every kernel takes (out, glob, where, mask, off, stride): where 0 points
the generic pointer at shared memory, 1 at global memory; lane L of warp W does the atomic
where bit L of mask is on and W is not off; lane i works on word i * stride (0: one word). One
CTA of 1 or 4 warps.
Usage: python3 make_launches.py > launches.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab_common"))
from one_cta import launch, write  # noqa: E402

CUBIN = "genatom2.sm_90.cubin"
#: lane patterns: (mask as the harness's 4-byte int, the warp kept off, stride)
PATTERNS = {
    "all": (-1, -1, 1),
    "lo16": (0x0000FFFF, -1, 1),  # lanes 0-15: one half-warp
    "hi16": (-0x10000, -1, 1),  # lanes 16-31 (0xffff0000)
    "odd": (-0x55555556, -1, 1),  # lanes 1, 3, ..., 31 (0xaaaaaaaa)
    "one": (1, -1, 1),  # lane 0
    "off1": (-1, 1, 1),  # every lane but warp 1's (with 1 warp: none)
    "off0": (-1, 0, 1),  # warp 0 kept off (with 1 warp: no atomic at all)
    "same": (-1, -1, 0),  # every lane on word 0
}
#: (kernel, pattern, warps), each on shared and on global memory
RUNS = [
    *[("g2_add32", p, 1) for p in ("lo16", "odd", "one", "off0", "same")],
    ("g2_add32", "off1", 4),
    *[("g2_add64", p, 1) for p in ("lo16", "hi16", "odd", "one")],
    ("g2_cas32", "all", 1),
    ("g2_cas32", "all", 4),
    ("g2_cas32", "same", 1),
    ("g2_cas64", "all", 1),
    ("g2_cas64", "lo16", 1),
    *[
        (k, "all", 1)
        for k in ("g2_exch", "g2_min_s", "g2_max_s", "g2_min_u", "g2_max_u")
        + ("g2_and", "g2_or", "g2_xor", "g2_inc")
    ],
    ("g2_exch", "same", 1),
    ("g2_inc", "same", 1),
    ("g2_half", "all", 1),
]
launches = []
for k, pattern, w in RUNS:
    mask, off, stride = PATTERNS[pattern]
    for where in (0, 1):
        lid = f"{k}_{'global' if where else 'shared'}_{pattern}_w{w}"
        args = [{"zeros": 8192}, {"zeros": 8192}]
        args += [{"int": v} for v in (where, mask, off, stride)]
        launches.append(launch(lid, CUBIN, k, (32 * w, 1, 1), args))
write(launches)
