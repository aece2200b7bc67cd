"""Turn the lab run's results into the test data: with RESULTS (the unpacked tar of run.sh),
first put its pages, cubin and inputs in place under DATA_DIR; then write measured.json from
the Nsight Compute pages (ncu/raw.csv.gz, ncu/source.csv.gz): per launch, the per-op counters
(and whether the second run under ncu counted the same, ncu/raw2.csv.gz); for the kernels
launched once, the per-instruction source counters of their first table.

Usage: python3 parse.py DATA_DIR [RESULTS]   (DATA_DIR: tests/data/trace/frontdoor)
"""

import csv
import gzip
import json
import shutil
import sys
from pathlib import Path

data = Path(sys.argv[1])
LAUNCHES = [
    "tile_plain",
    "tile_swizzled",
    "const_table",
    "params_ld32",
    "params_ld33",
    "params_ld34",
]
INPUTS = [
    "tile_in.bin",
    "const_strides.bin",
    "params_ld32.bin",
    "params_ld33.bin",
    "params_ld34.bin",
]


def install(results: Path) -> None:
    """The pages gzipped into ncu/, the cubin that ran, and what the run under ncu used."""
    (data / "ncu").mkdir(exist_ok=True)
    (data / "inputs").mkdir(exist_ok=True)
    for name in ("raw.csv", "source.csv", "raw2.csv"):
        packed = gzip.compress((results / name).read_bytes(), mtime=0)
        (data / "ncu" / f"{name}.gz").write_bytes(packed)
    for name in ("app.txt", "gpu.txt", "ncu_run.txt", "ncu_run2.txt"):
        shutil.copyfile(results / name, data / "ncu" / name)
    (cubin,) = sorted((results / "cubins").glob("*.cubin"))
    shutil.copyfile(cubin, data / "host.sm_90a.cubin")
    for name in INPUTS:  # the run whose counters measured.json keeps
        shutil.copyfile(results / "ncu_run" / name, data / "inputs" / name)


def num(s: str) -> int:
    return int(float(s.replace(",", ""))) if s not in ("", "-", "n/a") else 0


def lines(name: str) -> list[list[str]]:
    with gzip.open(data / "ncu" / name, "rt") as f:
        return list(csv.reader(f.read().splitlines()))


def per_op_counters(page: str) -> list[tuple[str, dict[str, dict[str, int]], int]]:
    raw = lines(page)
    head, body = raw[0], raw[2:]
    assert len(body) == len(LAUNCHES), len(body)
    out = []
    for r in body:

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
        out.append((r[head.index("Kernel Name")], per_op, total))
    return out


if len(sys.argv) > 2:
    install(Path(sys.argv[2]))
first, second = per_op_counters("raw.csv.gz"), per_op_counters("raw2.csv.gz")
out = []
for launch_id, (kernel, per_op, total), (_, per_op2, total2) in zip(
    LAUNCHES, first, second, strict=True
):
    launch = {"id": launch_id, "kernel": kernel, "per_op": per_op, "shared_wavefronts_total": total}
    launch["second_run_agrees"] = (per_op2, total2) == (per_op, total)
    if not launch["second_run_agrees"]:
        launch["second_run"] = {"per_op": per_op2, "shared_wavefronts_total": total2}
    out.append(launch)

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
once = {"tile_plain": 0, "tile_swizzled": 1, "const_table": 2}
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
    "source": "lab/run.sh on an NVIDIA H200 (ncu/gpu.txt)",
    "definitions": "requests = smsp__sass_inst_executed_op_shared_*; wavefronts = "
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*; ldgsts wavefronts = the total less ld, st, "
    "atom, misc and gmma; second_run_agrees: the second run under ncu (ncu/raw2.csv.gz) counted "
    "the same per op",
    "launches": out,
}
(data / "measured.json").write_text(json.dumps(doc, indent=1) + "\n")
print("wrote", data / "measured.json")
