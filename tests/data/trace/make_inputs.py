"""Write the input files of the measured trace launches (deterministic, small).

Run from anywhere: python3 tests/data/trace/make_inputs.py. The same bytes were given to the
kernels on the H200 (launches.json names them) and are given to `shmem trace` in the tests.
"""

from pathlib import Path

import numpy as np

HERE = Path(__file__).parent / "inputs"


def main() -> None:
    HERE.mkdir(exist_ok=True)
    p = np.arange(4096, dtype=np.uint64)
    ((p * 2654435761) >> np.uint64(7)).astype(np.uint32).tofile(HERE / "u32_hash.bin")
    (((p * 37) % 101) / 101.0).astype(np.float32).tofile(HERE / "f32_unit.bin")
    q = np.arange(8192, dtype=np.int64)
    ((q % 17) / 8.0).astype(np.float16).tofile(HERE / "f16_ramp.bin")


if __name__ == "__main__":
    main()
