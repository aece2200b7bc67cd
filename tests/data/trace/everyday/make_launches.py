"""Write launches.json and inputs/ for the issue-20 kernels (deterministic).

Usage: python3 tests/data/trace/everyday/make_launches.py
"""

import json
from pathlib import Path

import numpy as np

here = Path(__file__).parent
inputs = here / "inputs"
inputs.mkdir(exist_ok=True)
rng = np.random.default_rng(20)


def save(name: str, a: np.ndarray) -> dict[str, str]:
    (inputs / name).write_bytes(a.tobytes())
    return {"file": f"inputs/{name}"}


launches: list[dict[str, object]] = []


def add(id_: str, source: str, kernel: str, block, args, grid=(1, 1, 1), **extra):
    launches.append(
        {
            "id": id_,
            "source": f"kernels/{source}.cu",
            "kernel": kernel,
            "block": list(block) + [1] * (3 - len(block)),
            "grid": list(grid),
            "dynamic_smem": 0,
            "args": args,
            **extra,
        }
    )


# atomics under contention: block size x bins
fadd = [
    (64, 64),
    (64, 8),
    (64, 1),
    (64, 8),
    (64, 1),
    (64, 1),
    (64, 2),
    (64, 4),
    (64, 16),
    (64, 32),
    (32, 1),
    (32, 8),
    (96, 1),
    (96, 8),
    (128, 1),
    (128, 2),
    (128, 8),
    (128, 32),
    (256, 1),
    (256, 16),
]
seen: dict[str, int] = {}
for threads, nb in fadd:
    key = f"fadd_t{threads}_b{nb}"
    seen[key] = seen.get(key, 0) + 1
    id_ = key if seen[key] == 1 else f"{key}_run{seen[key]}"
    add(id_, "ev_atomics", "ev_fadd", (threads,), [{"zeros": 256}, nb])
for kernel, size, cases in (
    ("ev_dadd", 512, [(64, 64), (64, 8), (64, 1), (128, 1)]),
    ("ev_h2add", 256, [(64, 64), (64, 8), (64, 1)]),
    ("ev_hadd", 128, [(64, 64), (64, 8), (64, 1)]),
    ("ev_u64", 512, [(64, 64), (64, 8), (64, 1)]),
    ("ev_i64", 512, [(64, 64), (64, 8), (64, 1)]),
    ("ev_i32", 256, [(128, 64), (128, 8), (128, 1)]),
):
    for threads, nb in cases:
        add(
            f"{kernel[3:]}_t{threads}_b{nb}",
            "ev_atomics",
            kernel,
            (threads,),
            [{"zeros": size}, nb],
        )
# one ATOMS.CAS per lane: (n lanes, stride, cmp, v0, dv)
modes = {"all": (0, 0, 0), "first": (0, 1, 0), "none": (7, 1, 1), "each": (0, 1, 1)}
cas = [(n, 0, m) for n in (1, 2, 16, 17, 32) for m in ("all", "first", "none")]
cas += [(n, 1, m) for n in (16, 32) for m in ("each", "none")]
cas += [(32, 2, "each"), (32, 32, "each")]
for width in (32, 64):
    for n, stride, m in cas:
        cmp, v0, dv = modes[m]
        add(
            f"cas{width}_n{n}_s{stride}_{m}",
            "ev_atomics",
            f"ev_cas{width}",
            (32,),
            [{"zeros": 128 * width // 8}, n, stride, cmp, v0, dv],
        )
# constant data: from the binary only (offs unset), then offs set by the host
tile = save("const_in.bin", np.arange(1024, dtype=np.float32))
offs = np.array([1, 2, 4, 8, 16, 32, 33, 0], dtype=np.int32)
(inputs / "const_offs.bin").write_bytes(offs.tobytes())
add("const_unset", "ev_const", "ev_const", (128,), [{"zeros": 512}, tile])
add(
    "const_host",
    "ev_const",
    "ev_const",
    (128,),
    [{"zeros": 512}, tile],
    const={"offs": "inputs/const_offs.bin"},
)
# data-dependent branches: with their data and with zeros
flags = save("branch_flags.bin", (rng.random(256) < 0.6).astype(np.int32))
keys = save("branch_keys.bin", rng.integers(0, 100, 256).astype(np.int32))
add("branch_data", "ev_branch", "ev_filter", (256,), [{"zeros": 1024}, flags, keys])
add(
    "branch_zeros",
    "ev_branch",
    "ev_filter",
    (256,),
    [{"zeros": 1024}, {"zeros": 1024}, {"zeros": 1024}],
)
# whole grids
for w, h in ((4096, 4096), (256, 256), (100, 70)):
    add(
        f"transpose_{w}x{h}",
        "ev_grid",
        "ev_transpose",
        (32, 8),
        [{"zeros": 4 * w * h}, {"zeros": 4 * w * h}, w, h],
        grid=(-(-w // 32), -(-h // 32), 1),
    )
add(
    "blockdep_8x3",
    "ev_grid",
    "ev_blockdep",
    (1024,),
    [{"zeros": 4 * 1024 * 24}, save("blockdep_in.bin", np.arange(1024 * 24, dtype=np.float32))],
    grid=(8, 3, 1),
)
# predicates kept in a register (P2R ..., PR / R2P PR)
mask = save("p2r_mask.bin", rng.integers(0, 1024, 128).astype(np.int32))
p2r_in = save("p2r_in.bin", rng.standard_normal(128 * 3).astype(np.float32))
add("p2r", "ev_p2r", "ev_p2r", (128,), [{"zeros": 512}, p2r_in, mask, 3])

(here / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")
print(len(launches), "launches")
