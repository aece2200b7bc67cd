"""Compile kernels.py ahead of time for sm_90 (no GPU) into the Triton cache folder cache/.

    TRITON_DEFAULT_FP_FUSION=1 python tests/data/triton/build.py     (needs `pip install triton`)

Each entry is what Triton's cache keeps (<hash>/<name>.cubin, .json, .ttgir, .ptx, ...); only
those four are kept here. LAUNCHES (below) is the table of entries and of the launches the
H200 measured (lab/), written to launches.json.
"""

import json
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / "cache"
KEEP = (".cubin", ".json", ".ttgir", ".ptx")

# id: kernel, signature, constexprs, options, launch (grid and the scalar arguments by name).
# As Triton's launcher would when called, every pointer and every integer argument divisible
# by 16 is compiled as known to be divisible by 16 (tt.divisibility; see DIVISIBLE).
ENTRIES = {
    "softmax_w4": (
        "softmax_rows",
        {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32", "row_stride": "i32"},
        {"BLOCK": 1024},
        {"num_warps": 4},
        {"grid": [2, 1, 1], "args": {"n_cols": 1000, "row_stride": 1024}},
    ),
    "softmax_w8": (
        "softmax_rows",
        {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32", "row_stride": "i32"},
        {"BLOCK": 2048},
        {"num_warps": 8},
        {"grid": [2, 1, 1], "args": {"n_cols": 2000, "row_stride": 2048}},
    ),
    "layernorm": (
        "layernorm_rows",
        {
            "out_ptr": "*fp32",
            "in_ptr": "*fp32",
            "w_ptr": "*fp32",
            "b_ptr": "*fp32",
            "n_cols": "i32",
            "eps": "fp32",
        },
        {"BLOCK": 1024},
        {"num_warps": 4},
        {"grid": [2, 1, 1], "args": {"n_cols": 768, "eps": 1e-5}},
    ),
    "transpose": (
        "transpose_tiles",
        {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32"},
        {"TILE": 64},
        {"num_warps": 4},
        {"grid": [2, 2, 1], "args": {"n_rows": 128, "n_cols": 128}},
    ),
    "matmul_f16": (
        "matmul_tiles",
        {"c_ptr": "*fp16", "a_ptr": "*fp16", "b_ptr": "*fp16", "m": "i32", "n": "i32", "k": "i32"},
        {"BM": 32, "BN": 32, "BK": 32},
        {"num_warps": 2, "num_stages": 2},
        {"grid": [2, 2, 1], "args": {"m": 64, "n": 64, "k": 128}},
    ),
    "matmul_bf16": (
        "matmul_tiles",
        {"c_ptr": "*bf16", "a_ptr": "*bf16", "b_ptr": "*bf16", "m": "i32", "n": "i32", "k": "i32"},
        {"BM": 64, "BN": 64, "BK": 32},
        {"num_warps": 2, "num_stages": 3},
        {"grid": [1, 1, 1], "args": {"m": 64, "n": 64, "k": 128}},
    ),
    # fp32 inputs: tl.dot's default tf32 precision, mma.sync m16n8k8 .tf32 (not measured)
    "matmul_tf32": (
        "matmul_tiles",
        {"c_ptr": "*fp32", "a_ptr": "*fp32", "b_ptr": "*fp32", "m": "i32", "n": "i32", "k": "i32"},
        {"BM": 32, "BN": 32, "BK": 32},
        {"num_warps": 2, "num_stages": 2},
        {"grid": [2, 2, 1], "args": {"m": 64, "n": 64, "k": 128}},
    ),
    # four warps and a 64-row tile: wgmma (HGMMA) on sm_90, whose shared-memory traffic
    # shmem does not model yet (listed as not modelled)
    "matmul_wgmma": (
        "matmul_tiles",
        {"c_ptr": "*fp16", "a_ptr": "*fp16", "b_ptr": "*fp16", "m": "i32", "n": "i32", "k": "i32"},
        {"BM": 64, "BN": 64, "BK": 32},
        {"num_warps": 4, "num_stages": 3},
        {"grid": [1, 1, 1], "args": {"m": 64, "n": 64, "k": 128}},
    ),
}


def divisible(signature: dict[str, str], args: dict[str, object]) -> dict[tuple[int], list]:
    """Triton's specialization: pointers and integers that are multiples of 16."""
    out = {}
    for i, (name, kind) in enumerate(signature.items()):
        value = args.get(name)
        if kind.startswith("*") or (isinstance(value, int) and value % 16 == 0):
            out[(i,)] = [["tt.divisibility", 16]]
    return out


def main() -> None:
    os.environ["TRITON_CACHE_DIR"] = str(HERE / ".triton-cache")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sys.path.insert(0, str(HERE))
    import kernels

    shutil.rmtree(CACHE, ignore_errors=True)
    target = GPUTarget("cuda", 90, 32)
    table = []
    for ident, (name, signature, constexprs, options, launch) in ENTRIES.items():
        fn = getattr(kernels, name)
        sig = {**signature, **{k: "constexpr" for k in constexprs}}
        attrs = divisible(signature, launch["args"])
        src = ASTSource(fn, sig, constexprs, attrs)
        compiled = triton.compile(src, target=target, options=options)
        source = _entry_folder(HERE / ".triton-cache", name, compiled.metadata.hash)
        folder = CACHE / source.name
        folder.mkdir(parents=True)
        for kind in KEEP:
            shutil.copyfile(source / f"{name}{kind}", folder / f"{name}{kind}")
        table.append(
            {
                "id": ident,
                "entry": f"cache/{folder.name}",
                "kernel": name,
                "constexprs": constexprs,
                **options,
                **launch,
            }
        )
        print(ident, folder.name, compiled.metadata.shared, "B shared")
    doc = {"triton": triton.__version__, "target": "cuda:90", "launches": table}
    (HERE / "launches.json").write_text(json.dumps(doc, indent=1) + "\n")
    shutil.rmtree(HERE / ".triton-cache", ignore_errors=True)


def _entry_folder(root: Path, name: str, digest: str) -> Path:
    """The cache folder Triton wrote for the compile whose metadata hash is ``digest``."""
    for meta in root.glob(f"*/{name}.json"):
        if json.loads(meta.read_text())["hash"] == digest:
            return meta.parent
    raise SystemExit(f"no cache entry of {name} with hash {digest}")


if __name__ == "__main__":
    main()
