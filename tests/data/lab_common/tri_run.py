"""Run every launch of a Triton lab's launches.py with PyTorch and Triton (JIT: Triton writes
its cache into $TRITON_CACHE_DIR), zero-filled tensors, in order; print each launch's id and
cache hash. A launch that fails is reported and left out (no kernel runs for it).
TRI_PART=i/n runs every n-th launch from the i-th; TRI_ONLY=id,id,... only those.
TRI_KERNELS and TRI_LAUNCHES name the modules (default kernels, launches: LAUNCHES in it);
TRI_LIST=1 only prints each launch's id and kernel name (no torch, triton or GPU needed).
A tensor is (dtype, shape), or (dtype, shape, block) for a host-side TensorDescriptor of it.

Shared by the Triton labs (tests/data/triton/*/lab): each runs it from its lab/ folder, where
its kernels.py and launches.py are, as ``python3 - OUT.json < ../../../lab_common/tri_run.py``
(read from stdin, Python imports from the working folder; tri_lab.sh's steps do)."""

import importlib
import json
import os
import sys
import traceback

LAUNCHES = importlib.import_module(os.environ.get("TRI_LAUNCHES", "launches")).LAUNCHES
if os.environ.get("TRI_LIST"):
    for ident, launch in LAUNCHES.items():
        print(ident, launch[0])
    sys.exit(0)

import torch  # noqa: E402
import triton  # noqa: E402

kernels = importlib.import_module(os.environ.get("TRI_KERNELS", "kernels"))
dev = "cuda"
triton.set_allocator(lambda size, align, stream: torch.empty(size, device=dev, dtype=torch.int8))
part, parts = (int(x) for x in os.environ.get("TRI_PART", "0/1").split("/"))
only = [x for x in os.environ.get("TRI_ONLY", "").split(",") if x]  # ids; all when empty
out = []
for i, (ident, (name, consts, opts, grid, scalars, tensors)) in enumerate(LAUNCHES.items()):
    if i % parts != part or (only and ident not in only):
        continue
    args = {}
    for pname, (dt, shape, *box) in tensors.items():
        t = torch.zeros(
            shape, device=dev, dtype=torch.uint8 if "float8" in dt else getattr(torch, dt)
        )
        args[pname] = t.view(getattr(torch, dt)) if "float8" in dt else t
        if box:  # (dtype, shape, block): a host-side TensorDescriptor of the tensor (3.4 on)
            from triton.tools.tensor_descriptor import TensorDescriptor

            args[pname] = TensorDescriptor.from_tensor(args[pname], list(box[0]))
    fn = getattr(kernels, name)
    try:
        k = fn[grid](**args, **scalars, **consts, **opts)
        torch.cuda.synchronize()
    except Exception:
        traceback.print_exc()
        print(ident, "FAILED", flush=True)
        continue
    out.append(
        {
            "id": ident,
            "kernel": name,
            "hash": getattr(k, "hash", None),
            "name": getattr(k, "name", name),
            "grid": list(grid),
        }
    )
    print(ident, out[-1]["hash"], flush=True)
with open(sys.argv[1], "w") as f:
    json.dump({"triton": triton.__version__, "torch": torch.__version__, "runs": out}, f, indent=1)
