"""Write launches.json: every kernel of this lab unswizzled and with its synthesized map,
twice each (the second run checks that the counts are stable). Usage: python3 launches.py"""

import json
from pathlib import Path

# kernel, block, the buffers it takes (bytes), the map synthesized for it (B, M, S)
KERNELS = [
    ("transpose_f32", [32, 8, 1], [4096, 4096], "525"),
    ("transpose_f64", [32, 8, 1], [8192, 8192], "435"),
    ("half_columns", [64, 4, 1], [8192, 8192], "525"),
    ("uint4_rows", [64, 1, 1], [1024, 8192], "343"),
    ("float2_columns", [32, 4, 1], [1024, 8192], "435"),
    ("ldmatrix_tile", [128, 1, 1], [512, 8192], "343"),
]


def tensormap(swizzle: int) -> dict[str, object]:
    return {
        "tensormap": {
            "buffer": {"zeros": 8192},
            "dtype": "UINT32",
            "dims": [32, 64],
            "strides": [128],
            "box": [32, 64],
            "elem_strides": [1, 1],
            "interleave": 0,
            "swizzle": swizzle,  # CU_TENSOR_MAP_SWIZZLE_NONE (0) or _128B (3)
            "l2": 0,
            "oob": 0,
        }
    }


launches = []
for rep in ("", "_again"):
    for kernel, block, buffers, swz in KERNELS:
        for variant in ("none", f"s{swz}"):
            launches.append(
                {
                    "id": f"{kernel}_{variant}{rep}",
                    "cubin": f"swizzled.{variant}.sm_90.cubin",
                    "kernel": kernel,
                    "block": block,
                    "grid": [1, 1, 1],
                    "dynamic_smem": 0,
                    "args": [{"zeros": n} for n in buffers],
                }
            )
    for variant, mode in (("none", 0), ("s343", 3)):
        launches.append(
            {
                "id": f"tma_rows_{variant}{rep}",
                "cubin": f"tma_tile.{variant}.sm_90a.cubin",
                "kernel": "tma_rows",
                "block": [64, 1, 1],
                "grid": [1, 1, 1],
                "dynamic_smem": 0,
                "args": [tensormap(mode), {"zeros": 1024}],
            }
        )
Path(__file__).with_name("launches.json").write_text(json.dumps({"launches": launches}, indent=1))
print(len(launches), "launches")
