"""The lab's two Nsight Compute runs as measured.json: each launch's op_misc, in launch order."""

import csv
import json
import sys
from pathlib import Path

METRIC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"


def misc_of(path: Path) -> list[int]:
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    rows = list(csv.DictReader(lines))
    return [int(r["Metric Value"].replace(",", "")) for r in rows if r["Metric Name"] == METRIC]


out = Path(sys.argv[1])
runs = [misc_of(out / f"ncu{r}.csv") for r in (1, 2)]
print(json.dumps({"gpu": (out / "gpu.txt").read_text().strip(), "runs": runs}, indent=1))
