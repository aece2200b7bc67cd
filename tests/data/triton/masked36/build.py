"""Compile kernels.py ahead of time (no GPU) with Triton 3.6 for GPUTarget("cuda", 90, 32), as
the JIT specializes `kernel[(1,)](x, out, 40, BLOCK=128, num_warps=4)` (the pointers divisible
by 16), and keep each cache entry Triton wrote (cubin, metadata, TTGIR, PTX) in cache/:

    /path/to/venv-with-triton-3.6/bin/python tests/data/triton/masked36/build.py
"""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
KEEP = (".cubin", ".json", ".ttgir", ".ptx")
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

    shutil.rmtree(HERE / "cache", ignore_errors=True)
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    for name in NAMES:
        src = ASTSource(getattr(kernels, name), sig, {"BLOCK": 128}, {(0,): D16, (1,): D16})
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        folder = next(
            m.parent
            for m in scratch.glob(f"*/{name}.json")
            if json.loads(m.read_text()).get("hash") == compiled.metadata.hash
        )
        dest = HERE / "cache" / folder.name
        dest.mkdir(parents=True)
        for f in folder.iterdir():
            if f.suffix in KEEP and not f.name.startswith("__grp__"):
                shutil.copy(f, dest / f.name)
        print(triton.__version__, name, folder.name)


if __name__ == "__main__":
    main()
