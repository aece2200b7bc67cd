"""TRITON_CACHE_DIR=DIR python build.py OUT.json [ids...]: JIT-equivalent compile for
sm_90, no GPU (the driver and the tensors' stand-ins: ../../../lab_common/tri_offline.py)."""

import json
import sys
from pathlib import Path

from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
from tri_offline import Tensor  # noqa: E402  (installs the sm_90 driver)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kern  # noqa: E402
from launches import L  # noqa: E402

want = set(sys.argv[2:])
out = []
for ident, (name, consts, opts, grid, scalars, tensors) in L.items():
    if want and ident not in want:
        continue
    args = {}
    for p, t in tensors.items():
        if isinstance(t, tuple):
            _, dt, shape, block = t
            strides = [1] * len(shape)
            for i in range(len(shape) - 2, -1, -1):
                strides[i] = strides[i + 1] * shape[i + 1]
            args[p] = TensorDescriptor(Tensor(dt), list(shape), strides, list(block))
        else:
            args[p] = Tensor(t)
    try:
        k = getattr(kern, name).warmup(**args, **scalars, **consts, **opts, grid=grid)
        out.append(
            {
                "id": ident,
                "kernel": name,
                "hash": k.hash,
                "name": k.name,
                "grid": list(grid),
                "scalars": scalars,
                "tensors": {p: list(t) if isinstance(t, tuple) else t for p, t in tensors.items()},
            }
        )
        print("OK", ident, k.hash, flush=True)
    except Exception as e:  # noqa: BLE001
        out.append(
            {"id": ident, "kernel": name, "compile_error": f"{type(e).__name__}: {str(e)[:300]}"}
        )
        print("FAIL", ident, type(e).__name__, str(e)[:300], flush=True)
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1)
