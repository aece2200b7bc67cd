"""lab/run.sh's Nsight Compute pages -> ../measured.json: per entry and n, each run's per-op
shared counters. Usage: python3 parse.py OUTDIR"""

import csv
import json
import sys
from pathlib import Path

src = Path(sys.argv[1])
launches: dict[str, list[dict[str, float]]] = {}
for f in sorted(src.glob("raw_*_n*_[12].csv")):
    name, n, _run = f.stem.removeprefix("raw_").rsplit("_", 2)
    rows = [r for r in csv.reader(f.read_text().splitlines()) if len(r) > 3]
    head = next(r for r in rows if "ID" in r)
    values = rows[rows.index(head) + 2]
    counters = {
        k.removesuffix(".sum"): float(v.replace(",", ""))
        for k, v in zip(head, values, strict=False)
        if k.endswith(".sum") and v
    }
    launches.setdefault(f"{name}_{n}", []).append(counters)
gpu = " / ".join(x.strip() for x in (src / "gpu.txt").read_text().splitlines() if x.strip())
out = Path(__file__).resolve().parent.parent / "measured.json"
out.write_text(json.dumps({"gpu": gpu, "launches": launches}, indent=0) + "\n")
print(out, len(launches), "launches")
