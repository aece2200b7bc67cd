"""Nsight Compute's two runs of the CUB lab (ncu1.csv, ncu2.csv in DIR) as measured.json:
``runs``, per run a list of the launches in order, each {metric: value} of run.sh's counters.

    python3 tests/data/trace/cub/lab/parse.py DIR > tests/data/trace/cub/measured.json
"""

import csv
import io
import json
import sys
from pathlib import Path


def one_run(path: Path) -> list[dict[str, int]]:
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    launches: dict[int, dict[str, int]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        value = int(float(row["Metric Value"].replace(",", "")))
        launches.setdefault(int(row["ID"]), {})[row["Metric Name"]] = value
    return [launches[i] for i in sorted(launches)]


def main() -> None:
    out = Path(sys.argv[1])
    runs = [one_run(out / f"ncu{r}.csv") for r in (1, 2)]
    gpu = (out / "gpu.txt").read_text().strip() if (out / "gpu.txt").exists() else ""
    build = (out / "build.txt").read_text().strip() if (out / "build.txt").exists() else ""
    print(json.dumps({"gpu": gpu, "build": build, "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
