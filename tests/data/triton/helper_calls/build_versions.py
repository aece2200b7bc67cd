"""Compile kernels.py's two_stages and two_sums with one Triton version, ahead of time (no GPU),
for sm_90 into versions/<version>/ here (each entry's metadata, cubin and TTGIR):

    TRITON_DEFAULT_FP_FUSION=1 /path/to/venv-with-triton-X/bin/python build_versions.py

Triton 3.0 to 3.6 write no inlining chain into the PTX, so a helper's calls are only in the
TTGIR's callsite locations (tests/test_trace_triton_helper_versions.py).
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "lab_common"))

from triton_keep import keep_entry  # noqa: E402

# name: signature, constexprs, options
CALLS = {
    "two_stages": (
        {"c_ptr": "*fp32", "a_ptr": "*fp16", "b_ptr": "*fp16"},
        {"BM": 64, "BN": 64, "BK": 32},
        {"num_warps": 4},
    ),
    "two_sums": (
        {"out_ptr": "*fp32", "x_ptr": "*fp32", "y_ptr": "*fp32"},
        {"R": 32, "C": 64},
        {"num_warps": 4},
    ),
}


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="triton-cache-"))
    os.environ["TRITON_CACHE_DIR"] = str(scratch)
    import kernels
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    out = HERE / "versions" / triton.__version__
    shutil.rmtree(out, ignore_errors=True)
    for name, (signature, consts, options) in CALLS.items():
        fn = getattr(kernels, name)
        if triton.__version__.startswith(("3.0.", "3.1.", "3.2.")):  # constexprs apart then
            src = ASTSource(fn, signature, consts)
        else:
            src = ASTSource(fn, {**signature, **dict.fromkeys(consts, "constexpr")}, consts)
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
        entry = keep_entry(scratch, name, compiled, out, (".json", ".cubin", ".ttgir"))
        dest = out / entry
        print(triton.__version__, name, dest.relative_to(HERE))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
