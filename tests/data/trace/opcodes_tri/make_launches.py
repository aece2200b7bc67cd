"""Write inputs/ and launches.json (the Hopper lab's format) for the Triton opcode lab, from
entries.json (build.py). Run from anywhere: python3 make_launches.py

Float inputs hold the edge cases the conversions, minima and flush-to-zero forms must get
right: NaN, infinities, -0, float32 and half denormals, values past the 8-bit floats'
largest finite values (448, 57344) and past the half's, ties between 8-bit neighbours. The
dots read small integers (fp32) or fp8 bytes of small values, so that their sums are exact
in any order; the layer norm and GELU read plain values."""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SIZE = {"fp8e4nv": 1, "fp8e5": 1, "fp16": 2, "bf16": 2, "i32": 4, "fp32": 4}
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 1e-40, -3e-39, 1e-45, 6e-8,
            -6e-8, 1e-5, 448.0, 449.0, 464.0, 480.0, -500.0, 57344.0, 61440.0, 65504.0,
            65520.0, 70000.0, 3.4e38, -3.4e38, 2.0**-7, 2.0**-9, 2.0**-10, 2.0**-16,
            2.0**-17, 0.0625 * 1.0625, 1.0 + 2.0**-4, 1.0 + 3 * 2.0**-4, 1.0 + 2.0**-3, 2.5,
            3.5, -2.5, 1.5, 100.25, 1e-3, -1e-7, 2.0**-126, 2.0**-127, -(2.0**-149), 0.1,
            0.3, 1.0009765625, 1.00048828125, 1.1e-38, -5.5e-39, 0.75]  # fmt: skip


def edge_floats(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = np.concatenate(
        [
            rng.normal(0, 1, n // 4),
            rng.normal(0, 100, n // 4),
            rng.uniform(-3, 3, n // 4),
            np.exp(rng.uniform(-95, 95, n - 3 * (n // 4))) * rng.choice([-1, 1], n - 3 * (n // 4)),
        ]
    )
    specials = np.array(SPECIALS if seed % 2 == 0 else SPECIALS[::-1])
    v[: len(specials)] = specials
    v[len(specials) : len(specials) + 60 : 3] = np.nan if seed % 2 == 0 else 2.0
    return v


def bf16_bits(v: np.ndarray) -> np.ndarray:
    f = np.asarray(v, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FC0), r)


def floats_as(dtype: str, v: np.ndarray) -> bytes:
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype == "bf16":
            return bf16_bits(v.astype(np.float32)).tobytes()
        return v.astype({"fp16": np.float16, "fp32": np.float32}[dtype]).tobytes()


def fp8_small(n: int, seed: int) -> bytes:
    """e4m3 bytes of 0, +-0.5, +-1, +-1.5, +-2 (their sums are exact in float32)."""
    codes = np.array([0x00, 0x30, 0xB0, 0x38, 0xB8, 0x3C, 0xBC, 0x40, 0xC0], dtype=np.uint8)
    return codes[np.random.default_rng(seed).integers(0, len(codes), n)].tobytes()


def input_bytes(lid: str, dtype: str, n: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    if "dot" in lid:
        if dtype == "fp32":
            return rng.integers(-4, 5, n).astype(np.float32).tobytes()
        return fp8_small(n, seed)
    if "layernorm" in lid or "gelu" in lid:
        return rng.normal(0, 2, n).astype(np.float32).tobytes()
    if "colm" in lid:  # each column's four values drawn from NaN, +-0, +-inf, +-1, denormals
        pool = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 6e-8, -6e-8, 1e-40, 2.5])
        return floats_as(dtype, pool[rng.integers(0, len(pool), n)])
    return floats_as(dtype, edge_floats(n, seed))


# per kernel: (number of elements of every buffer, the pointer parameters read as inputs)
BUFFERS = {
    "cast_k": (512, ("x_ptr",)),
    "math_k": (512, ("x_ptr", "z_ptr")),
    "reduce_k": (1024, ("x_ptr",)),
    "ind_pointwise_k": (3072, ("in_ptr0", "in_ptr1")),
    "ln_fwd_k": (3072, ("X", "W", "B")),
    "dotmask_k": (2048, ("a_ptr", "b_ptr")),
    "dot_k": (8192, ("a_ptr", "b_ptr")),
}


def main() -> None:
    entries = json.loads((HERE / "entries.json").read_text())
    (HERE / "inputs").mkdir(exist_ok=True)
    launches = []
    for lid, e in entries.items():
        n, reads = BUFFERS[e["kernel"]]
        args, dumps = [], []
        for k, (name, kind) in enumerate(e["signature"].items()):
            if kind.startswith("*") and name in reads:
                path = f"inputs/{lid}.{name}.bin"
                (HERE / path).write_bytes(input_bytes(lid, kind[1:], n, seed=27 + 2 * k))
                args.append({"file": path})
            elif kind.startswith("*"):
                args.append({"zeros": n * SIZE[kind[1:]]})
                dumps.append(len(args) - 1)
            elif kind == "fp32":
                args.append({"int": int(np.float32(e["launch"][name]).view(np.int32))})
            else:
                args.append({"int": int(e["launch"][name])})
        if e["triton"] != "3.2.0":  # Triton's global and profile scratch pointers (none used)
            args += [{"u64": 0}, {"u64": 0}]
        launches.append(
            {
                "id": lid,
                "cubin": f"cubins/{lid}.cubin",
                "kernel": e["kernel"],
                "block": [32 * e["num_warps"], 1, 1],
                "grid": e["launch"]["grid"],
                "dynamic_smem": e["shared"],
                "args": args,
                "dumps": dumps,
            }
        )
    (HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")
    print(len(launches), "launches")


if __name__ == "__main__":
    main()
