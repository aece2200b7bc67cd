"""Compile kernels.py's centred_rows with one Triton version, ahead of time (no GPU), as
Triton's launcher specializes the call below, into <version>/ here.

    /path/to/venv-with-triton-X/bin/python tests/data/triton/called/build.py

The call: centred_rows[(2,)](out, x, 1000, 1024, 1, 0.5, True, num_warps=4) on float32
tensors: the pointers and row_stride (a multiple of 16) divisible by 16, col_stride (1)
compiled into the kernel, CENTRE a runtime bool. Only the metadata, cubin and TTGIR are kept.
"""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # kernels.py
NAME = "centred_rows"
SIGNATURE = {
    "out_ptr": "*fp32",
    "in_ptr": "*fp32",
    "n_cols": "i32",
    "row_stride": "i32",
    "col_stride": "constexpr",
    "scale": "fp32",
    "CENTRE": "i1",
}
DIVISIBLE = (0, 1, 3)  # out_ptr, in_ptr, row_stride


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="triton-cache-"))
    os.environ["TRITON_CACHE_DIR"] = str(scratch)
    import kernels
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = getattr(kernels, NAME)
    consts = {"col_stride": 1}
    if triton.__version__.startswith("3.2."):  # attrs as a descriptor object then
        from triton.backends.compiler import AttrsDescriptor

        sig = {k: v for k, v in SIGNATURE.items() if v != "constexpr"}
        hints = AttrsDescriptor.from_hints({i: 16 for i in DIVISIBLE})
        src = ASTSource(fn, sig, consts, hints)
    else:
        attrs = {(i,): [["tt.divisibility", 16]] for i in DIVISIBLE}
        src = ASTSource(fn, SIGNATURE, consts, attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    folder = next(
        m.parent
        for m in scratch.glob(f"*/{NAME}.json")
        if json.loads(m.read_text()).get("hash") == compiled.metadata.hash
    )
    dest = HERE / triton.__version__ / folder.name
    shutil.rmtree(HERE / triton.__version__, ignore_errors=True)
    dest.mkdir(parents=True)
    for kind in (".json", ".cubin", ".ttgir"):
        shutil.copyfile(folder / f"{NAME}{kind}", dest / f"{NAME}{kind}")
    print(triton.__version__, dest.relative_to(HERE))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
