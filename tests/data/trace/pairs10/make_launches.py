"""Write pairs10's inputs and launches.json (issue 30): the ``LDS.128`` reads whose source
counters the rule of ``hardware/pairs.py`` misses by one (pairs6's six, pairs9's six), taken
apart to find what the counter reacts to. For each such read, and for three reads of the
same shapes that the rule gets right, the read itself and:

* ``drop<l>``: the read with lane ``l`` off, one launch per active lane;
* ``h0`` / ``h1``: half-warp 0 or 1 alone;
* ``swaph``: the two half-warps swapped; ``swapq``: the quarter-warps of each half swapped;
* ``plus8``: every element 8 on (the same banks, other addresses); ``plus1``: 1 on (the
  banks moved by four);

and the reads of ``extra_candidates.json`` (``x..``), each with what the candidate rules
predict.

pairs5's predicated kernel ``pr_ld128`` (``../pairs5/kernels/pr.cu``, its cubin copied here).
Run from this folder: ``python3 make_launches.py``.
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lab"))
from pair_reads import write  # noqa: E402 (the labs' shared writer)

OFF = -1
SUBJECTS = {  # lab/read: what the source counter missed by one, and controls it did not
    "pairs6": ("r128_005", "r128_017", "r128_065", "r128_067", "r128_069", "r128_076"),
    "pairs9": ("n128_001", "n128_004", "n128_039", "n128_053", "n128_010", "n128_099"),
}
CONTROLS = {"pairs9": ("n128_083", "n128_025"), "pairs6": ("r128_071",)}


def _read(lab: str, name: str) -> list[int]:
    return list(struct.unpack("<32i", (HERE.parent / lab / "inputs" / f"{name}.bin").read_bytes()))


def variants(idx: list[int]) -> dict[str, list[int]]:
    out = {"base": idx}
    for lane, k in enumerate(idx):
        if k != OFF:
            out[f"drop{lane:02d}"] = [OFF if n == lane else v for n, v in enumerate(idx)]
    out["h0"] = idx[:16] + [OFF] * 16
    out["h1"] = [OFF] * 16 + idx[16:]
    out["swaph"] = idx[16:] + idx[:16]
    out["swapq"] = idx[8:16] + idx[:8] + idx[24:] + idx[16:24]
    out["plus8"] = [OFF if k == OFF else (k + 8) % 128 for k in idx]
    out["plus1"] = [OFF if k == OFF else (k + 1) % 128 for k in idx]
    return out


def reads() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for group in (SUBJECTS, CONTROLS):
        for lab, names in group.items():
            for name in names:
                for tag, idx in variants(_read(lab, name)).items():
                    out[f"{name}_{tag}"] = idx
    # the reads that tell apart the rules that fit pairs3 to pairs9 (extra_candidates.json)
    for read in json.loads((HERE / "extra_candidates.json").read_text()):
        out[read["id"]] = list(read["idx"])
    return out


def main() -> None:
    write(HERE, {name: ("pr_ld128", idx) for name, idx in reads().items()})


if __name__ == "__main__":
    main()
