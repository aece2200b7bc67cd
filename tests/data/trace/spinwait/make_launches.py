"""Write launches.json and inputs/in1024.bin: the spin-wait kernels' lab (kernels/spinwait.cu,
spinwait.sm_90.cubin) for the GPU: every kernel but ``sw_deadlock``, each launch's output and
flags read back after it (``sw_deep`` 16 calls deep: the GPU's default stack of 1 KiB a
thread holds that, not the 128 of the tests). Nothing is counted: how often a spin loop
turns is the GPU's timing; what the blocks and warps leave in memory is not.

``inputs/in1024.bin``: 1024 int32, ``(37 * i) % 101 - 50`` (negative and positive, no
pattern a wrong order would keep). Usage: python3 make_launches.py > launches.json
"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
IN = {"file": "inputs/in1024.bin"}
launches = []


def launch(lid, kernel, grid, block, args, dumps):
    launches.append(
        {
            "id": lid,
            "cubin": "spinwait.sm_90.cubin",
            "kernel": kernel,
            "block": [block, 1, 1],
            "grid": list(grid),
            "cluster": [1, 1, 1],
            "dynamic_smem": 0,
            "args": args,
            "dumps": dumps,
        }
    )


for s in (2, 4):
    launch(f"splitk_s{s}", "sw_splitk", (1, 1, s), 128, [IN, {"zeros": 512}, {"zeros": 4}], [1, 2])
launch("handoff_shared", "sw_handoff_shared", (1, 1, 1), 128, [IN, {"zeros": 128}], [1])
FLAG = {"zeros": 4}
launch("handoff_global", "sw_handoff_global", (1, 1, 1), 128, [IN, {"zeros": 128}, FLAG], [1, 2])
launch("two_waits", "sw_two_waits", (1, 1, 1), 128, [IN, {"zeros": 512}, {"zeros": 8}], [1, 2])
for g in (4, 8):
    launch(f"reverse_g{g}", "sw_reverse", (g, 1, 1), 64, [IN, {"zeros": 256}, {"zeros": 4}], [1, 2])
for r in (1, 3):
    launch(f"halves_r{r}", "sw_halves", (1, 1, 1), 32, [IN, {"zeros": 64}, {"int": r}], [1])
for g in (8, 16):
    flags = {"zeros": 4 * (g // 2 + 1)}
    launch(f"relay_g{g}", "sw_relay", (g, 1, 1), 64, [IN, {"zeros": 256 * g}, flags], [1, 2])
for b, threads in ((3, 64), (2, 128)):
    args = [IN, {"zeros": 128 * b}, {"int": 8}]
    launch(f"tiles_b{b}x{threads}", "sw_tiles", (b, 1, 1), threads, args, [1])
launch("deep_g4_d16", "sw_deep", (4, 1, 1), 64, [IN, {"zeros": 1024}, FLAG, {"int": 16}], [1, 2])

if __name__ == "__main__":
    (HERE / "inputs").mkdir(exist_ok=True)
    ((np.arange(1024, dtype=np.int64) * 37) % 101 - 50).astype(np.int32).tofile(HERE / IN["file"])
    print(json.dumps({"launches": launches}, indent=1))
