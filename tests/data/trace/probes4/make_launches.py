"""Write inputs/ and launches.json for probe lab 4 (run from anywhere).

1024 doubles (inputs/f64.bin) and 1024 floats (inputs/f32.bin), each converted to float16 and
bfloat16 with every rounding mode by kernels/probes4.cu: first the specials (zeros,
infinities, NaNs of both signs with payloads where either format keeps some, the largest
finite values of both formats and past them, the roundings' ties at the overflow edge, the
smallest normals, subnormals of both formats and of the source, ties and the source's next
values above and below them), each with both signs; then values near ties (a tie of either
format, exact, one ulp of the source above and below, and a random distance), then random
values spread over each format's exponents, then random bit patterns.
Usage: python3 make_launches.py"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
(HERE / "inputs").mkdir(exist_ok=True)
rng = np.random.default_rng(40400004)
CUBIN = "probes4.sm_90.cubin"
N = 1024
# the two targets: (mantissa bits, smallest normal's exponent, largest finite)
F16 = (10, -14, 65504.0)
BF16 = (7, -126, (2 - 2**-7) * 2.0**127)


def ties_and_edges(nextafter, big):
    """Values of each format's edges in the source's precision (``nextafter``: the source's
    next value toward a target; ``big``: the source's largest finite)."""
    out = []
    for m, emin, top in (F16, BF16):
        ulp_top = 2.0 ** (int(np.log2(top)) - m)
        tiny = 2.0 ** (emin - m)  # the smallest subnormal
        for v in (
            top, top + ulp_top / 2, top + ulp_top, 2 * top,  # overflow ties: RN's and past
            2.0**emin, 2.0**emin - tiny / 2,  # the smallest normal, the tie below it
            tiny, tiny / 2, 3 * tiny / 2, 5 * tiny / 2, tiny / 4, tiny * 7,  # subnormals, ties
            1 + 2.0**-m / 2, 1 + 3 * 2.0**-m / 2, 1 + 2.0**-m,  # ties at 1 (even, odd)
            1.5 + 2.0**-m / 2, 2 - 2.0**-m / 2,  # a tie mid-binade, the tie below 2
        ):  # fmt: skip
            if v > big:
                continue
            for x in (v, nextafter(v, 0.0), nextafter(v, np.inf)):
                if x <= big:
                    out += [x, -x]
    return out


def near_ties(count, m, emin, emax, ulp_bits, view, bits):
    """``count`` values at, one source ulp around, and a random distance (below ``2**ulp_bits``
    source ulps) around ties of a format with ``m`` mantissa bits and normal exponents
    emin..emax (a quarter of them between its subnormals), both signs."""
    e = rng.integers(emin, emax + 1, count).astype(np.float64)
    k = rng.integers(2**m, 2 ** (m + 1), count).astype(np.float64)  # a value's mantissa
    sub = rng.random(count) < 0.25
    e = np.where(sub, emin, e)
    k = np.where(sub, rng.integers(0, 2**m, count), k)
    x = ((k + 0.5) * 2.0 ** (e - m)).astype(view)
    kind = rng.integers(0, 4, count)
    step = np.where(kind == 1, 1, np.where(kind == 2, -1, 0)).astype(bits)
    far = rng.integers(2, 2**ulp_bits, count).astype(bits) * (kind == 3).astype(bits)
    u = x.view(bits) + step + far
    return np.where(rng.random(count) < 0.5, -u.view(view), u.view(view))


def spread(count, view, top):
    """Random values over both formats' exponents (and a little past, below ``2**top``), both
    signs."""
    half = rng.random(count) < 0.5
    e = np.where(half, rng.integers(-28, 18, count), rng.integers(-140, top, count))
    x = (1 + rng.random(count)) * 2.0 ** e.astype(np.float64)
    return np.where(rng.random(count) < 0.5, -x, x).astype(view)


def fill(head, view, bits, ulp_bits, top):
    """The specials' bits ``head``, values near ties of both formats, spread values, then
    random bit patterns, N in all."""
    parts = [
        near_ties(160, 10, -14, 15, ulp_bits, view, bits).view(bits),
        near_ties(160, 7, -126, 127, ulp_bits, view, bits).view(bits),
        spread(320, view, top).view(bits),
    ]
    out = np.concatenate([head.astype(bits), *parts])
    assert len(out) < N, len(out)
    width = 8 * np.dtype(bits).itemsize
    rand = rng.integers(0, 2**width, N - len(out), dtype=bits)
    return np.concatenate([out, rand])


def save(name, array):
    (HERE / "inputs" / f"{name}.bin").write_bytes(array.tobytes())
    return {"file": f"inputs/{name}.bin"}


# doubles: NaNs (quiet, signalling, payloads in the bits float16 (bits 51-42) and bfloat16
# (51-45) keep and in those they drop), +-inf, +-0, the source's own denormals
NAN64 = [
    0x7FF8000000000000,
    0xFFF8000000000000,
    0x7FF0000000000001,
    0xFFF4000000000000,
    0x7FFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF,
    0x7FF80000DEADBEEF,
    0x7FF0040000000000,
    0xFFF0200000000000,
    0x7FFC000000000000,
    0x7FF0000100000000,
    0xFFF7FFFFFFFFFFFF,
]
EDGE64 = [
    0x7FF0000000000000,
    0xFFF0000000000000,
    0,
    0x8000000000000000,
    1,
    0x8000000000000001,
    0x000FFFFFFFFFFFFF,
    0x0010000000000000,
    0x7FEFFFFFFFFFFFFF,
    0xFFEFFFFFFFFFFFFF,
]
more64 = ties_and_edges(np.nextafter, np.finfo(np.float64).max) + [
    float(np.finfo(np.float32).max), 2.0**128, 1e300, 2.0**-149, 2.0**-150, 2.0**-160,
    1 + 2.0**-8 + 2.0**-40, 1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-8 - 2.0**-40,
]  # fmt: skip
head64 = np.concatenate([np.array(NAN64 + EDGE64, np.uint64), np.array(more64).view(np.uint64)])
f64 = fill(head64, np.float64, np.uint64, 30, 131)
assert len(f64) == N
NAN32 = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00000, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FC0DEAD,
         0x7F802000, 0xFFBFFFFF, 0x7FE00000, 0x7F810000, 0x7F800100]  # fmt: skip
EDGE32 = [0x7F800000, 0xFF800000, 0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x00800000,
          0x7F7FFFFF, 0xFF7FFFFF]  # fmt: skip
nf = lambda x, to: float(np.nextafter(np.float32(x), np.float32(to)))  # noqa: E731
more32 = [
    x for x in ties_and_edges(nf, float(np.finfo(np.float32).max)) if float(np.float32(x)) == x
]
head32 = np.concatenate(
    [np.array(NAN32 + EDGE32, np.uint32), np.array(more32, np.float32).view(np.uint32)]
)
f32 = fill(head32, np.float32, np.uint32, 12, 128)
assert len(f32) == N


def launch(lid, data):
    return {
        "id": lid, "cubin": CUBIN, "kernel": lid, "block": [256, 1, 1], "grid": [N // 256, 1, 1],
        "dynamic_smem": 0, "args": [{"zeros": 8 * 2 * N}, save(lid.removeprefix("cvt_"), data),
        {"int": N}], "dumps": [0],
    }  # fmt: skip


launches = [launch("cvt_f64", f64), launch("cvt_f32", f32)]
(HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")
print(len(launches), "launches;", len(head64), "double and", len(head32), "float specials")
