"""TRITON_CACHE_DIR=DIR python build.py OUT.json [ids...]: JIT-equivalent compile for
sm_90, no GPU."""

import json
import sys

from triton.backends.compiler import GPUTarget
from triton.runtime import driver
from triton.tools.tensor_descriptor import TensorDescriptor


class _Dtype:
    def __init__(self, name):
        self.name = name
        self.itemsize = {
            "float32": 4,
            "float16": 2,
            "bfloat16": 2,
            "float64": 8,
            "int32": 4,
            "int64": 8,
            "int8": 1,
            "uint8": 1,
            "float8_e4m3fn": 1,
            "float8_e5m2": 1,
            "int16": 2,
            "bool": 1,
        }[name]

    def __str__(self):
        return "torch." + self.name


_D: dict = {}


class _Tensor:
    def __init__(self, dtype):
        self.dtype = _D.setdefault(dtype, _Dtype(dtype))

    def data_ptr(self):
        return 1 << 20


class _Target:
    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def is_active(self):
        return True


driver.set_active(_Target())
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
            args[p] = TensorDescriptor(_Tensor(dt), list(shape), strides, list(block))
        else:
            args[p] = _Tensor(t)
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
