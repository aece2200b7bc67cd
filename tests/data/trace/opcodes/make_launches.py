"""Write inputs/ and launches.json for the opcode lab (run from this folder).

The inputs are deterministic and hold the edge cases each opcode must get right: NaN,
infinities, negative zero and out-of-range values for the compares and conversions,
values past the saturation bounds for the packs. Usage: python3 make_launches.py"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
(HERE / "inputs").mkdir(exist_ok=True)


def save(name: str, array: np.ndarray) -> dict[str, str]:
    (HERE / "inputs" / f"{name}.bin").write_bytes(array.tobytes())
    return {"file": f"inputs/{name}.bin"}


rng = np.random.default_rng(26)
floats = rng.integers(-20, 80, 64).astype(np.float32)
floats[[3, 9, 17]] = [np.nan, np.inf, -np.inf]
floats[[5, 6]] = [0.5, -0.0]
halves = rng.normal(0, 2, 128).astype(np.float16)
halves[[1, 2, 3, 70]] = [np.nan, np.inf, -0.0, np.nan]
ha = rng.normal(0, 1, 32).astype(np.float16)
hb = ha.copy()
hb[::3] = rng.normal(0, 1, 11).astype(np.float16)
ha[4], hb[7] = np.float16(np.nan), np.float16(np.nan)
ints = rng.integers(-70000, 70000, 64).astype(np.int32)
ints[[0, 1, 2, 3, 4, 5]] = [127, 128, -128, -129, 65535, 65536]
tensor = (np.arange(64 * 64, dtype=np.uint32) * 2654435761).astype(np.uint32)
gints = rng.integers(-1000, 1000, 1024).astype(np.int32)
acc = rng.integers(-1000, 1000, 64 * 64).astype(np.int32)
amm = rng.integers(-300, 300, 64).astype(np.int32)  # a: 0..31, c: 32..63
amm[[0, 1, 2, 3]] = [2**31 - 1, 2**31 - 3, -(2**31), -5]  # the add wraps; negative as unsigned
amm[[32, 33, 34, 35]] = [7, -(2**31), 2**31 - 1, 3]


def tmap(buffer: dict[str, object]) -> dict[str, object]:
    return {
        "tensormap": {
            "buffer": buffer, "dtype": "UINT32", "dims": [64, 64], "strides": [256],
            "box": [32, 32], "elem_strides": [1, 1], "interleave": 0, "swizzle": 0, "l2": 0,
            "oob": 0,
        }
    }  # fmt: skip


def launch(lid, cubin, kernel, block, args, dumps):
    return {
        "id": lid, "cubin": cubin, "kernel": kernel, "block": [block, 1, 1],
        "grid": [1, 1, 1], "dynamic_smem": 0, "args": args, "dumps": dumps,
    }  # fmt: skip


launches = [
    launch("float_set_local", "ops90.sm_90.cubin", "float_set_local", 64,
           [{"zeros": 256}, {"zeros": 256}, save("floats", floats), {"int": 0}], [0, 1]),
    launch("half_ops", "ops90.sm_90.cubin", "half_ops", 32,
           [{"zeros": 512}, {"zeros": 128}, save("halves", halves), save("ha", ha),
            save("hb", hb)], [0, 1]),
    launch("int_narrow", "ops90.sm_90.cubin", "int_narrow", 32,
           [{"zeros": 512}, save("ints", ints)], [0]),
    launch("fences", "ops90.sm_90.cubin", "fences", 32, [{"zeros": 128}, {"int": 5}], [0]),
    launch("uniform_coords", "ops90a.sm_90a.cubin", "uniform_coords", 128,
           [tmap(save("tensor", tensor)), {"zeros": 4096}, {"int": 0x0F0F0001},
            {"int": 0x30000000}], [1]),
    launch("async_more", "ops90a.sm_90a.cubin", "async_more", 128,
           [tmap(save("acc", acc)), {"zeros": 4096}, save("gints", gints)], [0, 1]),
    launch("add_min_max", "ops90.sm_90.cubin", "add_min_max", 32,
           [{"zeros": 1024}, save("amm", amm), {"int": 5}], [0]),
]  # fmt: skip
# the float threshold is passed as its bits: 0.5f
launches[0]["args"][3] = {"int": int(np.float32(0.5).view(np.int32))}
(HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1))
print(len(launches), "launches")
