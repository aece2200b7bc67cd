"""Compile kernels.py's kernels with one Triton version, ahead of time (no GPU), for sm_90 as
Triton's launcher specializes the calls below (pointers and multiples of 16 divisible by 16):

    TRITON_DEFAULT_FP_FUSION=1 /path/to/venv-with-triton-X/bin/python build.py OUT [NAME ...]

OUT becomes a real cache root (TRITON_CACHE_DIR) holding every entry Triton wrote. Only
attn_fwd by Triton 3.0.0 is kept here (3.0.0/, its metadata, cubin and TTGIR): 3.0 and 3.1
ask 40,962 bytes of shared memory for it, no multiple of 16.
"""

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

F, H, I32 = "*fp32", "*fp16", "*i32"
# name: runtime parameters' types, constexprs, those divisible by 16, options
CALLS = {
    "sm_rows": (
        {"dst": F, "src": F, "width": "i32", "pitch": "i32"},
        {"COLS": 1024},
        ("dst", "src", "pitch"),
        {"num_warps": 4},
    ),
    "mm_f16": (
        {"c_ptr": H, "a_ptr": H, "b_ptr": H, "m": "i32", "n": "i32", "k": "i32"},
        {"TM": 64, "TN": 64, "TK": 32},
        ("c_ptr", "a_ptr", "b_ptr", "m", "n", "k"),
        {"num_warps": 4, "num_stages": 3},
    ),
    "ln_fwd": (
        {"y_ptr": F, "x_ptr": F, "w_ptr": F, "b_ptr": F, "mu_ptr": F, "rs_ptr": F}
        | {"width": "i32", "eps": "fp32"},
        {"COLS": 1024},
        ("y_ptr", "x_ptr", "w_ptr", "b_ptr", "mu_ptr", "rs_ptr"),
        {"num_warps": 4},
    ),
    "ln_bwd": (
        {"dx_ptr": F, "dwp_ptr": F, "dy_ptr": F, "x_ptr": F, "w_ptr": F, "mu_ptr": F}
        | {"rs_ptr": F, "locks": I32, "width": "i32"},
        {"GROUPS": 4, "COLS": 1024},
        ("dx_ptr", "dwp_ptr", "dy_ptr", "x_ptr", "w_ptr", "mu_ptr", "rs_ptr", "locks"),
        {"num_warps": 4},
    ),
    "hist_bins": (
        {"counts": I32, "vals": I32, "total": "i32"},
        {"BINS": 64, "CHUNK": 1024},
        ("counts", "vals"),
        {"num_warps": 4},
    ),
    "attn_fwd": (
        {"o_ptr": H, "q_ptr": H, "k_ptr": H, "v_ptr": H, "seq": "i32", "scale": "fp32"},
        {"QB": 64, "KB": 64, "HD": 64},
        ("o_ptr", "q_ptr", "k_ptr", "v_ptr", "seq"),
        {"num_warps": 4, "num_stages": 2},
    ),
    "two_totals": (
        {"out": F, "a": F, "b": F, "pitch": "i32"},
        {"R": 32, "C": 64},
        ("out", "a", "b", "pitch"),
        {"num_warps": 4},
    ),
}


def _source(fn, sig, consts, div, version):  # noqa: ANN001, ANN202 - each version's ASTSource
    from triton.compiler import ASTSource

    index = {p: i for i, p in enumerate(fn.arg_names)}
    if version.startswith(("3.0.", "3.1.")):
        from triton.compiler.compiler import AttrsDescriptor

        hints = AttrsDescriptor(divisible_by_16={index[p] for p in div}, equal_to_1=set())
        return ASTSource(fn, sig, consts, hints)
    if version.startswith("3.2."):
        from triton.backends.compiler import AttrsDescriptor

        return ASTSource(fn, sig, consts, AttrsDescriptor.from_hints({index[p]: 16 for p in div}))
    full = {p: sig.get(p, "constexpr") for p in fn.arg_names}
    return ASTSource(fn, full, consts, {(index[p],): [["tt.divisibility", 16]] for p in div})


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    os.environ["TRITON_CACHE_DIR"] = str(out)
    import kernels
    import triton
    from triton.backends.compiler import GPUTarget

    for name, (sig, consts, div, options) in CALLS.items():
        if sys.argv[2:] and name not in sys.argv[2:]:
            continue
        src = _source(getattr(kernels, name), sig, consts, div, triton.__version__)
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
        folder = next(
            m.parent
            for m in out.glob(f"*/{name}.json")
            if json.loads(m.read_text()).get("hash") == compiled.metadata.hash
        )
        print(triton.__version__, name, folder.name, "shared", compiled.metadata.shared)


if __name__ == "__main__":
    main()
