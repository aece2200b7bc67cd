"""Writes launches.json and inputs/*.bin for the ideal2 lab: partial-warp stores and 16-byte
loads whose active lanes are few and spread over several phases (lane -> element index)."""

import json
from pathlib import Path

HERE = Path(__file__).parent
LANESETS = {
    "l0_16": {0: 0, 16: 1},  # one lane in each half-warp, distinct words
    "l0_8_16_24": {0: 0, 8: 1, 16: 2, 24: 3},  # one lane in each quarter-warp
    "q0_q2": {**{n: n for n in range(8)}, **{n: n for n in range(16, 24)}},  # two quarters
    "h_low8_high8": {**{n: n for n in range(8)}, **{n: 8 + n for n in range(24, 32)}},
    "all": {n: n for n in range(32)},
    "odd": {n: n for n in range(1, 32, 2)},
    "l0_16_conf": {0: 0, 16: 16},  # 8 B: one bank set apart by 16 elements (a conflict if merged)
}
KERNELS = {
    "st64": ("ip_st64", 256 * 8),
    "st128": ("ip_st128", 128 * 16),
    "ld128": ("ip_ld128", 32 * 16),
    "st32": ("ip_st32", 512 * 4),
}


def main():
    (HERE / "inputs").mkdir(exist_ok=True)
    launches = []
    for lname, lanes in LANESETS.items():
        idx = [lanes.get(lane, -1) for lane in range(32)]
        (HERE / "inputs" / f"{lname}.bin").write_bytes(
            b"".join(i.to_bytes(4, "little", signed=True) for i in idx)
        )
        for kname, (kernel, out_bytes) in KERNELS.items():
            for rep in ("", "_r2"):
                launches.append(
                    {
                        "id": f"{kname}_{lname}{rep}",
                        "source": "kernels/ip.cu",
                        "kernel": kernel,
                        "block": [32, 1, 1],
                        "grid": [1, 1, 1],
                        "dynamic_smem": 0,
                        "args": [{"zeros": out_bytes}, {"file": f"inputs/{lname}.bin"}],
                        "mangled": kernel,
                    }
                )
    (HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")


main()
