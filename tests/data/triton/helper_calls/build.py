"""Compile kernels.py's two_stages into ./cache (TRITON_CACHE_DIR layout) for sm_90, no GPU:
TRITON_DEFAULT_FP_FUSION=1 python build.py (Triton 3.9.0 from PyPI)."""

import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
os.environ["TRITON_CACHE_DIR"] = str(HERE / "cache")
sys.path.insert(0, str(HERE))

import kernels  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

signature = {"c_ptr": "*fp32", "a_ptr": "*fp16", "b_ptr": "*fp16"}
constexprs = {"BM": 64, "BN": 64, "BK": 32}
source = ASTSource(
    fn=kernels.two_stages,
    signature={**signature, **dict.fromkeys(constexprs, "constexpr")},
    constexprs=constexprs,
)
compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
print(compiled.metadata.hash)
