"""lab/run.sh's Nsight Compute exports -> ../measured/: measured.json (per launch, causal 1 and
0, per run: the per-op counters and each shared-memory instruction's source counters: its
offset in the kernel, SASS, executions, wavefronts, ideal) and each launch's parameter block
(params_c1.bin, params_c0.bin: the bytes the host passed, its pointers the run's).
Usage: python3 parse.py OUTDIR"""

import csv
import json
import re
import shutil
import sys
from pathlib import Path

SHARED = re.compile(r"^(@!?U?P\w+\s+)?(LDS|STS|LDSM|STSM|LDGSTS)\b")


def number(text: str) -> float:
    return float(text.replace(",", "") or 0)


def run(src: Path, causal: int, r: int) -> dict[str, object]:
    rows = list(csv.reader((src / f"raw_c{causal}_{r}.csv").read_text().splitlines()))
    head, values = rows[0], rows[2]
    counters = {
        k.removesuffix(".sum"): number(v)
        for k, v in zip(head, values, strict=False)
        if k.endswith(".sum") and v
    }
    cols, table = None, []
    for row in csv.reader((src / f"src_c{causal}_{r}.csv").read_text().splitlines()):
        if row and row[0] == "Address":
            cols = row
        elif cols and len(row) == len(cols):
            table.append(dict(zip(cols, row, strict=True)))
    base = min(int(d["Address"], 16) for d in table)
    shared = [
        {
            "pc": int(d["Address"], 16) - base,
            "sass": " ".join(d["Source"].split()),
            "executed": int(number(d["Instructions Executed"])),
            "wavefronts": int(number(d["L1 Wavefronts Shared"])),
            "ideal": int(number(d["L1 Wavefronts Shared Ideal"])),
        }
        for d in table
        if SHARED.match(" ".join(d["Source"].split())) and number(d["Instructions Executed"])
    ]
    return {"counters": counters, "instructions": shared}


src = Path(sys.argv[1])
out = Path(__file__).resolve().parent.parent / "measured"
out.mkdir(exist_ok=True)
launches = {}
for causal in (1, 0):
    launches[f"causal{causal}"] = [run(src, causal, r) for r in (1, 2)]
    shutil.copyfile(src / f"params_c{causal}_1.bin", out / f"params_c{causal}.bin")
gpu = " / ".join(x.strip() for x in (src / "gpu.txt").read_text().splitlines() if x.strip())
doc = {"gpu": gpu, "launch": "grid 4,1,2, block 128, 256 keys", "launches": launches}
(out / "measured.json").write_text(json.dumps(doc, indent=0) + "\n")
print(out, {k: len(v[0]["instructions"]) for k, v in launches.items()}, "instructions")
