"""Compile every launch of launches.py here, without a GPU, as Triton's JIT does on the GPU
machine (the same specialization: pointers and integers divisible by 16, integers equal to 1
compiled in), for sm_90: Triton's driver is replaced by one that names the target
(../../../lab_common/tri_offline.py).

Usage: TRITON_CACHE_DIR=DIR python3 build_here.py OUT.json  (Triton 3.6; no PyTorch needed).
Writes OUT.json as tri_run.py does (id, kernel, hash, name, grid per launch)."""

import json
import sys
from pathlib import Path

import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
from tri_offline import Tensor  # noqa: E402  (installs the sm_90 driver)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernels  # noqa: E402
from launches import LAUNCHES  # noqa: E402

out = []
for ident, (name, consts, opts, grid, scalars, tensors) in LAUNCHES.items():
    args = {p: Tensor(dt) for p, (dt, _) in tensors.items()}
    k = getattr(kernels, name).warmup(**args, **scalars, **consts, **opts, grid=grid)
    out.append({"id": ident, "kernel": name, "hash": k.hash, "name": k.name, "grid": list(grid)})
    print(ident, k.hash, flush=True)
with open(sys.argv[1], "w") as f:
    json.dump({"triton": triton.__version__, "runs": out}, f, indent=1)
