"""The pair labs' launches (pairs6, pairs9, pairs10; issue 30): one warp and one read a
launch, through pairs5's predicated kernels (``pr_ld64``: ``double bins[256]``,
``pr_ld128``: ``float4 bins[128]``; ``pairs5/kernels/pr.cu``), lane l reading element
``idx[l]`` (-1: the lane stays off). :func:`write` keeps each read's ``inputs/NAME.bin`` (32
little-endian int32) and the folder's ``launches.json`` as the generic lab (``run.sh``)
reads them."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: the elements each kernel's array holds
ELEMENTS = {"pr_ld64": 256, "pr_ld128": 128}


def launch(rid: str, name: str, kernel: str) -> dict[str, Any]:
    """One launch, ``rid``, of ``kernel`` on the read ``inputs/NAME.bin``."""
    return {
        "id": rid,
        "source": "../pairs5/kernels/pr.cu",
        "kernel": kernel,
        "block": [32, 1, 1],
        "grid": [1, 1, 1],
        "dynamic_smem": 0,
        "args": [{"zeros": 512}, {"file": f"inputs/{name}.bin"}],
        "mangled": kernel,
    }


def write(
    here: Path,
    reads: Mapping[str, tuple[str, Sequence[int]]],
    ids: Callable[[int, str], Sequence[str]] = lambda n, name: (name,),
) -> None:
    """Each read (name: kernel, indices) as ``here/inputs/NAME.bin`` and its launches in
    ``here/launches.json``; ``ids``: the launch ids of the n-th read (a repeat: two)."""
    launches = []
    for n, (name, (kernel, idx)) in enumerate(reads.items()):
        assert len(idx) == 32 and all(-1 <= k < ELEMENTS[kernel] for k in idx), name
        (here / "inputs" / f"{name}.bin").write_bytes(struct.pack("<32i", *idx))
        launches += [launch(rid, name, kernel) for rid in ids(n, name)]
    (here / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")
