"""Writes inputs/in.bin: 128 float32 (64 pairs), the edges of every format first, then seeded
values: half of them of the scales of half and fp8 (2^-30 to 2^20), half of float's. Each
edge is given as float32 bits and makes a pair with its negative: (x, -x) for the even ones,
(-x, x) for the odd, so that each place of a pair sees both signs."""

from pathlib import Path

import numpy as np

EDGE = [
    0x00000000,  # zero
    0x7F800000,  # infinity
    0x7FC00000,  # the canonical NaN, then NaNs with payloads (a signalling one)
    0x7F800001,
    0x7FBFFFFF,
    0x477FE000,  # half: 65504, the largest finite
    0x477FEFFF,  # 65519.99: rounds to 65504
    0x477FF000,  # 65520: the tie past it (to nearest: infinity; .satfinite: 65504)
    0x47800000,  # 65536
    0x7F7F0000,  # bf16: the largest finite, 0x7f7f
    0x7F7F7FFF,  # below the tie past it
    0x7F7F8000,  # the tie past it
    0x7F7FFFFF,  # float's largest
    0x7F7FE000,  # tf32: the largest finite
    0x7F7FEFFF,  # below the tie past it; the tie (to nearest: infinity)
    0x7F7FF000,
    0x43E00000,  # e4m3: 448, the largest; 464, the tie past it; 480
    0x43E80000,
    0x43F00000,
    0x47600000,  # e5m2: 57344, the largest; 61440, the tie past it
    0x47700000,
    0x33800000,  # half: 2^-24, the smallest denormal; 2^-25, the tie to 0; 3 * 2^-25
    0x33000000,
    0x33C00000,
    0x387FC000,  # half: the largest denormal; the tie to the smallest normal (2^-14)
    0x387FE000,
    0x00010000,  # bf16: the smallest denormal; ties to even from below and above 2^-133
    0x00008000,
    0x00018000,
    0x00000001,  # float: the smallest denormal (0 in bf16, tf32: 2^-136 is its place)
    0x00001000,  # tf32: a tie at the smallest denormal (to 0); 0x3000 (to 0x4000)
    0x00003000,
    0x007FFFFF,  # float: the largest denormal
    0x3F808000,  # bf16: 1 + 2^-8 (tie to 1); 1 + 3 * 2^-8 (tie up); just past the tie
    0x3F818000,
    0x3F808001,
    0x3F801000,  # half and tf32: 1 + 2^-11 (tie to 1); 1 + 3 * 2^-11 (tie up)
    0x3F803000,
    0x3F800FFF,  # just below the tie
    0x3B000000,  # e4m3: 2^-9, its smallest denormal; e5m2: 2^-16; 2^-17 the tie to 0
    0x37800000,
    0x37000000,
    0x3F880000,  # e4m3: 1.0625 (tie to 1); e5m2: 1.125 (tie to 1)
    0x3F900000,
]

if __name__ == "__main__":
    edge = np.array(EDGE, dtype=np.uint32)
    sign = (np.arange(edge.size, dtype=np.uint32) & 1) << np.uint32(31)
    pairs = np.stack([edge ^ sign, edge ^ sign ^ np.uint32(1 << 31)], axis=1)
    n = 128 - pairs.size
    rng = np.random.default_rng(30)
    scale = np.concatenate([rng.integers(-30, 20, n // 2), rng.integers(-149, 128, n - n // 2)])
    rest = np.ldexp(rng.uniform(-2.0, 2.0, n), scale).astype(np.float32)
    out = Path(__file__).parent / "inputs" / "in.bin"
    out.write_bytes(pairs.reshape(-1).tobytes() + rest.tobytes())
