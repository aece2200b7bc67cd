"""Compile every launch of launches.py here, without a GPU, as Triton's JIT does on the GPU
machine (the same specialization: pointers and integers divisible by 16, integers equal to 1
compiled in), for sm_90: Triton's driver is replaced by one that names the target.

Usage: TRITON_CACHE_DIR=DIR python3 build_here.py OUT.json  (Triton 3.6; no PyTorch needed).
Writes OUT.json as tri_run.py does (id, kernel, hash, name, grid per launch)."""

import json
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.runtime import driver

ARCH = 90


class _Dtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


_DTYPES: dict = {}


class _Tensor:
    """What the JIT reads of a tensor argument: its dtype and its (256-byte aligned) address."""

    def __init__(self, dtype):
        # one object per dtype, kept alive: the JIT caches what it read of a dtype by identity
        self.dtype = _DTYPES.setdefault(dtype, _Dtype(dtype))

    def data_ptr(self):
        return 1 << 20


class _Target:
    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return GPUTarget("cuda", ARCH, 32)

    def is_active(self):
        return True


driver.set_active(_Target())
import kernels  # noqa: E402
from launches import LAUNCHES  # noqa: E402

out = []
for ident, (name, consts, opts, grid, scalars, tensors) in LAUNCHES.items():
    args = {p: _Tensor(dt) for p, (dt, _) in tensors.items()}
    k = getattr(kernels, name).warmup(**args, **scalars, **consts, **opts, grid=grid)
    out.append({"id": ident, "kernel": name, "hash": k.hash, "name": k.name, "grid": list(grid)})
    print(ident, k.hash, flush=True)
with open(sys.argv[1], "w") as f:
    json.dump({"triton": triton.__version__, "runs": out}, f, indent=1)
