"""Writes inputs/in.bin: 128 float32, edge cases first (signed zeros, values that round to 0
in half, half's overflow, infinities, NaNs, ties, denormals), then seeded normal values."""

from pathlib import Path

import numpy as np

EDGE = [-0.0, 0.0, -1e-30, 1e-30, 1.0, -2.5, 3.14159265, 65520.0, 1e38, -1e38]
EDGE += [np.inf, -np.inf, np.nan, -np.nan, 1.00390625, 1.001953125, -7e-45, 6e-8]

if __name__ == "__main__":
    rest = (np.random.default_rng(7).standard_normal(128 - len(EDGE)) * 100).tolist()
    out = Path(__file__).parent / "inputs" / "in.bin"
    out.write_bytes(np.array(EDGE + rest, dtype=np.float32).tobytes())
