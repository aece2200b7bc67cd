"""Write pairs7's inputs and launches.json (issue 30): pairs5's and pairs6's reads with the
load issued without a predicate.

pairs3 to pairs6 read through a predicated load (``@P0 LDS.64 R2, [R0]``), and there no read
whose merged phase asks a bank for two words merged, whatever its lanes; the hardware-truth
cases that merge with such a conflict load inside a branch (``LDS.64 R2, [R4+UR4]``, no
predicate). These kernels (``kernels/prb.cu``) issue the load unpredicated: inside a branch
(``prb_br64``: ``LDS.64 R6, [R0]``; ``prb_br128``: ``LDS.128 R4, [R2]``) for every read,
and with every lane on, no branch (``prb_all64``/``prb_all128``: ``[R0+UR4]``) for the reads
whose lanes are all on, plus new such reads drawn as pairs6 draws them; and broadcasts (every
lane on one element) of 1 to 32 lanes in all three forms, the predicated one with pairs5's
kernels (``pr.sm_90.cubin``).
Run from this folder: ``python3 make_launches.py`` (pairs5 and pairs6 beside it).
"""

from __future__ import annotations

import importlib.util
import json
import random
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
WIDTH = {"pr_ld64": "64", "pr_ld128": "128"}


def _module(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, HERE.parent / name / "make_launches.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def full(rng: random.Random, kernel: str) -> list[int]:
    """A read with every lane on, its lanes paired at distance 1 or 2 (pairs6's draw)."""
    p6 = _module("pairs6")
    sets, elements = p6.KERNELS[kernel]
    d = rng.choice((1, 2))
    used = rng.sample(range(sets), rng.randint(1, sets))
    words = rng.choice((1, 2, 2, 3, 4))
    pool = [s + sets * rng.randrange(elements // sets) for s in used for _ in range(words)]
    idx = [0] * 32
    for a, b in p6.slots(d):
        idx[a] = idx[b] = rng.choice(pool)
    return idx


def reads() -> dict[str, tuple[str, list[int]]]:
    out = {}
    for lab in ("pairs5", "pairs6"):
        for name, (kernel, idx) in _module(lab).reads().items():
            out[f"{lab[-1]}_{name}"] = (kernel, idx)
    for n in (1, 2, 4, 8, 9, 15, 16, 17, 24, 32):
        for kernel in ("pr_ld64", "pr_ld128"):
            out[f"bc{WIDTH[kernel]}_first{n}"] = (kernel, [5] * n + [-1] * (32 - n))
    for step in (2, 4):
        for kernel in ("pr_ld64", "pr_ld128"):
            out[f"bc{WIDTH[kernel]}_every{step}"] = (
                kernel,
                [5 if n % step == 0 else -1 for n in range(32)],
            )
    rng = random.Random(7)
    for i in range(40):
        out[f"f64_{i:02d}"] = ("pr_ld64", full(rng, "pr_ld64"))
    for i in range(20):
        out[f"f128_{i:02d}"] = ("pr_ld128", full(rng, "pr_ld128"))
    return out


def main() -> None:
    launches = []
    for name, (kernel, idx) in reads().items():
        (HERE / "inputs" / f"{name}.bin").write_bytes(struct.pack("<32i", *idx))
        forms = (
            ["br"] + (["all"] if min(idx) >= 0 else []) + (["pr"] if name.startswith("bc") else [])
        )
        for form in forms:
            k = kernel if form == "pr" else f"prb_{form}{WIDTH[kernel]}"
            launches.append(
                {
                    "id": f"{form}_{name}",
                    "source": "../pairs5/kernels/pr.cu" if form == "pr" else "kernels/prb.cu",
                    "kernel": k,
                    "block": [32, 1, 1],
                    "grid": [1, 1, 1],
                    "dynamic_smem": 0,
                    "args": [{"zeros": 1024}, {"file": f"inputs/{name}.bin"}],
                    "mangled": k,
                    **({"cubin": "pr.sm_90.cubin"} if form == "pr" else {}),
                }
            )
    (HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")


if __name__ == "__main__":
    main()
