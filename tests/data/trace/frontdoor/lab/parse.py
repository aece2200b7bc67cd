"""Turn the lab run's Nsight Compute pages (ncu/raw.csv.gz, ncu/source.csv.gz) into
measured.json: per launch, the per-op counters; for the kernels launched once, the
per-instruction source counters of their first table.

Usage: python3 parse.py DATA_DIR   (DATA_DIR: tests/data/trace/frontdoor)
"""

import csv
import gzip
import json
import sys
from pathlib import Path

data = Path(sys.argv[1])
LAUNCHES = [
    "cute_plain",
    "cute_swizzled",
    "const_table",
    "params_ld32",
    "params_ld33",
    "params_ld34",
]


def num(s: str) -> int:
    return int(float(s.replace(",", ""))) if s not in ("", "-", "n/a") else 0


def lines(name: str) -> list[list[str]]:
    with gzip.open(data / "ncu" / name, "rt") as f:
        return list(csv.reader(f.read().splitlines()))


raw = lines("raw.csv.gz")
head, body = raw[0], raw[2:]
assert len(body) == len(LAUNCHES), len(body)
out = []
for launch_id, r in zip(LAUNCHES, body, strict=True):

    def m(metric: str, r: list[str] = r) -> int:
        return num(r[head.index(metric)])

    per_op = {}
    for op in ("ld", "st", "atom"):
        per_op[op] = {
            "requests": m(f"smsp__sass_inst_executed_op_shared_{op}.sum"),
            "requests_with_predicated_off": m(f"smsp__inst_executed_op_shared_{op}.sum"),
            "wavefronts": m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"),
        }
    total = m("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
    parts = sum(
        m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
        for op in ("ld", "st", "atom", "misc", "gmma")
    )
    per_op["ldgsts"] = {
        "requests": m("smsp__sass_inst_executed_op_ldgsts.sum"),
        "wavefronts": total - parts,
    }
    out.append(
        {
            "id": launch_id,
            "kernel": r[head.index("Kernel Name")],
            "per_op": per_op,
            "shared_wavefronts_total": total,
        }
    )

# the source page: one or two tables per launch; the first table of a kernel launched once
tables, cur = [], None
for r in lines("source.csv.gz"):
    if r and r[0] == "Kernel Name":
        cur = {"name": r[1], "rows": []}
        tables.append(cur)
    elif r and r[0] == "Address" and cur is not None:
        cur["cols"] = r
    elif r and cur is not None:
        cur["rows"].append(r)
once = {"cute_plain": 0, "cute_swizzled": 1, "const_table": 2}
names = []
for t in tables:
    if t["name"] not in names:
        names.append(t["name"])
for launch_id, k in once.items():
    t = next(t for t in tables if t["name"] == names[k])
    c = t["cols"]
    rows = []
    start = int(t["rows"][0][c.index("Address")], 16)  # the function's first instruction
    for r in t["rows"]:
        executed = num(r[c.index("Instructions Executed")])
        if executed:
            rows.append(
                {
                    "pc": int(r[c.index("Address")], 16) - start,
                    "sass": r[c.index("Source")],
                    "executed": executed,
                    "wavefronts": num(r[c.index("L1 Wavefronts Shared")]),
                }
            )
    out[LAUNCHES.index(launch_id)]["instructions"] = rows
doc = {
    "source": "lab/run.sh on an NVIDIA H200, 2026-12-03 (ncu/gpu.txt)",
    "definitions": "requests = smsp__sass_inst_executed_op_shared_*; wavefronts = "
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*; ldgsts wavefronts = the total less ld, st, "
    "atom, misc and gmma",
    "launches": out,
}
(data / "measured.json").write_text(json.dumps(doc, indent=1) + "\n")
print("wrote", data / "measured.json")
