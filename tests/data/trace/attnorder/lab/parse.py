"""The lab's two Nsight Compute runs as measured.json: each launch's op_misc (and its warp
instructions executed), in launch order."""

import csv
import json
import sys
from pathlib import Path

MISC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"
INST = "smsp__inst_executed.sum"


def metric_of(path: Path, metric: str) -> list[int]:
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    rows = list(csv.DictReader(lines))
    return [int(r["Metric Value"].replace(",", "")) for r in rows if r["Metric Name"] == metric]


out = Path(sys.argv[1])
csvs = [out / f"ncu{r}.csv" for r in (1, 2)]
print(
    json.dumps(
        {
            "gpu": (out / "gpu.txt").read_text().strip(),
            "runs": [metric_of(p, MISC) for p in csvs],
            "inst": [metric_of(p, INST) for p in csvs],
        },
        indent=1,
    )
)
