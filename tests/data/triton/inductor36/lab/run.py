"""Run every workload of $MODELS.py (models.py) once, compiled by torch.compile; record each
Triton launch (kernel name, cache hash, grid, its arguments by name) in order into OUT.json,
and with $SAVE_INTS set, each small integer tensor it is given (index tensors, a
FlexAttention block mask) as $SAVE_INTS/SEQ_NAME.npy. Launches are caught in Triton's
CudaLauncher, so Inductor's static launcher is turned off; the autotuned templates are
Triton's only."""

import json
import os
import sys
import traceback

import numpy as np
import torch
import torch._inductor.config as icfg
import triton
from triton.backends.nvidia import driver as drv

icfg.use_static_cuda_launcher = False
icfg.max_autotune_gemm_backends = "TRITON"

LOG = []
SAVE = os.environ.get("SAVE_INTS")
_init, _call = drv.CudaLauncher.__init__, drv.CudaLauncher.__call__


def init(self, src, metadata):
    _init(self, src, metadata)
    self._lab = (
        getattr(metadata, "name", "?"),
        getattr(metadata, "hash", "?"),
        [str(k) for k in src.signature],
        [str(v) for v in src.signature.values()],
    )


def call(self, gx, gy, gz, stream, function, *args):
    name, h, names, types = getattr(self, "_lab", ("?", "?", [], []))
    vals = []
    for n, t, a in zip(names, types, args[4:], strict=False):
        if isinstance(a, torch.Tensor):
            vals.append([n, t, "tensor", str(a.dtype), list(a.shape), a.numel()])
            if SAVE and not a.is_floating_point() and a.numel() <= 65536 and a.dtype != torch.bool:
                f = f"{SAVE}/{len(LOG)}_{n}.npy"
                np.save(f, a.detach().contiguous().cpu().numpy())
                vals[-1].append(os.path.basename(f))
        elif isinstance(a, (int, float, bool)) or a is None:
            vals.append([n, t, "scalar", a])
        else:
            vals.append([n, t, type(a).__name__, repr(a)[:80]])
    LOG.append(
        {
            "seq": len(LOG),
            "work": CUR[0],
            "name": name,
            "hash": h,
            "grid": [gx, gy, gz],
            "args": vals,
        }
    )
    return _call(self, gx, gy, gz, stream, function, *args)


drv.CudaLauncher.__init__, drv.CudaLauncher.__call__ = init, call
sys.path.insert(0, os.path.dirname(__file__))
WORK = __import__(os.environ.get("MODELS", "models")).WORK  # noqa: E402

CUR = [""]
only = [w for w in os.environ.get("ONLY", "").split(",") if w]
done = []
for name, fn, make, opts in WORK:
    if only and name not in only:
        continue
    CUR[0] = name
    try:
        torch._dynamo.reset()
        f = torch.compile(fn, **opts)
        f(*make())
        torch.cuda.synchronize()
        done.append(name)
        print("ok", name, flush=True)
    except Exception:
        traceback.print_exc()
        print("FAILED", name, flush=True)
with open(sys.argv[1], "w") as f:
    json.dump(
        {"torch": torch.__version__, "triton": triton.__version__, "done": done, "launches": LOG},
        f,
        indent=1,
    )
print("launches", len(LOG))
