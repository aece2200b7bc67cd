"""Write the replay inputs kept here for docs/recipes.md's grouped example: params.bin (the
kernel's parameter block: problems, groups, out) and problems.bin (the problem array as a host
program fwrites it), at addresses in the range cudaMalloc hands out on an H200. The same
values as tests/test_trace_memory.py. Usage: python3 make_inputs.py (in this folder)."""

from __future__ import annotations

import struct
from pathlib import Path

PROBLEMS, A, B, OUT = 0x7F12_3400_0000, 0x7F12_3500_0000, 0x7F12_3600_0000, 0x7F12_3700_0000
GROUPS = ((64, 1, 1280), (32, 2, 256), (64, 8, 768))  # (M, N, K) per group

if __name__ == "__main__":
    here = Path(__file__).parent
    here.joinpath("params.bin").write_bytes(struct.pack("<Qi4xQ", PROBLEMS, len(GROUPS), OUT))
    here.joinpath("problems.bin").write_bytes(
        b"".join(
            struct.pack("<iiiiQQ", m, n, k, 0, A + g * 0x10000, B + g * 0x10000)
            for g, (m, n, k) in enumerate(GROUPS)
        )
    )
