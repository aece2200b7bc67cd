"""Write inputs/ and launches.json for the probe lab (run from this folder).

Each input holds the cases the documentation leaves open: -0 against +0 in both orders, NaNs
of both signs, quiet and signalling, with payloads, infinities, denormals, values past the
8-bit floats' largest finite ones and on their rounding ties, results just below, at and
above float32's smallest normal, shuffles across the two sides of a branch and from lanes
that exited, 64-bit values at their signed and unsigned bounds.
Usage: python3 make_launches.py"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
(HERE / "inputs").mkdir(exist_ok=True)
rng = np.random.default_rng(272930)


def save(name: str, array: np.ndarray) -> dict[str, str]:
    (HERE / "inputs" / f"{name}.bin").write_bytes(array.tobytes())
    return {"file": f"inputs/{name}.bin"}


def f32(bits: list[int]) -> np.ndarray:
    return np.array(bits, dtype=np.uint32)


# float32 specials: +-0, +-1, +-inf, quiet NaNs of both signs and with a payload, signalling
# NaNs of both signs, denormals of both signs, the smallest normal of both signs, 3.5
S32 = f32([0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
           0xFFC00000, 0x7FC12345, 0x7F800001, 0xFF800001, 0x000116C2, 0x80000001, 0x00800000,
           0x80800000, 0x40600000])  # fmt: skip
pa, pb = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
fa, fb = S32[pa.ravel()], S32[pb.ravel()]  # every ordered pair, 256 threads

# shuffles: warp 0 runs whole, warp 1's lanes 24-31 exit first; each lane on a side of a branch
n_sh = 64
sv = rng.integers(0, 2**32, n_sh, dtype=np.uint64).astype(np.uint32)
sb = rng.integers(0, 32, n_sh).astype(np.uint32)
sb[rng.integers(0, n_sh, 8)] += 32  # lane numbers past the warp (idx takes their low 5 bits)
sc = np.full(n_sh, 0x1F, dtype=np.uint32)  # warp 0: the whole warp, clamp at lane 31
sc[32:] = rng.choice(np.array([0x1F, 0x0, 0x181F, 0x1800, 0x1C03, 0x1007], np.uint32), 32)
side = rng.integers(0, 2, n_sh).astype(np.uint32)
side[56:] = 2
shfl_in = np.concatenate([sv, sb, sc, side])

# fp8: NaNs, infinities, the largest finite values and past them, rounding ties, denormals
F8 = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 448.0, -448.0, 464.0, 465.0, 480.0,
               -500.0, 57344.0, -57344.0, 61440.0, 61441.0, 65536.0, 1e6, 2.0**-9, 2.0**-10,
               3 * 2.0**-11, -(2.0**-11), 2.0**-16, 2.0**-17, -3 * 2.0**-18, 1e-30, 1.0625,
               1.1875, -1.125, 0.3, 17.0, -2.5], dtype=np.float32)  # fmt: skip
n8 = 128
fx = rng.normal(0, 30, n8).astype(np.float32)
fy = rng.normal(0, 3000, n8).astype(np.float32)
fx[:32], fy[:32] = F8, F8[::-1]
fx[32:64], fy[32:64] = F8[rng.permutation(32)], F8[rng.permutation(32)]
fxb, fyb = fx.view(np.uint32), fy.view(np.uint32)
fxb[[0, 33]] = [0x7FC12345, 0xFF800001]  # a payload NaN, a negative signalling NaN
fyb[[1, 34]] = [0xFFC00000, 0x7F800001]
H8 = np.array([0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x7C00, 0xFC00, 0x7BFF, 0xFBFF, 0x5F00, 0x5F40,
               0x5F80, 0xDF41, 0x7B00, 0x7B80, 0x7B81, 0x0000, 0x8000, 0x0001, 0x8001, 0x1800,
               0x1400, 0x1600, 0x9400, 0x0100, 0x0080, 0x00C0, 0x3C40, 0x3CC0, 0xBC80, 0x3555,
               0x4C40, 0xC100], dtype=np.uint16)  # fmt: skip
hl = rng.normal(0, 40, (n8, 2)).astype(np.float16).view(np.uint16)
hl[:32, 0], hl[:32, 1] = H8, H8[rng.permutation(32)]
hl[32:64, 0], hl[32:64, 1] = H8[rng.permutation(32)], H8
fp8_half = (hl[:, 0].astype(np.uint32) | (hl[:, 1].astype(np.uint32) << 16)).astype(np.uint32)
unpack = (np.arange(256) | (((np.arange(256) * 37 + 11) & 255) << 8)).astype(np.uint16)

# three-way minima: first the ties of -0 and +0 (every lane of each), then specials of both
# formats (half NaN 0x7e00, bf16 NaN 0x7fc0, signalling ones, infinities, denormals)
P16 = np.array([0x0000, 0x8000, 0x7E00, 0xFE00, 0x7C01, 0x7C00, 0xFC00, 0x3C00, 0xBC00, 0x0001,
                0x8001, 0x7FC0, 0xFFC1, 0x7F80, 0x3F80, 0x4000], dtype=np.uint32)  # fmt: skip
n3 = 256
lanes = P16[rng.integers(0, 16, (3, n3, 2))]
lanes[:, :64] = np.array([0x0000, 0x8000], dtype=np.uint32)[rng.integers(0, 2, (3, 64, 2))]
min3_in = (lanes[..., 0] | (lanes[..., 1] << 16)).astype(np.uint32).ravel()

# .ftz: results near the smallest normal 2^-126, t within 2^-20 of it (some just below it,
# exactly): a third of the threads for each of mul (x in [1/2, 1), y = t / x), add (x a few
# smallest normals, z = t - x) and fma (y = 4t / x, z = t - x * y: the product's low bits
# decide the rounding); a quarter of them negative
n_f = 256
tiny = 2.0**-126
t = tiny * (1 + rng.uniform(-(2.0**-20), 2.0**-20, n_f))
t[::5] = tiny * (1 - rng.integers(1, 9, len(t[::5])) * 2.0**-24)
t *= np.where(rng.random(n_f) < 0.25, -1.0, 1.0)
group = np.arange(n_f) % 3  # 0 mul, 1 add, 2 fma
x = rng.uniform(0.5, 1.0, n_f).astype(np.float32)
x[group == 1] = (tiny * rng.integers(2, 6, n_f)).astype(np.float32)[group == 1]
x64 = x.astype(np.float64)
y = np.where(group == 0, t / x64, np.where(group == 1, 1.0, 4 * t / x64)).astype(np.float32)
z = np.where(group == 1, t - x64, t - x64 * y.astype(np.float64)).astype(np.float32)
z[group == 0] = 1.0
x[:8] = [np.float32(2.0**-127), -(2.0**-149), 0.0, -0.0, tiny, -tiny, 1.0, np.nan]
y[:8], z[:8] = 1.0, [-0.0, 0.0, -0.0, 0.0, -tiny, tiny, -1.0, 1.0]

# 64-bit atomics: values at the signed and unsigned bounds
n_a = 128
v64 = rng.integers(-(2**63), 2**63 - 1, n_a, dtype=np.int64)
v64[:8] = [-(2**63), 2**63 - 1, -1, 0, 1, -2, 2**62, -(2**62)]
init = rng.integers(-(2**63), 2**63 - 1, 10 * n_a, dtype=np.int64)
init[9 * n_a : 10 * n_a : 2] = init[6 * n_a : 7 * n_a : 2]  # half the compares find theirs
init[8 * n_a : 8 * n_a + 8] = [2**63 - 1, -(2**63), -1, 0, -1, 0, 5, 0]
uni = [0x0123456789ABCDEF, 0xFEDCBA9876543210]

# half2 and bf16x2 atomic minima and maxima
hx = P16[rng.integers(0, 16, (n_a, 2))]
hx[:32] = np.array([0x0000, 0x8000], np.uint32)[rng.integers(0, 2, (32, 2))]
hg = P16[rng.integers(0, 16, (6, n_a, 2))]
hg[:, :32] = np.array([0x0000, 0x8000], np.uint32)[rng.integers(0, 2, (6, 32, 2))]
half_x = (hx[:, 0] | (hx[:, 1] << 16)).astype(np.uint32)
half_g = (hg[..., 0] | (hg[..., 1] << 16)).astype(np.uint32).ravel()

# TMA minima and maxima: 256 elements, old (the tensor) against new (shared)
E16 = P16.astype(np.uint16)
old_h, new_h = E16[rng.integers(0, 16, 256)], E16[rng.integers(0, 16, 256)]
old_b, new_b = E16[rng.integers(0, 16, 256)], E16[rng.integers(0, 16, 256)]
zs = np.array([0x0000, 0x8000], np.uint16)
for o, w in ((old_h, new_h), (old_b, new_b)):
    o[:64], w[:64] = zs[np.arange(64) & 1], zs[(np.arange(64) >> 1) & 1]


def tmap(buffer: dict[str, str], dtype: str) -> dict[str, object]:
    return {
        "tensormap": {
            "buffer": buffer, "dtype": dtype, "dims": [256], "strides": [], "box": [256],
            "elem_strides": [1], "interleave": 0, "swizzle": 0, "l2": 0, "oob": 0,
        }
    }  # fmt: skip


def launch(lid, kernel, block, args, dumps=(0,)):
    return {
        "id": lid, "cubin": "probes.sm_90.cubin", "kernel": kernel, "block": [block, 1, 1],
        "grid": [1, 1, 1], "dynamic_smem": 0, "args": args, "dumps": list(dumps),
    }  # fmt: skip


fp8_args = [save("fp8_x", fx), save("fp8_y", fy), save("fp8_half", fp8_half)]
launches = [
    launch("fminmax", "fminmax", 256,
           [{"zeros": 8 * 256 * 4}, save("fmm_a", fa), save("fmm_b", fb)]),
    launch("shfl_pred", "shfl_pred", n_sh, [{"zeros": 16 * n_sh * 4}, save("shfl", shfl_in)]),
    launch("fp8_pack", "fp8_pack", n8, [{"zeros": 6 * n8 * 4}, *fp8_args]),
    launch("fp8_relu", "fp8_relu", n8, [{"zeros": 2 * n8 * 4}, *fp8_args]),
    launch("fp8_unpack", "fp8_unpack", 256, [{"zeros": 2 * 256 * 4}, save("fp8_pairs", unpack)]),
    launch("min3", "min3", n3, [{"zeros": 4 * n3 * 4}, save("min3", min3_in)]),
    launch("min3_nan", "min3_nan", n3, [{"zeros": 4 * n3 * 4}, save("min3", min3_in)]),
    launch("ftz_edges", "ftz_edges", n_f,
           [{"zeros": 15 * n_f * 4}, save("ftz_x", x), save("ftz_y", y), save("ftz_z", z)]),
    launch("atomics_shared", "atomics_shared", n_a,
           [{"zeros": 23 * n_a * 8}, save("a64_v", v64), save("a64_init", init),
            {"u64": uni[0]}, {"u64": uni[1]}, {"u64": uni[0]}, {"u64": uni[1]}]),
    launch("atomics_half", "atomics_half", n_a,
           [save("half_g", half_g), {"zeros": 2 * n_a * 4}, save("half_x", half_x)], (0, 1)),
    launch("tma_minmax", "tma_minmax", 128,
           [tmap(save("tma_old_h", old_h), "FLOAT16"), tmap(save("tma_old_h", old_h), "FLOAT16"),
            tmap(save("tma_old_b", old_b), "BFLOAT16"),
            tmap(save("tma_old_b", old_b), "BFLOAT16"),
            save("tma_new_h", new_h), save("tma_new_b", new_b)], (0, 1, 2, 3)),
]  # fmt: skip
# integer tensor cores: bytes of every value, accumulators near the int32 bounds (for
# .satfinite) in warp 1
n_i = 64
ia = rng.integers(0, 2**32, 4 * n_i, dtype=np.uint64).astype(np.uint32)
ia[: 4 * 8] = 0x807F7F80  # the byte bounds
ib = rng.integers(0, 2**32, 2 * n_i, dtype=np.uint64).astype(np.uint32)
ic = rng.integers(-1000, 1000, 4 * n_i).astype(np.int32)
ic.reshape(4, n_i)[:, 32:] = rng.choice(
    np.array([2**31 - 1, -(2**31), 2**31 - 70000, -(2**31) + 70000], np.int64), (4, 32)
).astype(np.int32)
launches.append(
    launch("imma", "imma", n_i,
           [{"zeros": 16 * n_i * 4}, save("imma_a", ia), save("imma_b", ib), save("imma_c", ic)])
)  # fmt: skip
(HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1))
print(len(launches), "launches")
