"""A small op_misc lab's two Nsight Compute runs (misc_twice.sh: ncu1.csv, ncu2.csv) as its
measured.json: each launch's op_misc wavefronts (``runs``) and warp instructions executed
(``inst``), in launch order, a list a run.

Usage: python3 tests/data/lab_common/misc_twice_parse.py DIR > tests/data/trace/LAB/measured.json
"""

import csv
import json
import sys
from pathlib import Path

MISC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"
INST = "smsp__inst_executed.sum"


def metric_of(path: Path, metric: str) -> list[int]:
    """``metric`` of each launch of ncu's ``--csv`` output ``path``, in launch order (its
    lines that are not the table's, ncu's own, are left out)."""
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    rows = list(csv.DictReader(lines))
    return [int(r["Metric Value"].replace(",", "")) for r in rows if r["Metric Name"] == metric]


if __name__ == "__main__":
    out = Path(sys.argv[1])
    csvs = [out / f"ncu{r}.csv" for r in (1, 2)]
    doc = {
        "gpu": (out / "gpu.txt").read_text().strip(),
        "runs": [metric_of(p, MISC) for p in csvs],
        "inst": [metric_of(p, INST) for p in csvs],
    }
    print(json.dumps(doc, indent=1))
