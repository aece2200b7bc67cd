"""Compile kernels.py ahead of time (no GPU) with Triton 3.6 for GPUTarget("cuda", 90, 32), as
the JIT specializes these launches (pointers and integers divisible by 16 marked so), and keep
each cache entry Triton wrote (cubin, metadata, TTGIR, PTX) in cache/:

    ws_tile[(1,)](a, b, c, K, BM=128, BN=64, BK=64, num_warps=4, num_stages=2)   # K = 256
    row_sums_ptrs[(3,)](rows, out, 500, BLOCK=512, num_warps=4)
    pdl_row_max[(3,)](x, out, sm, 500, BLOCK=512, num_warps=4, launch_pdl=True)
    attn_bp[(4, 2)](q, k, v, o, 0.125, 256, 64, BM=64, BN=64, D=64, num_warps=4, num_stages=3)

    /path/to/venv-with-triton-3.6/bin/python tests/data/triton/sweep16/build.py
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
LAUNCHES = {
    "ws_tile": (
        {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32"},
        {"BM": 128, "BN": 64, "BK": 64},
        {(0,): D16, (1,): D16, (2,): D16, (3,): D16},
        {"num_warps": 4, "num_stages": 2},
    ),
    "row_sums_ptrs": (
        {"rows_ptr": "*i64", "out_ptr": "*fp32", "n": "i32"},
        {"BLOCK": 512},
        {(0,): D16, (1,): D16},
        {"num_warps": 4},
    ),
    "pdl_row_max": (
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "sm_ptr": "*i32", "n": "i32"},
        {"BLOCK": 512},
        {(0,): D16, (1,): D16, (2,): D16},
        {"num_warps": 4, "launch_pdl": True},
    ),
    "attn_bp": (
        {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*bf16"}
        | {"scale": "fp32", "n_ctx": "i32", "stride_row": "i32"},
        {"BM": 64, "BN": 64, "D": 64},
        {(i,): D16 for i in (0, 1, 2, 3, 5, 6)},
        {"num_warps": 4, "num_stages": 3},
    ),
}


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="triton-cache-"))
    os.environ["TRITON_CACHE_DIR"] = str(scratch)
    import kernels
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_keep import keep_entry

    shutil.rmtree(HERE / "cache", ignore_errors=True)
    for name, (sig, consts, attrs, opts) in LAUNCHES.items():
        full = dict(sig, **{k: "constexpr" for k in consts})
        src = ASTSource(getattr(kernels, name), full, consts, attrs)
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=opts)
        entry = keep_entry(scratch, name, compiled, HERE / "cache")
        print(triton.__version__, name, entry)


if __name__ == "__main__":
    main()
