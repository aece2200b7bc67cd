"""lab/run.sh's Nsight Compute exports -> ../measured/ws_tile.json: per run, the per-op counters
and each shared-memory instruction's source counters (its offset in the kernel, executions,
wavefronts, ideal). Usage: python3 parse.py OUTDIR"""

import csv
import json
import re
import sys
from pathlib import Path

SHARED = re.compile(r"^(@!?U?P\d\s+)?(LDS|STS|LDSM|STSM)\b")
src = Path(sys.argv[1])
runs = []
for r in (1, 2):
    rows = list(csv.reader((src / f"ncu_ws_tile_{r}.csv").read_text().splitlines()))
    head, values = rows[0], rows[2]
    counters = {
        k.removesuffix(".sum"): float(v.replace(",", ""))
        for k, v in zip(head, values, strict=False)
        if k.endswith(".sum") and v
    }
    cols, table = None, []
    for row in csv.reader((src / f"source_ws_tile_{r}.csv").read_text().splitlines()):
        if row and row[0] == "Address":
            cols = row
        elif cols and len(row) == len(cols):
            table.append(dict(zip(cols, row, strict=True)))
    base = min(int(d["Address"], 16) for d in table)
    shared = [
        {
            "pc": int(d["Address"], 16) - base,
            "sass": " ".join(d["Source"].split()),
            "executed": int(d["Instructions Executed"] or 0),
            "wavefronts": int(d["L1 Wavefronts Shared"] or 0),
            "ideal": int(d["L1 Wavefronts Shared Ideal"] or 0),
        }
        for d in table
        if SHARED.match(" ".join(d["Source"].split()))
        and d["Instructions Executed"] not in ("", "0")
    ]
    runs.append({"counters": counters, "instructions": shared})
gpu = " / ".join(x.strip() for x in (src / "gpu.txt").read_text().splitlines() if x.strip())
out = Path(__file__).resolve().parent.parent / "measured" / "ws_tile.json"
out.write_text(json.dumps({"gpu": gpu, "launch": "grid 1, K=256", "runs": runs}, indent=0))
print(out, len(runs[0]["instructions"]), "instructions")
