"""Compile three of the project's kernels with one Triton version, ahead of time (no GPU), into
<version>/ here: the cache entries that version writes, and what its layout looks like.

    /path/to/venv-with-triton-X/bin/python tests/data/triton/versions/build.py

Each entry is compiled as Triton's launcher would specialize the launches of
../jit36/lab/launches.py (pointers and multiples of 16 divisible by 16), for
GPUTarget("cuda", 90, 32), with TRITON_CACHE_DIR a scratch folder; the entry folders Triton
wrote are copied whole (every file but the launcher modules) into <version>/cache/.
layout.json records the version's file names per entry and its metadata keys.
"""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # kernels.py
sys.path.insert(0, str(HERE.parent / "jit36" / "lab"))  # launches.py
IDS = ("softmax_w4", "layernorm", "matmul_f16")
TYPES = {"float32": "fp32", "float16": "fp16"}


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="triton-cache-"))
    os.environ["TRITON_CACHE_DIR"] = str(scratch)
    import kernels
    import triton
    from launches import LAUNCHES
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    out = HERE / triton.__version__
    shutil.rmtree(out, ignore_errors=True)
    layout = {"triton": triton.__version__, "entries": []}
    for ident in IDS:
        name, consts, opts, grid, scalars, tensors = LAUNCHES[ident]
        fn = getattr(kernels, name)
        sig, attrs = {}, {}
        for i, p in enumerate(fn.arg_names):
            if p in consts:
                sig[p] = "constexpr"
            elif p in tensors:
                sig[p] = "*" + TYPES[tensors[p][0]]
                attrs[(i,)] = [["tt.divisibility", 16]]
            else:
                value = scalars[p]
                sig[p] = "fp32" if isinstance(value, float) else "i32"
                if isinstance(value, int) and value % 16 == 0:
                    attrs[(i,)] = [["tt.divisibility", 16]]
        if triton.__version__.startswith(("3.0.", "3.1.")):  # a descriptor of index sets
            from triton.compiler.compiler import AttrsDescriptor

            hints = AttrsDescriptor(divisible_by_16={i for (i,) in attrs}, equal_to_1=set())
            src = ASTSource(fn, {k: v for k, v in sig.items() if v != "constexpr"}, consts, hints)
        elif triton.__version__.startswith("3.2."):  # attrs as a descriptor object then
            from triton.backends.compiler import AttrsDescriptor

            hints = AttrsDescriptor.from_hints({i: 16 for (i,) in attrs})
            src = ASTSource(fn, {k: v for k, v in sig.items() if v != "constexpr"}, consts, hints)
        else:
            src = ASTSource(fn, sig, consts, attrs)
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=opts)
        digest = compiled.metadata.hash
        folder = next(
            m.parent
            for m in scratch.glob(f"*/{name}.json")
            if json.loads(m.read_text()).get("hash") == digest
        )
        dest = out / "cache" / folder.name
        shutil.copytree(folder, dest)
        meta = json.loads((folder / f"{name}.json").read_text())
        layout["entries"].append(
            {
                "id": ident,
                "entry": f"cache/{folder.name}",
                "files": sorted(f.name for f in folder.iterdir()),
                "metadata_keys": sorted(meta),
            }
        )
        print(triton.__version__, ident, folder.name)
    (out / "layout.json").write_text(json.dumps(layout, indent=1) + "\n")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
