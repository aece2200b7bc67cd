"""Write inputs/ and launches.json for the debug-build lab (run from this folder): each
kernel of kernels/debug_builds.cu launched from its -G cubin (``ID_g``) and its -O3 cubin
(``ID_o3``) with the same arguments. Usage: python3 make_launches.py"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
(HERE / "inputs").mkdir(exist_ok=True)


def save(name: str, array: np.ndarray) -> dict[str, str]:
    (HERE / "inputs" / f"{name}.bin").write_bytes(array.tobytes())
    return {"file": f"inputs/{name}.bin"}


rng = np.random.default_rng(29)
matrix = rng.normal(0, 1, (64, 64)).astype(np.float32)
words = rng.integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)
walk = rng.integers(0, 64, 33).astype(np.int32)
walk[32] = 5  # the recursion's depth
ints = rng.integers(-1000, 1000, 128).astype(np.int32)
kernels = [
    ("transpose", [32, 8, 1], [2, 2, 1], [{"zeros": 16384}, save("matrix", matrix), {"int": 64}]),
    ("reduce", [256, 1, 1], [2, 1, 1], [{"zeros": 8}, save("words", words)]),
    ("nested", [64, 1, 1], [1, 1, 1], [{"zeros": 256}, {"file": "inputs/words.bin"}]),
    ("stack_array", [256, 1, 1], [1, 1, 1], [{"zeros": 1024}, {"file": "inputs/words.bin"}]),
    ("fptr", [64, 1, 1], [1, 1, 1], [{"zeros": 256}, {"file": "inputs/words.bin"}]),
    ("virtual_call", [64, 1, 1], [1, 1, 1], [{"zeros": 256}, {"file": "inputs/words.bin"}]),
    ("cub_block", [128, 1, 1], [1, 1, 1], [{"zeros": 512}, save("ints", ints)]),
    ("recursive_walk", [32, 1, 1], [1, 1, 1], [{"zeros": 128}, save("walk", walk)]),
]
kernels += [  # the atomics kernel, one pattern a launch (its mode)
    ("atomics", [64, 1, 1], [1, 1, 1], [{"zeros": 768}, {"file": "inputs/words.bin"}, {"int": m}])
    for m in range(5)
]  # fmt: skip
names = {0: "add_each", 1: "add_pairs", 2: "add_one", 3: "add_wide", 4: "cas"}
launches = [
    {
        "id": f"{kernel if kernel != 'atomics' else names[args[2]['int']]}_{build}",
        "cubin": f"debug_builds.{build}.sm_90.cubin",
        "kernel": kernel,
        "block": block,
        "grid": grid,
        "dynamic_smem": 0,
        "args": args,
        "dumps": [0],
    }
    for kernel, block, grid, args in kernels
    for build in ("g", "o3")
]
(HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")
