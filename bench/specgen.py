"""Specs made up for bench/run.py: the scaling series and the 500-file lint corpus."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from measure import ROOT

# one access of each width, all conflict-free or mildly conflicted, all in bounds for
# any block of up to 1024 threads (x < 32, y < 32) and any loop count
PATTERNS: dict[str, dict[str, Any]] = {
    "load 4 B": {
        "array": "tile",
        "op": "load",
        "index": ["threadIdx.x", "(threadIdx.y + k) % 32"],
    },
    "store 4 B": {
        "array": "out",
        "op": "store",
        "index": ["threadIdx.y", "(2 * threadIdx.x + k) % 64"],
    },
    "load 8 B": {
        "array": "pair",
        "op": "load",
        "index": ["(threadIdx.y + k) % 32", "(threadIdx.x + k) % 32"],
    },
    "load 16 B": {
        "array": "vec",
        "op": "load",
        "index": ["(threadIdx.y + k) % 64", "(3 * threadIdx.x + k) % 32"],
    },
}
ARRAYS: dict[str, Any] = {
    "tile": {"dtype": "float32", "shape": [32, 32], "pad": 1},
    "out": {"dtype": "float32", "shape": [32, 64]},
    "pair": {"dtype": "float2", "shape": [32, 32]},
    "vec": {"dtype": "float4", "shape": [64, 32]},
}


def scaling_spec(threads: int, iterations: int, patterns: list[str]) -> dict[str, Any]:
    """A block of ``threads`` (32 wide), ``iterations`` loop iterations, one access per pattern."""
    block = [threads] if threads <= 32 else [32, threads // 32]
    accesses = [
        {"name": f"{name} #{i}", **PATTERNS[name], "loop": {"k": f"0..{iterations - 1}"}}
        for i, name in enumerate(patterns)
    ]
    return {"name": "scaling", "block": block, "arrays": ARRAYS, "accesses": accesses}


def lint_corpus(directory: Path, count: int) -> list[Path]:
    """``count`` spec files in ``directory``: the bundled examples, over and over."""
    examples = sorted((ROOT / "access_specs").glob("*.yaml"))
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(count):
        target = directory / f"spec_{i:04d}_{examples[i % len(examples)].name}"
        shutil.copyfile(examples[i % len(examples)], target)
        out.append(target)
    return out
