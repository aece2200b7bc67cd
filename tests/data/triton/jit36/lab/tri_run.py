"""Run every launch of launches.py with PyTorch and Triton (JIT: Triton writes its cache into
$TRITON_CACHE_DIR), zero-filled tensors, in order; print each launch's id and cache hash."""

import json
import sys

import kernels
import torch
import triton
from launches import LAUNCHES

dev = "cuda"
triton.set_allocator(lambda size, align, stream: torch.empty(size, device=dev, dtype=torch.int8))
out = []
for ident, (name, consts, opts, grid, scalars, tensors) in LAUNCHES.items():
    args = {}
    for pname, spec in tensors.items():
        t = torch.zeros(spec[1], device=dev, dtype=getattr(torch, spec[0]))
        if len(spec) == 3:
            from triton.tools.tensor_descriptor import TensorDescriptor

            t = TensorDescriptor.from_tensor(t, list(spec[2]))
        args[pname] = t
    fn = getattr(kernels, name)
    k = fn[grid](**args, **scalars, **consts, **opts)
    torch.cuda.synchronize()
    out.append(
        {
            "id": ident,
            "kernel": name,
            "hash": k.hash if hasattr(k, "hash") else None,
            "name": k.name if hasattr(k, "name") else name,
            "grid": list(grid),
        }
    )
    print(ident, out[-1]["hash"], flush=True)
with open(sys.argv[1], "w") as f:
    json.dump({"triton": triton.__version__, "torch": torch.__version__, "runs": out}, f, indent=1)
