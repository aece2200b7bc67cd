"""Turn one ncu run (raw.csv + source.csv) into tests/data/trace/measured.json."""

import csv
import json
import sys
from pathlib import Path

src_dir, data = Path(sys.argv[1]), Path(sys.argv[2])
man = json.loads((data / "launches.json").read_text())


def num(s: str) -> int | None:
    return int(float(s.replace(",", ""))) if s not in ("", "-", "n/a") else None


rows = list(csv.reader((src_dir / "raw.csv").read_text().splitlines()))
head, body = rows[0], rows[2:]
assert len(body) == len(man["launches"]), (len(body), len(man["launches"]))


def m(r, name):
    return num(r[head.index(name)])


# source page: tables start with "Kernel Name"; two per kernel, take the first of each pair
tables, cur = [], None
for r in csv.reader((src_dir / "source.csv").read_text().splitlines()):
    if r and r[0] == "Kernel Name":
        cur = {"name": r[1], "rows": []}
        tables.append(cur)
        continue
    if r and r[0] == "Address":
        cur["cols"] = r
        continue
    if r:
        cur["rows"].append(r)
# Nsight Compute prints the source table once or twice per launch (not always the same for all
# kernels): within each run of consecutive launches of one kernel, take every table when there
# are as many as launches, every other one when there are twice as many.
firsts, k, i = [], 0, 0
names = [r[head.index("Kernel Name")] for r in body]
while i < len(body):
    j = i
    while j < len(body) and names[j] == names[i]:
        j += 1
    n_l, t0 = j - i, k
    while k < len(tables) and tables[k]["name"] == tables[t0]["name"]:
        k += 1
    n_t = k - t0
    assert n_t in (n_l, 2 * n_l), (names[i], n_l, n_t)
    firsts += tables[t0 : k : n_t // n_l]
    i = j
assert len(firsts) == len(body) and k == len(tables), (len(firsts), len(body), k)

out = []
# generic LD, ST and ATOM too: on an address in the shared window they are shared traffic
SH = ("LDS", "STS", "ATOMS", "LDSM", "STSM", "LDGSTS", "LD", "ST", "ATOM")
for i, (L, r) in enumerate(zip(man["launches"], body, strict=True)):
    t = firsts[i]
    assert t["name"].replace("(int)", "").replace("(bool)", "") == r[
        head.index("Kernel Name")
    ].replace("(int)", "").replace("(bool)", ""), (t["name"], r[4])
    c = t["cols"]
    base = int(t["rows"][0][0], 16)
    insts = []
    for row in t["rows"]:
        sass = row[1].strip()
        op = sass.split()[0]
        if op.startswith("@"):
            op = sass.split()[1]
        if op.split(".")[0] not in SH:
            continue

        def g(n: str, row: list[str] = row, c: list[str] = c) -> int | None:
            return num(row[c.index(n)])

        insts.append(
            {
                "pc": int(row[0], 16) - base,
                "sass": sass,
                "executed": g("Instructions Executed"),
                "thread_executed": g("Predicated-On Thread Instructions Executed"),
                "wavefronts": g("L1 Wavefronts Shared"),
                "ideal": g("L1 Wavefronts Shared Ideal"),
                "ways": g("L1 Conflicts Shared N-Way"),
            }
        )
    per_op = {}
    for op in ("ld", "st", "atom"):
        per_op[op] = {
            "requests": m(r, f"smsp__sass_inst_executed_op_shared_{op}.sum"),
            "requests_with_predicated_off": m(r, f"smsp__inst_executed_op_shared_{op}.sum"),
            "wavefronts": m(r, f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"),
            "bank_conflicts": m(r, f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"),
        }
    total = m(r, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
    parts = sum(
        m(r, f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
        for op in ("ld", "st", "atom", "misc", "gmma", "ipa")
    )
    per_op["ldsm"] = {"requests": m(r, "smsp__sass_inst_executed_op_ldsm.sum")}
    per_op["stsm"] = {"requests": m(r, "smsp__sass_inst_executed_op_shared_stsm.sum")}
    per_op["ldgsts"] = {
        "requests": m(r, "smsp__sass_inst_executed_op_ldgsts.sum"),
        "requests_with_predicated_off": m(r, "smsp__inst_executed_op_ldgsts.sum"),
        "wavefronts": total - parts,
        "bank_conflicts": m(r, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"),
    }
    out.append(
        {
            "id": L["id"],
            "ncu_kernel_name": r[head.index("Kernel Name")],
            "per_op": per_op,
            "shared_wavefronts_total": total,
            "misc_wavefronts": m(r, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"),
            "arbitration": m(r, "l1tex__data_bank_conflicts_type_arbitration.sum"),
            "instructions": insts,
        }
    )
gpu = (src_dir / "gpu.txt").read_text().split("\n")
(data / "measured.json").write_text(
    json.dumps(
        {
            "gpu": "NVIDIA H200 (sm_90), " + " / ".join(x.strip() for x in gpu if x.strip()),
            "profiler": (
                "ncu --clock-control none --metrics <shared counters> --section SourceCounters"
            ),
            "note": (
                "requests = smsp__sass_inst_executed_op_*; "
                "wavefronts = raw l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*; "
                "ldgsts wavefronts = total shared wavefronts less the ld, st, atom, misc, gmma "
                "and ipa parts; instructions = Nsight Compute source counters per SASS "
                "instruction (pc relative to the function)"
            ),
            "launches": out,
        },
        indent=1,
    )
)
print("ok", len(out))
