"""Write inputs/ and launches.json for probe lab 2 (run from this folder).

Each input holds the cases the documentation leaves open: float, half and bf16 specials for
MUFU.TANH with arguments spread over every binade; doubles for the RCP64H/RSQ64H seeds with
low words that are not zero (the seed reads the high word alone); NaNs of both signs, quiet
and signalling, with payloads in the high and the low bits, against numbers, infinities and
each other, in double arithmetic and in every float conversion; the generic atomics' first
values and operands at the signed and unsigned bounds and, for inc and dec, around their
limits; shuffles whose source lanes have exited.
Usage: python3 make_launches.py"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
(HERE / "inputs").mkdir(exist_ok=True)
rng = np.random.default_rng(27293002)


def save(name: str, array: np.ndarray) -> dict[str, str]:
    (HERE / "inputs" / f"{name}.bin").write_bytes(array.tobytes())
    return {"file": f"inputs/{name}.bin"}


def launch(lid, kernel, block, args, grid=1, dumps=(0,)):
    return {
        "id": lid, "cubin": "probes2.sm_90.cubin", "kernel": kernel, "block": [block, 1, 1],
        "grid": [grid, 1, 1], "dynamic_smem": 0, "args": args, "dumps": list(dumps),
    }  # fmt: skip


def u32(bits: list[int]) -> np.ndarray:
    return np.array(bits, dtype=np.uint32)


# tanh: 1024 words. float specials (+-0, denormals, the smallest normals, +-inf, NaNs of both
# signs, quiet and signalling, with payloads, 1, 2^-12 .. 2^-10 where tanh(x) leaves x, 9 and
# 10 where it reaches 1, the largest finite), then words whose halves are half and bf16
# specials, random patterns, magnitudes spread over 2^-24 .. 2^6 of either sign, and every
# 2^15-th float of [1, 2)
T32 = u32([0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F800000,
           0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF812345, 0x7FFFFFFF, 0x3F800000,
           0xBF800000, 0x3F000000, 0x39800000, 0x39000000, 0x3A800000, 0xBA000000, 0x41100000,
           0x41119999, 0x41200000, 0xC1200000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3E800000, 0x40000000,
           0x40800000, 0x3C000000, 0x3B800001, 0x3F7FFFFF])  # fmt: skip
H16 = u32([0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01,
           0xFD55, 0x7FFF, 0x3C00, 0xBC00, 0x1000, 0x1400, 0x1800, 0x4480, 0x4500, 0x7BFF,
           0xFBFF, 0x3800, 0x4000, 0x4400])  # fmt: skip
B16 = u32([0x0000, 0x8000, 0x0001, 0x807F, 0x0080, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81,
           0xFF85, 0x7FFF, 0x3F80, 0xBF80, 0x3980, 0x3A00, 0x3A80, 0x4110, 0x4120, 0x7F7F,
           0xFF7F, 0x3F00, 0x4000, 0x4080])  # fmt: skip
n_t = 1024
tanh_in = rng.integers(0, 2**32, n_t, dtype=np.uint64).astype(np.uint32)
tanh_in[: len(T32)] = T32
k = len(T32)
pairs = (H16[:, None] | (H16[None, :] << 16)).ravel()
tanh_in[k : k + 96] = rng.choice(pairs, 96, replace=False)
k += 96
bpairs = (B16[:, None] | (B16[None, :] << 16)).ravel()
tanh_in[k : k + 96] = rng.choice(bpairs, 96, replace=False)
k += 96 + 256  # then 256 random patterns
mags = 2.0 ** rng.uniform(-24, 6, 384) * np.where(rng.random(384) < 0.5, -1, 1)
tanh_in[k : k + 384] = mags.astype(np.float32).view(np.uint32)
k += 384
tanh_in[k:] = 0x3F800000 + (np.arange(n_t - k, dtype=np.uint32) << 15)

# rcp/rsqrt of doubles: 512. specials (+-0, denormals, the smallest normal, +-inf, NaNs with
# payloads high and low, 1, 2, 4, 0.25, the largest, negative numbers), numbers with a low
# word (the seed reads the high word only), doubles of every exponent, then every 2^11-th
# high word of [1, 4) with a random low word
D64 = np.array([0x0000000000000000, 0x8000000000000000, 0x0000000000000001, 0x000FFFFFFFFFFFFF,
                0x8008000000000000, 0x0010000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
                0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x7FF4000012345678,
                0xFFFFFFFFFFFFFFFF, 0x3FF0000000000000, 0x4000000000000000, 0x4010000000000000,
                0x3FD0000000000000, 0x7FEFFFFFFFFFFFFF, 0xBFF0000000000000, 0xC010000000000000,
                0x3FF0000000000001, 0x3FF00000FFFFFFFF, 0x3FFFFFFFFFFFFFFF, 0x4000000080000000,
                0x0000000100000000, 0x000FFFFF00000000, 0x7FE0000000000000, 0x0020000000000000,
                0x3FE0000000000000, 0x3FEFFFFF00000000, 0x3FF8000000000000, 0x4008000000000000],
               dtype=np.uint64)  # fmt: skip
n_d = 512
dbl = rng.integers(0, 2**64, n_d, dtype=np.uint64)
dbl[: len(D64)] = D64
k = len(D64) + 96  # 96 random patterns
spread = 2.0 ** rng.uniform(-1070, 1023, 160) * np.where(rng.random(160) < 0.25, -1, 1)
dbl[k : k + 160] = spread.view(np.uint64)
k += 160
high = (0x3FF00000 + (np.arange(n_d - k, dtype=np.uint64) << 11)) << np.uint64(32)
dbl[k:] = high | rng.integers(0, 2**32, n_d - k, dtype=np.uint64)

# NaNs in double arithmetic: every ordered pair (a, b) of 16 doubles, c running over them too
S64 = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FFC000000000001, 0x7FF0000000000001,
                0xFFF4000000000000, 0x7FF0DEAD0000BEEF, 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000,
                0xFFF0000000000000, 0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000,
                0xC004000000000000, 0x0000000000000001, 0x7E37E43C8800759C, 0xFFF812345678ABCD],
               dtype=np.uint64)  # fmt: skip
ia, ib = np.divmod(np.arange(256), 16)
da, db, dc = S64[ia], S64[ib], S64[(ia * 5 + ib * 3 + 7) % 16]

# NaNs through conversions: 256 of each, specials first, then random NaN payloads and numbers
F32 = u32([0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7F800001, 0xFF800001, 0x7FBFFFFF, 0xFFFFFFFF,
           0x7FFFFFFF, 0x7FA00000, 0xFFD55555, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000,
           0x00000001, 0x3F800000, 0x477FF000, 0x477FF001, 0x7F7FFFFF, 0x33800000, 0xB3800001,
           0x7FC02000, 0x7F802000, 0x7FE00001])  # fmt: skip
MORE64 = np.array([0x7FF0000020000000, 0x7FF0000010000000, 0xFFF7FFFFFFFFFFFF, 0x7FF8000000000001,
                   0x47EFFFFFE0000000, 0x47EFFFFFF0000000, 0x40EFFE0000000000, 0x40EFFF0000000000],
                  dtype=np.uint64)  # fmt: skip
S64c = np.concatenate([S64, MORE64])
H2 = u32([0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x7FFF, 0xFFFF, 0x7D55, 0x7E01, 0x7C00, 0xFC00, 0x0000,
          0x8000, 0x0001, 0x3C00, 0x7BFF, 0x7DFF])  # fmt: skip
BF = u32([0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7FFF, 0xFFFF, 0x7FA5, 0x7FC1, 0x7F80, 0xFF80, 0x0000,
          0x8000, 0x0001, 0x3F80, 0x7F7F, 0x7FBF])  # fmt: skip
n_c = 256


def nan_or_number(bits: np.ndarray, exp_mask: int, magnitude: int) -> np.ndarray:
    """Half of the random patterns made NaNs (every exponent bit set, a payload)."""
    t = bits.dtype.type
    nan = rng.random(len(bits)) < 0.5
    out = np.where(nan, bits | t(exp_mask), bits)
    inf = (out & t(magnitude)) == t(exp_mask)
    return np.where(nan & inf, out | t(1), out).astype(bits.dtype)


cf = nan_or_number(rng.integers(0, 2**32, n_c, dtype=np.uint64).astype(np.uint32),
                   0x7F800000, 0x7FFFFFFF)  # fmt: skip
cf[: len(F32)] = F32
cd = nan_or_number(rng.integers(0, 2**64, n_c, dtype=np.uint64),
                   0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF)  # fmt: skip
cd[: len(S64c)] = S64c
lo16 = nan_or_number(rng.integers(0, 2**16, n_c).astype(np.uint32), 0x7C00, 0x7FFF)
hi16 = nan_or_number(rng.integers(0, 2**16, n_c).astype(np.uint32), 0x7F80, 0x7FFF)
lo16[: 2 * len(H2)] = np.concatenate([H2, H2[::-1]])
hi16[: 2 * len(BF)] = np.concatenate([BF, H2])  # the high half read as half and as bf16
ch = (lo16 | (hi16 << 16)).astype(np.uint32)

launches = [
    launch("tanh", "mufu_tanh", 256, [{"zeros": 3 * n_t * 4}, save("tanh", tanh_in)], grid=4),
    launch("rcp_rsq64", "mufu_f64", 256, [{"zeros": 2 * n_d * 8}, save("f64", dbl)], grid=2),
    launch("nan_double", "nan_double", 256,
           [{"zeros": 9 * 256 * 8}, save("nan_a", da), save("nan_b", db), save("nan_c", dc)]),
    launch("nan_convert", "nan_convert", n_c,
           [{"zeros": 12 * n_c * 4}, save("cvt_f", cf), save("cvt_d", cd), save("cvt_h", ch)]),
]  # fmt: skip

# shuffles from exited lanes: warp 0's lanes 24-31 return first, warp 1's 0-7, warp 2's odd
# lanes, warp 3's 8-23; b runs over every lane (and past the warp), c over whole-warp clamps
# and segments
n_s = 128
lane = np.arange(n_s) % 32
gone = np.zeros(n_s, dtype=np.uint32)
gone[24:32] = 1
gone[32:40] = 1
gone[64 + 1 : 96 : 2] = 1
gone[96 + 8 : 96 + 24] = 1
sv = rng.integers(1, 2**32, n_s, dtype=np.uint64).astype(np.uint32)
sb = rng.integers(0, 32, n_s).astype(np.uint32)
sb[:32] = (np.arange(32) * 7 + 3) % 32
sb[rng.integers(0, n_s, 8)] += 32
sc = np.full(n_s, 0x1F, dtype=np.uint32)
sc[rng.integers(0, n_s, 24)] = rng.choice(u32([0x0, 0x181F, 0x1800, 0x1C03, 0x1007, 0x101F]), 24)
launches.append(
    launch("shfl_exited", "shfl_exited", n_s,
           [{"zeros": 8 * n_s * 4}, save("shfl", np.concatenate([sv, sb, sc, gone]))])
)  # fmt: skip

# generic atomics: first values and operands per op, the same for the three patterns
B32 = u32([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x80000001, 0x7FFFFFFE])
ops32 = ["min_s32", "max_s32", "min_u32", "max_u32", "exch", "and", "or", "xor", "inc", "dec"]
ops64 = ["min_s64", "exch64", "xor64"]
PATTERNS = {"each": 0, "warp": 1, "pairs": 2}


def gatom_input(op: str) -> np.ndarray:
    if op in ("inc", "dec"):  # words and limits around each other; a limit of 0 and of ~0
        first = rng.integers(0, 12, 64).astype(np.uint32)
        first[:4] = [0, 0, 0xFFFFFFFF, 5]
        limit = rng.integers(0, 10, 64).astype(np.uint32)
        limit[:6] = [0, 0xFFFFFFFF, 0xFFFFFFFF, 5, 3, 0]
        return np.concatenate([first, limit])
    if op.endswith("64"):
        B64 = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64 - 2, 2**32 - 1, 2**32],
                       dtype=np.uint64)  # fmt: skip
        v = rng.integers(0, 2**64, 128, dtype=np.uint64)
        v[rng.integers(0, 128, 48)] = B64[rng.integers(0, 8, 48)]
        return v
    v = rng.integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32)
    v[rng.integers(0, 128, 48)] = B32[rng.integers(0, 8, 48)]
    return v


for op in ops32 + ops64:
    src = save(f"gatom_{op}", gatom_input(op))
    words = 256 if op.endswith("64") else 128
    for pat, mode in PATTERNS.items():
        launches.append(
            launch(f"gatom_{op}_{pat}", f"gatom_{op}", 64,
                   [{"zeros": words * 4}, src, {"int": mode}, {"u64": 0}])
        )  # fmt: skip
(HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1))
print(len(launches), "launches")
