"""Write inputs/ and launches.json for the CUDA opcode lab (run from this folder).

The inputs are deterministic and hold the edge cases each instruction must get right: bytes
and halves at 0x00/0x7f/0x80/0xff (0x0000/0x7fff/0x8000/0xffff) for the SIMD video and
packed minimum/maximum instructions, NaN, infinities, -0, denormals and values past the
largest finite bf16 for the bf16x2 arithmetic, warps whose lanes share values (and whole
warps of one value) for the matches, lanes of one warp in every case of a switch.
Usage: python3 make_launches.py"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
(HERE / "inputs").mkdir(exist_ok=True)


def save(name: str, array: np.ndarray) -> dict[str, str]:
    (HERE / "inputs" / f"{name}.bin").write_bytes(array.tobytes())
    return {"file": f"inputs/{name}.bin"}


rng = np.random.default_rng(2930)
# video: 192 words (a, b, c for 64 threads); the first 64 of each from edge bytes/halves
edge_bytes = np.array([0x00, 0x7F, 0x80, 0xFF, 0x01, 0xFE, 0x40, 0xC0], dtype=np.uint32)
pick = rng.integers(0, 8, (192, 4))
video = (edge_bytes[pick] << np.array([0, 8, 16, 24], dtype=np.uint32)).sum(1).astype(np.uint32)
edge_halves = np.array([0x0000, 0x7FFF, 0x8000, 0xFFFF, 0x0001, 0xFFFE], dtype=np.uint32)
halves = rng.integers(0, 6, (96, 2))
video[::2] = (edge_halves[halves[:, 0]] | (edge_halves[halves[:, 1]] << 16)).astype(np.uint32)
video[[0, 64, 128]] = [0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]  # the 32-bit bounds
video[[1, 65, 129]] = [5, 5, 5]  # ties
video[[2, 66, 130]] = [0x80000000, 0x7FFFFFFF, 0]
video2 = rng.integers(0, 2**32, 192, dtype=np.uint64).astype(np.uint32)

# warps: warp 0 draws from four values (matches of several groups), warp 1 one value
ints = rng.choice(np.array([3, 4, 12, 0xFFFFFFF5], dtype=np.uint32), 64)
ints[32:] = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
wide = rng.choice(np.array([1, 2**40 + 1, 2**40 + 9, 2**63], dtype=np.uint64), 64)
wide[32:] = np.uint64(0xABCD_0000_1234_0000)
wide[40] = np.uint64(0xABCD_0000_1234_0001)  # one lane apart in warp 1: ALL is false there
sw = rng.integers(-1000, 1000, 64).astype(np.int32)
sw[:16] = np.arange(16)  # every case in the first half-warp


def bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bits, rounded to nearest even (the values are chosen exact anyway)."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


specials = np.array(
    [0x7FC0, 0xFFC0, 0x7F80, 0xFF80, 0x8000, 0x0000, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F,
     0xFF7F, 0x3F80, 0xBF80, 0x7F81, 0x4000],
    dtype=np.uint16,
)  # fmt: skip
bx = bf16(rng.normal(0, 3, 192))
bx[rng.integers(0, 192, 60)] = specials[rng.integers(0, 16, 60)]
bx[[0, 64, 128]] = [0x7F7F, 0x4000, 0x7F7F]  # a * b + c past the largest finite: inf
bx[[1, 65, 129]] = [0x0080, 0x3F00, 0x8000]  # half the smallest normal: a denormal product
bx[[2, 66, 130]] = [0x0001, 0x3F80, 0x0001]  # denormal operands
bx[[3, 67, 131]] = [0x8000, 0x0000, 0x8000]  # -0 and +0 in min, max and the sums
bx[[4, 68, 132]] = [0x7FC1, 0x3F80, 0x3F80]  # a NaN payload
bx2 = bf16(rng.normal(0, 1, 192))
bx2[::7] = (bf16(rng.normal(0, 1, 28)) & 0x807F) | 0x0000  # denormals
bx2[1::11] = bf16(rng.normal(0, 1, 18) * 2.0**120)
hx = rng.normal(0, 2, 128).astype(np.float16).view(np.uint16)
hx[[0, 1, 2, 3, 64, 65, 66, 67]] = [0x7E00, 0x7C00, 0x8000, 0x0001, 0x3C00, 0x7C00, 0x0000, 0x0001]
hx[70:80] = hx[6:16]  # equal pairs
doubles = rng.normal(0, 10, 128)
doubles[[0, 1, 2, 3, 4, 5, 6, 7]] = [np.nan, 1.0, np.nan, -0.0, 0.0, np.inf, -np.inf, 5e-324]
doubles[[64, 65, 66, 67, 68, 69, 70, 71]] = [2.0, np.nan, np.nan, 0.0, -0.0, -np.inf, 7.0, -5e-324]
doubles[72:80] = doubles[8:16]  # equal pairs
collective_in = rng.integers(0, 64, 64).astype(np.uint32)
# the second round: exact sums of doubles, 64-bit values of every sign and size
dv = rng.integers(-4000, 4000, 128).astype(np.float64) * 0.25
lv = rng.integers(-(2**62), 2**62, 128, dtype=np.int64)
lv[[0, 1, 2, 3]] = [-(2**63), 2**63 - 1, -1, 0]
u64_init = np.zeros(8 + 3 * 128, dtype=np.uint64)
u64_init[[2, 3]] = np.uint64(2**64 - 1)
u64_init[8:] = rng.integers(0, 2**63, 3 * 128, dtype=np.int64).astype(np.uint64)
u64_init[8 + 128 : 8 + 256 : 2] = 0  # half the compare-and-swaps find what they compare
s64_init = np.array([-(2**63), 2**63 - 1], dtype=np.int64)
dsum_init = np.zeros(4 + 128, dtype=np.float64)
dsum_init[4:] = rng.integers(-100, 100, 128) * 0.5
nan_bits = np.array(
    [0x7FF8000000000001, 0x7FF8DEAD00000000, 0xFFF8000000000000, 0x7FF0000000000001,
     0x7FF4000000000000, 0xFFF0000000000002, 0x3FF0000000000000, 0x8000000000000000],
    dtype=np.uint64,
)  # fmt: skip
pairs = rng.integers(0, 8, (2, 32))
pairs[:, :8] = [np.arange(8), (np.arange(8) + 1) % 8]
pairs[:, 8:16] = [np.arange(8), np.arange(8)]
nan_in = nan_bits[pairs.ravel()]
trig = rng.normal(0, 4, 64)
trig[[0, 1, 2, 3, 4, 5]] = [0.0, -0.0, 1e300, -(2.0**40) - 0.5, 2.0**31 + 3, np.pi]


def launch(lid, cubin, kernel, block, args, dumps=(0,)):
    return {
        "id": lid, "cubin": cubin, "kernel": kernel, "block": [block, 1, 1],
        "grid": [1, 1, 1], "dynamic_smem": 0, "args": args, "dumps": list(dumps),
    }  # fmt: skip


C90 = "cuda90.sm_90.cubin"
launches = [
    launch("video_ops", C90, "video_ops", 64, [{"zeros": 38 * 64 * 4}, save("video", video)]),
    launch("video_ops_random", C90, "video_ops", 64,
           [{"zeros": 38 * 64 * 4}, save("video2", video2)]),
    launch("warp_ops", C90, "warp_ops", 64,
           [{"zeros": 768 * 4}, save("warp_ints", ints), save("warp_wide", wide)]),
    launch("jump_table", C90, "jump_table", 64, [{"zeros": 256}, save("switch", sw), {"int": 9}]),
    launch("bf16_ops", C90, "bf16_ops", 32,
           [{"zeros": 17 * 32 * 4}, save("bf16", bx), save("half", hx)]),
    launch("bf16_ops_random", C90, "bf16_ops", 32,
           [{"zeros": 17 * 32 * 4}, save("bf16_2", bx2), save("half", hx)]),
    launch("double_min_max", C90, "double_min_max", 64,
           [{"zeros": 256 * 8}, save("doubles", doubles)]),
    launch("collective", "collective.sm_90.cubin", "collective", 64,
           [{"zeros": 256}, save("collective", collective_in)]),
    launch("cg_tiles", "collective.sm_90.cubin", "cg_tiles", 64,
           [{"zeros": 256}, save("collective", collective_in)]),
    launch("cg_tiles_debug", "collective_debug.sm_90.cubin", "cg_tiles", 64,
           [{"zeros": 256}, save("collective", collective_in)]),
    launch("collective_debug", "collective_debug.sm_90.cubin", "collective", 64,
           [{"zeros": 256}, save("collective", collective_in)]),
]  # fmt: skip
C90B = "cuda90b.sm_90.cubin"
launches += [
    launch("atomics_wide", C90B, "atomics_wide", 128,
           [save("dsum", dsum_init), {"zeros": 16}, save("u64_init", u64_init),
            save("s64_init", s64_init), {"zeros": 128 * 8}, {"zeros": 3 * 128 * 8},
            save("dv", dv), save("lv", lv)], (0, 1, 2, 3, 4, 5)),
    launch("nan_payloads", C90B, "nan_payloads", 32, [{"zeros": 128 * 8}, save("nans", nan_in)]),
    launch("module_data", C90B, "module_data", 64,
           [{"zeros": 128 * 8}, {"zeros": 64 * 4}, save("trig", trig)], (0, 1)),
]  # fmt: skip
(HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1))
print(len(launches), "launches")
