"""Turn run.sh's results (tri36more.tar.gz, unpacked) into this folder's data.

Usage: parse.py RESULTS_DIR [RESULTS_DIR2 ...] tests/data/triton/tutorial36b (the second
round's results, run2.sh's, after the first); TRI_LAUNCHES=MODULE reads a lab's launches from
MODULE.py, not launches.py. Keeps each cache entry's cubin,
metadata and TTGIR (cache/), and writes launches.json (per launch: its entry, the grid,
the scalars a user passes: those Triton kept as parameters) and measured.json (per run and
launch: the per-op counters and, per shared-memory SASS instruction, the source counters).
The raw counter pages are kept gzipped in ncu/. A launch that failed on the GPU is in neither.
"""

import csv
import gzip
import importlib
import json
import os
import shutil
import sys
from pathlib import Path

*rounds, data = (Path(a) for a in sys.argv[1:])
sys.path.insert(0, str(data / "lab"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
from one_run import SHARED_REQUESTS, page_tables  # noqa: E402

# TRI_LAUNCHES: the lab's launch module when not launches.py (as tri_run.py reads it)
LAUNCHES = importlib.import_module(os.environ.get("TRI_LAUNCHES", "launches")).LAUNCHES

KEEP = (".cubin", ".json", ".ttgir")
SHARED = ("LDS", "STS", "ATOMS", "LDSM", "STSM", "LDGSTS", "HGMMA")
WAVES = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_"
REQUESTS = SHARED_REQUESTS
WAVE_OPS = ("ld", "st", "atom", "gmma", "misc")
ARBITRATION = "l1tex__data_bank_conflicts_type_arbitration.sum"


def num(s: str) -> int | None:
    try:
        return int(float(s.replace(",", "")))
    except ValueError:
        return None


def instructions(table: list[list[str]]) -> list[dict]:
    """Each shared-memory SASS instruction that ran: pc from the kernel's start, counters."""
    hi = next(i for i, x in enumerate(table) if x and x[0] == "Address")
    cols = table[hi]
    if "L1 Wavefronts Shared" not in cols:  # a kernel with no shared memory: no such column
        return []
    at = {
        c: cols.index(c)
        for c in ("Address", "Source", "Instructions Executed", "L1 Wavefronts Shared")
    }
    base = None
    out = []
    for x in table[hi + 1 :]:
        if len(x) <= max(at.values()) or not x[at["Address"]].startswith("0x"):
            continue
        pc = int(x[at["Address"]], 16)
        base = pc if base is None else base
        text = x[at["Source"]].strip()
        op = text.split()[1 if text.startswith("@") else 0].split(".")[0]
        if op in SHARED and num(x[at["Instructions Executed"]]):
            out.append(
                {
                    "pc": pc - base,
                    "sass": text,
                    "executed": num(x[at["Instructions Executed"]]),
                    "wavefronts": num(x[at["L1 Wavefronts Shared"]]),
                }
            )
    return out


entries = {}
for src in rounds:
    for meta in (src / "cache").glob("*/*.json"):
        if not meta.name.startswith("__grp__"):
            entries.setdefault(json.loads(meta.read_text())["hash"], meta.parent)  # first round
shutil.rmtree(data / "cache", ignore_errors=True)
shutil.rmtree(data / "ncu", ignore_errors=True)
(data / "ncu").mkdir()
launches: dict[str, dict] = {}
runs: dict[str, list] = {"run1": [], "run2": []}
for (n, src), r in ((x, r) for x in enumerate(rounds, 1) for r in (1, 2)):
    done = json.loads((src / f"run{r}.json").read_text())["runs"]
    rows = list(csv.reader((src / f"run{r}.raw.csv").read_text().splitlines()))
    head, body = rows[0], rows[2:]
    srcs = page_tables(src / f"run{r}.source.csv")
    assert len(body) == len(srcs) == len(done), (len(body), len(srcs), len(done))
    with gzip.open(data / "ncu" / f"round{n}_run{r}.raw.csv.gz", "wt") as f:
        f.write((src / f"run{r}.raw.csv").read_text())
    out = runs[f"run{r}"]
    for row, table, run in zip(body, srcs, done, strict=True):
        ident = run["id"]
        d = dict(zip(head, row, strict=False))
        assert d.get("Kernel Name", run["name"]).startswith(run["name"]), (ident, d["Kernel Name"])
        entry = entries[run["hash"]]
        dest = data / "cache" / entry.name
        if not dest.exists():
            dest.mkdir(parents=True)
            for f in entry.iterdir():
                if f.suffix in KEEP:
                    shutil.copy(f, dest / f.name)
        _, _, _, grid, scalars, _ = LAUNCHES[ident]
        launches[ident] = {
            "id": ident,
            "entry": f"cache/{entry.name}",
            "grid": list(grid),
            # Triton drops integer arguments equal to 1 from the compiled kernel
            "args": {k: str(v) for k, v in scalars.items() if v != 1},
        }
        per_op = {op: {"requests": num(d.get(m + ".sum", ""))} for op, m in REQUESTS.items()}
        for op in WAVE_OPS:
            per_op.setdefault(op, {})["wavefronts"] = num(d.get(WAVES + op + ".sum", ""))
        per_op["all"] = {"wavefronts": num(d["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"])}
        if ARBITRATION in d:  # bank conflicts of warps contending for the LSU (ops36 on)
            per_op["arbitration"] = {"conflicts": num(d[ARBITRATION])}
        out.append({"id": ident, "per_op": per_op, "instructions": instructions(table)})
meta = (rounds[0] / "gpu.txt").read_text().strip().splitlines()
(data / "launches.json").write_text(
    json.dumps({"launches": list(launches.values())}, indent=1) + "\n"
)
(data / "measured.json").write_text(json.dumps({"gpu": meta, "runs": runs}, indent=1) + "\n")
print("launches", len(launches), "entries", len(list((data / "cache").iterdir())))
