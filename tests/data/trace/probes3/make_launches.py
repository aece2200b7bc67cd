"""Write inputs/ and launches.json for probe lab 3 (run from this folder).

The 64-bit generic atomics' first values and operands at the signed and unsigned bounds, in
the three lane patterns of probe lab 2; doubles for |x|, -x, min, max and the bf16
conversions: every ordered pair of 16 specials (NaNs of both signs, quiet and signalling,
payloads high and low, infinities, zeros, numbers, the smallest denormal), then random NaNs
and numbers, with bf16 patterns (specials first) in the low half-word of the second operand.
Usage: python3 make_launches.py"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
(HERE / "inputs").mkdir(exist_ok=True)
rng = np.random.default_rng(30300003)
CUBIN = "probes3.sm_90.cubin"


def save(name: str, array: np.ndarray) -> dict[str, str]:
    (HERE / "inputs" / f"{name}.bin").write_bytes(array.tobytes())
    return {"file": f"inputs/{name}.bin"}


def launch(lid: str, kernel: str, block: int, args: list, grid: int = 1) -> dict:
    return {
        "id": lid, "cubin": CUBIN, "kernel": kernel, "block": [block, 1, 1],
        "grid": [grid, 1, 1], "dynamic_smem": 0, "args": args, "dumps": [0],
    }  # fmt: skip


SPECIALS = np.array(
    [
        0x7FF8000000000000, 0xFFF8000000000000,  # quiet NaNs, both signs
        0x7FF0000000000001, 0xFFF4000000000000,  # signalling NaNs (payload low, high)
        0x7FFFFFFFFFFFFFFF, 0x7FF80000DEADBEEF,  # all-ones NaN, quiet with a low payload
        0x7FF0000000000000, 0xFFF0000000000000,  # +-inf
        0x0000000000000000, 0x8000000000000000,  # +-0
        0x3FF0000000000000, 0xC000000000000000,  # 1, -2
        0x0000000000000001, 0x8000000000000001,  # the smallest denormals
        0x3FF0000010000000, 0x47EFFFFFE0000000,  # 1 + a bf16 tie, near the bf16 maximum
    ],
    dtype=np.uint64,
)  # fmt: skip
BF16 = [0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7FFF, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001,
        0x3F80, 0xBF80, 0x7F7F, 0x0080, 0x807F, 0x7FA5]  # fmt: skip

launches = []
# nan_misc: 512 threads (2 blocks of 256), a and b 512 doubles each
a = np.empty(512, np.uint64)
b = np.empty(512, np.uint64)
a[:256] = np.repeat(SPECIALS, 16)
b[:256] = np.tile(SPECIALS, 16)
rnd = rng.integers(0, 2**64, 512, dtype=np.uint64)
nan = rng.random(512) < 0.5
rnd = np.where(nan, rnd | np.uint64(0x7FF0000000000000), rnd)
rnd = np.where(nan & (rnd & np.uint64(0x000FFFFFFFFFFFFF) == 0), rnd | np.uint64(1), rnd)
a[256:] = rnd[:256]
b[256:] = (rnd[256:] & ~np.uint64(0xFFFF)) | rng.integers(0, 2**16, 256).astype(np.uint64)
b[256 : 256 + len(BF16)] = (b[256 : 256 + len(BF16)] & ~np.uint64(0xFFFF)) | np.array(
    BF16, np.uint64
)
ab = save("nan_ab", np.concatenate([a, b]))
launches.append(launch("nan_misc", "nan_misc", 256, [{"zeros": 11 * 512 * 4}, ab], grid=2))

B64 = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64 - 2, 2**32 - 1, 2**32], dtype=np.uint64)
for op in ["max_s64", "min_u64", "max_u64", "and64", "or64"]:
    v = rng.integers(0, 2**64, 128, dtype=np.uint64)
    v[rng.integers(0, 128, 48)] = B64[rng.integers(0, 8, 48)]
    src = save(f"gatom_{op}", v)
    for pat, mode in {"each": 0, "warp": 1, "pairs": 2}.items():
        launches.append(
            launch(f"gatom_{op}_{pat}", f"gatom_{op}", 64,
                   [{"zeros": 256 * 4}, src, {"int": mode}, {"u64": 0}])
        )  # fmt: skip
(HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1))
print(len(launches), "launches")
