"""Compile two of kernels.py's kernels with one Triton version, ahead of time (no GPU), as
Triton's launcher specializes the calls below, into <version>/ here.

    /path/to/venv-with-triton-X/bin/python tests/data/triton/called/build.py

centred_rows[(2,)](out, x, 1000, 1024, 1, 0.5, True, num_warps=4) on float32 tensors: the
pointers and row_stride (a multiple of 16) divisible by 16, col_stride (1) compiled into the
kernel, CENTRE a runtime bool. matmul_host_desc[(2, 2)](a, b, c, 128, BM=64, BN=64, BK=32,
num_warps=4, num_stages=3) through host-side TensorDescriptors of 128 x 128 float16 tensors
(Triton 3.4 only, whose TTGIR names no parameter; ../jit36 keeps 3.6's). matmul_tma_desc, the
same through Triton 3.3's experimental create_2d_tma_descriptor maps (nvTmaDesc). Only the
metadata, cubin and TTGIR of each entry are kept.
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # kernels.py
sys.path.insert(0, str(HERE.parents[1] / "lab_common"))

from triton_keep import keep_entry  # noqa: E402


def _matmul(descriptor: str, only: str) -> tuple:
    """matmul_*_desc's call through three descriptors of the type ``descriptor`` (``{}``: the
    tile each describes), compiled only by the Triton versions that start with ``only``."""
    tiles = {"a_desc": "fp16[64, 32]", "b_desc": "fp16[32, 64]", "c_desc": "fp16[64, 64]"}
    signature = {name: descriptor.format(tile) for name, tile in tiles.items()}
    return (
        {**signature, "k": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
        {"BM": 64, "BN": 64, "BK": 32},
        (3,),  # k
        {"num_warps": 4, "num_stages": 3},
        only,
    )


# name: signature, constexprs, the parameters divisible by 16, options, and the versions
# that compile it (those whose number starts so)
CALLS = {
    "centred_rows": (
        {
            "out_ptr": "*fp32",
            "in_ptr": "*fp32",
            "n_cols": "i32",
            "row_stride": "i32",
            "col_stride": "constexpr",
            "scale": "fp32",
            "CENTRE": "i1",
        },
        {"col_stride": 1},
        (0, 1, 3),  # divisible by 16: out_ptr, in_ptr, row_stride
        {"num_warps": 4},
        "",
    ),
    # host-side TensorDescriptor from 3.4; 3.5 on names them (../jit36)
    "matmul_host_desc": _matmul("tensordesc<{}>", "3.4."),
    # the experimental host-side descriptors of Triton 3.2 and 3.3
    "matmul_tma_desc": _matmul("nvTmaDesc", "3.3."),
}


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="triton-cache-"))
    os.environ["TRITON_CACHE_DIR"] = str(scratch)
    import kernels
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    shutil.rmtree(HERE / triton.__version__, ignore_errors=True)
    for name, (signature, consts, divisible, options, only) in CALLS.items():
        if not triton.__version__.startswith(only):
            continue
        fn = getattr(kernels, name)
        if triton.__version__.startswith("3.2."):  # attrs as a descriptor object then
            from triton.backends.compiler import AttrsDescriptor

            sig = {k: v for k, v in signature.items() if v != "constexpr"}
            hints = AttrsDescriptor.from_hints({i: 16 for i in divisible})
            src = ASTSource(fn, sig, consts, hints)
        else:
            attrs = {(i,): [["tt.divisibility", 16]] for i in divisible}
            src = ASTSource(fn, signature, consts, attrs)
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
        entry = keep_entry(
            scratch, name, compiled, HERE / triton.__version__, (".json", ".cubin", ".ttgir")
        )
        dest = HERE / triton.__version__ / entry
        print(triton.__version__, name, dest.relative_to(HERE))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
