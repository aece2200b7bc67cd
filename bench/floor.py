"""The NumPy floor: bench/specs/throughput.yaml computed by hand, for the throughput ratio.

This is the most direct NumPy program a person would write for that one spec,
and nothing more: the addresses come straight from the index formulas (no
expression parser, no YAML, no bounds checks, no per-request bookkeeping), the
wavefronts follow the rules of shmem_cli/hardware/arch.py. It does visit every one of the
25 million lane-accesses, like shmem does; it takes no analytical shortcut
(such as noticing that the pattern repeats every 64 iterations).

Run as a whole process (``python bench/floor.py``); it prints the totals as JSON
so that bench/run.py can check they equal shmem's.
"""

from __future__ import annotations

import json
import sys

import numpy as np

ITERATIONS = 8192
X, Y = 32, 32  # block [32, 32]: warp w is threadIdx.y == w, lane is threadIdx.x
CHUNK = 32  # loop iterations per chunk (32 x 1024 threads: fits in L2, like shmem's chunks)

# byte offsets of the arrays, as shmem lays them out (each starts at a multiple of 128)
TILE = 0  # float32 [32][32+1]: 4224 bytes
VEC = 4224  # float4 [64][32]: 32768 bytes
OUT = VEC + 32768  # float32 [32][64]


def wavefronts_4b(word: np.ndarray) -> int:
    """Sum over requests of the worst bank's distinct words (one phase per request)."""
    rows = word.shape[0]
    srt = np.sort(word, axis=1)
    new = np.ones(srt.shape, dtype=bool)
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    row = np.nonzero(new)[0]
    counts = np.bincount(row * 32 + srt[new] % 32, minlength=rows * 32)
    return int(counts.reshape(rows, 32).max(axis=1).sum())


def wavefronts_16b_load(addr: np.ndarray) -> int:
    """16-byte loads: quarter-warp phases, or half-warps when lanes pair up."""
    lanes = np.arange(32)
    merged = np.all(addr == addr[:, lanes ^ 1], axis=1) | np.all(addr == addr[:, lanes ^ 2], axis=1)
    total = 0
    for per_phase, pick in ((8, ~merged), (16, merged)):
        a = addr[pick].reshape(-1, per_phase)  # one row per phase
        if not len(a):
            continue
        srt = np.sort(a, axis=1)  # a lane's 4 words follow its start: dedup on starts
        new = np.ones(srt.shape, dtype=bool)
        new[:, 1:] = srt[:, 1:] != srt[:, :-1]
        row = np.nonzero(new)[0]
        bank0 = (srt[new] // 4) % 32
        keys = (row * 32)[:, None] + (bank0[:, None] + np.arange(4)) % 32
        counts = np.bincount(keys.ravel(), minlength=len(a) * 32)
        total += int(counts.reshape(len(a), 32).max(axis=1).sum())
    return total


def main() -> None:
    x = np.arange(X)[None, None, :]  # lanes
    y = np.arange(Y)[None, :, None]  # warps
    totals = [0, 0, 0]
    for start in range(0, ITERATIONS, CHUNK):
        k = np.arange(start, start + CHUNK)[:, None, None]
        shape = (CHUNK * Y, X)
        # tile[x][(y + k) % 32], 4-byte load
        word = (TILE // 4 + x * 33 + (y + k) % 32).reshape(shape)
        totals[0] += wavefronts_4b(word)
        # vec[(y + k) % 64][(3x + k) % 32], 16-byte load
        addr = VEC + (((y + k) % 64) * 32 + (3 * x + k) % 32) * 16
        totals[1] += wavefronts_16b_load(addr.reshape(shape))
        # out[y][(2x + k) % 64], 4-byte store (stores combine lanes on one word like loads)
        word = np.broadcast_to(OUT // 4 + y * 64 + (2 * x + k) % 64, (CHUNK, Y, X)).reshape(shape)
        totals[2] += wavefronts_4b(word)
    json.dump({"wavefronts": totals, "lane_accesses": 3 * ITERATIONS * X * Y}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
