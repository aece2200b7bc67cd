"""Compile kernels.py ahead of time (no GPU) with Triton 3.6 for GPUTarget("cuda", 90, 32), as
the JIT specializes `kernel[(1,)](x, out, 40, BLOCK=128, num_warps=4)` (the pointers divisible
by 16), and keep each cache entry Triton wrote (cubin, metadata, TTGIR, PTX) in cache/:

    /path/to/venv-with-triton-3.6/bin/python tests/data/triton/masked36/build.py
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "lab_common"))
D16 = [["tt.divisibility", 16]]
NAMES = ("masked_load", "masked_store", "masked_both", "masked_atomic", "masked_atomic_ret")
NAMES += ("masked_load_x4", "masked_store_x4", "masked_atomic_x4", "masked_atomic_ret_x4")


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="triton-cache-"))
    os.environ["TRITON_CACHE_DIR"] = str(scratch)
    import kernels
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_keep import keep_entry

    shutil.rmtree(HERE / "cache", ignore_errors=True)
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    for name in NAMES:
        src = ASTSource(getattr(kernels, name), sig, {"BLOCK": 128}, {(0,): D16, (1,): D16})
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        entry = keep_entry(scratch, name, compiled, HERE / "cache")
        print(triton.__version__, name, entry)


if __name__ == "__main__":
    main()
