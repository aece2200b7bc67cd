"""The lab's inputs (../inputs/NAME_in.bin), made from one linear congruential sequence, the
launches' data in lab/main.cu's order: random keys, keys with many ties, bytes over 256 and over
8 bins, floats, doubles. ``python3 tests/data/trace/cub/lab/inputs.py DIR`` writes them to DIR.
"""

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

G = 4  # blocks a launch


def sequence(seed: int = 12345) -> Iterator[int]:
    s = seed
    while True:
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        yield s


def inputs() -> dict[str, np.ndarray]:
    r = sequence()
    nxt = r.__next__
    made = {
        "radix": np.array([nxt() >> 8 for _ in range(G * 512)], np.int32),
        "radix_ties": np.array([nxt() >> 28 for _ in range(G * 512)], np.int32),
        "scan": np.array([nxt() % 100 for _ in range(G * 256)], np.int32),
        "load": np.array([(nxt() % 1000) * 0.5 for _ in range(G * 1024)], np.float32),
        "hist": np.array([(nxt() >> 24) & 0xFF for _ in range(G * 512)], np.uint8),
        "hist_skew": np.array([(nxt() >> 29) & 0xFF for _ in range(G * 512)], np.uint8),
        "reduce": np.array([(nxt() % 1000) * 0.25 for _ in range(G * 256)], np.float32),
    }
    made["radix64"] = np.array([(nxt() << 32) | nxt() for _ in range(G * 512)], np.uint64)
    made["merge"] = np.array([(nxt() % 4096) * 0.125 for _ in range(G * 512)], np.float32)
    made["exchange"] = np.array([float(nxt() % 1000) for _ in range(G * 1024)], np.float64)
    made["run_length"] = np.array([nxt() >> 30 for _ in range(G * 512)], np.int32)
    return made


def main() -> None:
    out = Path(sys.argv[1])
    for name, data in inputs().items():
        data.tofile(out / f"{name}_in.bin")


if __name__ == "__main__":
    main()
