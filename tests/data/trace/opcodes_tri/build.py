"""Compile kernels.py's lab entries ahead of time for sm_90 (no GPU) with one Triton version:

    /path/to/venv-with-triton-X/bin/python build.py        (Triton 3.6.0 and 3.2.0 were used)

Each entry of ENTRIES that names the running version is compiled for GPUTarget("cuda", 90,
32) with the launch's specialization (pointers, and integers that are multiples of 16, known
divisible by 16), and its cubin kept as cubins/<version>_<id>.cubin; entries.json records
what make_launches.py needs (kernel, signature, launch, warps, shared memory).
"""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
I32 = "i32"
MM = ("M", "N", "K", "sam", "sak", "sbk", "sbn", "scm", "scn")

# id: (versions, kernel, signature, constexprs, options, launch: grid and scalars)
ENTRIES = {
    # a 1-warp masked fp32 dot whose K-mask bits are packed from uniform predicates: UP2UR
    "up2ur_dot": (
        ("3.6.0", "3.2.0"),
        "dotmask_k",
        {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": I32, "N": I32, "K": I32,
         "sam": I32, "sbk": I32, "scm": I32},
        {"BM": 16, "BN": 64, "BK": 32, "TB": True},
        {"num_warps": 1, "num_stages": 2},
        {"M": 30, "N": 50, "K": 40, "sam": 40, "sbk": 40, "scm": 50, "grid": [2, 1, 1]},
    ),
    # float -> fp8 pairs: F2FP.SATFINITE.E4M3/E5M2.F32.PACK_AB_MERGE_C, .F16.UNPACK_B_MERGE_C
    "cast_f32_e4m3": (("3.6.0", "3.2.0"), "cast_k", "fp32>fp8e4nv", {}, {}, {}),
    "cast_f32_e5m2": (("3.6.0",), "cast_k", "fp32>fp8e5", {}, {}, {}),
    "cast_bf16_e4m3": (("3.6.0",), "cast_k", "bf16>fp8e4nv", {}, {}, {}),
    "cast_f16_e4m3": (("3.6.0",), "cast_k", "fp16>fp8e4nv", {}, {}, {}),
    "cast_f16_e5m2": (("3.6.0",), "cast_k", "fp16>fp8e5", {}, {}, {}),
    # fp_downcast_rounding="rtz": F2FP.F16.F32.PACK_AB.RZ and F2FP.BF16.F32.PACK_AB.RZ
    "cast_f32_f16_rtz": (("3.6.0",), "cast_k", "fp32>fp16", {"ROUND": "rtz"}, {}, {}),
    "cast_f32_bf16_rtz": (("3.6.0",), "cast_k", "fp32>bf16", {"ROUND": "rtz"}, {}, {}),
    # tl.minimum/maximum(propagate_nan=ALL): FMNMX.NAN
    "min_nan_f32": (("3.6.0",), "math_k", "fp32", {"OP": "minimum_all"}, {}, {}),
    "max_nan_f32": (("3.6.0",), "math_k", "fp32", {"OP": "maximum_all"}, {}, {}),
    # flush-to-zero forms: FSETP.GEU.FTZ (sqrt_rn), FRND.FTZ.CEIL (ceil)
    "sqrt_rn_f32": (("3.6.0",), "math_k", "fp32", {"OP": "sqrt_rn"}, {}, {}),
    "ceil_f32": (("3.6.0",), "math_k", "fp32", {"OP": "ceil"}, {}, {}),
    # tl.sin of large arguments: libdevice's 2/pi table in the cubin's .nv.global.init, its
    # address in constant bank 4
    "sin_f32": (("3.6.0",), "math_k", "fp32", {"OP": "sin"}, {}, {}),
    # an Inductor-style GELU (libdevice erf): FADD.FTZ, FFMA.FTZ, FMUL.FTZ
    "gelu_f32": (
        ("3.6.0",),
        "ind_pointwise_k",
        {"in_ptr0": "*fp32", "in_ptr1": "*fp32", "out_ptr0": "*fp32", "xnumel": I32},
        {"XBLOCK": 1024, "OP": "gelu"},
        {"num_warps": 4},
        {"xnumel": 3000, "grid": [3, 1, 1]},
    ),
    # column max/min of a 4-row tile over half and bf16 lanes: VHMNMX (.BF16_V2)
    "colmax_f16": (
        ("3.6.0",),
        "reduce_k",
        {"x_ptr": "*fp16", "y_ptr": "*fp16", "i_ptr": "*i32", "R": I32, "C": I32},
        {"BR": 4, "BC": 256, "OP": "max", "AXIS": 0, "KEEP": False},
        {"num_warps": 2},
        {"R": 3, "C": 253, "grid": [1, 1, 1]},
    ),
    "colmin_bf16": (
        ("3.6.0",),
        "reduce_k",
        {"x_ptr": "*bf16", "y_ptr": "*bf16", "i_ptr": "*i32", "R": I32, "C": I32},
        {"BR": 4, "BC": 256, "OP": "min", "AXIS": 0, "KEEP": True},
        {"num_warps": 2},
        {"R": 3, "C": 253, "grid": [1, 1, 1]},
    ),
    # the tutorial's layer norm forward: UPLOP3
    "layernorm_f32": (
        ("3.6.0",),
        "ln_fwd_k",
        {"X": "*fp32", "Y": "*fp32", "W": "*fp32", "B": "*fp32", "Mean": "*fp32",
         "Rstd": "*fp32", "stride": I32, "N": I32, "eps": "fp32"},
        {"BLOCK": 1024},
        {"num_warps": 4},
        {"stride": 768, "N": 768, "eps": 1e-5, "grid": [4, 1, 1]},
    ),
    # Triton 3.2's masked fp8 dot: its zero fill is F2FP...PACK_AB_MERGE_C d, RZ, RZ, d.H1
    "dot_e4m3": (
        ("3.2.0",),
        "dot_k",
        {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*fp32", **{p: I32 for p in MM}},
        {"BM": 32, "BN": 32, "BK": 32, "MASK": True, "PREC": "none", "TRANS_B": False},
        {"num_warps": 4, "num_stages": 4},
        {"M": 62, "N": 82, "K": 72, "sam": 72, "sak": 1, "sbk": 82, "sbn": 1, "scm": 82,
         "scn": 1, "grid": [2, 3, 1]},
    ),
}  # fmt: skip


def expand(ident: str) -> tuple:
    """An entry with the elementwise defaults filled in (cast_k and math_k: 256 a block,
    250 elements, two blocks)."""
    versions, kernel, sig, consts, opts, launch = ENTRIES[ident]
    if kernel == "cast_k":
        src, dst = sig.split(">")
        sig = {"x_ptr": "*" + src, "y_ptr": "*" + dst, "n": I32}
        consts = {"BLOCK": 256, "ROUND": "none", "BITCAST": False, **consts}
    elif kernel == "math_k":
        sig = {"x_ptr": "*" + sig, "y_ptr": "*" + sig, "z_ptr": "*" + sig, "n": I32}
        consts = {"BLOCK": 256, **consts}
    if kernel in ("cast_k", "math_k"):
        opts, launch = {"num_warps": 4}, {"n": 250, "grid": [2, 1, 1]}
    return versions, kernel, sig, consts, opts, launch


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="triton-cache-"))
    os.environ["TRITON_CACHE_DIR"] = str(scratch)
    import kernels
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    version = triton.__version__
    (HERE / "cubins").mkdir(exist_ok=True)
    table_path = HERE / "entries.json"
    table = json.loads(table_path.read_text()) if table_path.exists() else {}
    for ident in ENTRIES:
        versions, name, sig, consts, opts, launch = expand(ident)
        if version not in versions:
            continue
        fn = getattr(kernels, name)
        full, attrs = {}, {}
        for i, p in enumerate(fn.arg_names):
            if p in consts:
                full[p] = "constexpr"
                continue
            full[p] = sig[p]
            value = launch.get(p)
            if sig[p].startswith("*") or (isinstance(value, int) and value % 16 == 0):
                attrs[(i,)] = [["tt.divisibility", 16]]
        if version.startswith("3.2."):  # a descriptor object then, no constexprs in the signature
            from triton.backends.compiler import AttrsDescriptor

            hints = AttrsDescriptor.from_hints({i: 16 for (i,) in attrs})
            plain = {k: v for k, v in full.items() if v != "constexpr"}
            src = ASTSource(fn, plain, consts, hints)
        else:
            src = ASTSource(fn, full, consts, attrs)
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=opts)
        lid = f"{version.replace('.', '')}_{ident}"
        (HERE / "cubins" / f"{lid}.cubin").write_bytes(compiled.asm["cubin"])
        table[lid] = {
            "triton": version,
            "kernel": name,
            "signature": sig,
            "constexprs": consts,
            "launch": launch,
            "num_warps": compiled.metadata.num_warps,
            "shared": compiled.metadata.shared,
        }
        print(lid, compiled.metadata.shared, "B shared")
    table_path.write_text(json.dumps(dict(sorted(table.items())), indent=1) + "\n")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
