"""Write launches.json and inputs/p128.bin: the view kernel's lab (view.cu, view.sm_90.cubin).

``view_reverse(View v, float *out)`` takes ``struct View { float *p; int n; int stride; }``
by value (16 bytes: the pointer at 0, ``n`` at 8, ``stride`` at 12), as CuTe passes a
Tensor. Each launch gives the struct's three fields as a host program does and reads back
``out``: thread t < n stores ``p[t]`` to shared word ``t * stride`` and writes
``out[t] = p[n - 1 - t]``. The strides run through the bank-conflict degrees (1 to 32 lanes
a bank, a stride of 33 none), with whole, partial and empty warps. ``tile`` holds 1024
words, so ``(n - 1) * stride < 1024`` in every launch.
Usage: python3 make_launches.py > launches.json
"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
P = "inputs/p128.bin"  # the 128 floats 1, 4, 7, ..., 382

launches = []
for block, n, stride in [
    (64, 48, 1), (64, 48, 2), (64, 48, 3), (64, 48, 4), (64, 48, 8), (64, 48, 16),
    (64, 48, 17), (64, 32, 32), (64, 31, 33), (64, 1, 1), (64, 0, 1), (128, 100, 1),
    (128, 100, 2), (128, 100, 8), (128, 100, 10), (128, 128, 7), (32, 20, 5), (96, 70, 12),
]:  # fmt: skip
    assert n <= block and (n - 1) * stride < 1024
    fields = [{"at": 0, "file": P}, {"at": 8, "int": n}, {"at": 12, "int": stride}]
    launches.append(
        {
            "id": f"view_b{block}_n{n}_s{stride}",
            "cubin": "view.sm_90.cubin",
            "kernel": "_Z12view_reverse4ViewPf",
            "block": [block, 1, 1],
            "grid": [1, 1, 1],
            "cluster": [1, 1, 1],
            "dynamic_smem": 0,
            "args": [{"struct": {"size": 16, "fields": fields}}, {"zeros": 512}],
            "dumps": [1],
        }
    )

if __name__ == "__main__":
    (HERE / "inputs").mkdir(exist_ok=True)
    (np.arange(128, dtype=np.float32) * 3 + 1).tofile(HERE / P)
    print(json.dumps({"launches": launches}, indent=1))
