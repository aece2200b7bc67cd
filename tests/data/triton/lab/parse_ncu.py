"""Turn one run of run.sh (raw.csv + source.csv) into measured.json and ncu/<id>.csv.

Usage: parse_ncu.py OUTDIR tests/data/triton. measured.json: per launch the per-op counters
(requests = smsp__sass_inst_executed_op_*, wavefronts = raw
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*) and, per shared-memory SASS instruction,
Nsight Compute's source counters. ncu/<id>.csv: that launch's table of
`ncu --page source --csv --print-source sass`, as ncu printed it.
"""

import csv
import io
import json
import sys
from pathlib import Path

src, data = Path(sys.argv[1]), Path(sys.argv[2])
man = json.loads((data / "launches.json").read_text())


def num(s: str) -> int | None:
    return int(float(s.replace(",", ""))) if s not in ("", "-", "n/a") else None


rows = list(csv.reader((src / "raw.csv").read_text().splitlines()))
head, body = rows[0], rows[2:]
assert len(body) == len(man["launches"]), (len(body), len(man["launches"]))

# the source page: one table per launch, each starting with a "Kernel Name" line
text = (src / "source.csv").read_text()
chunks, cur = [], None
for line in text.splitlines(keepends=True):
    if line.startswith('"Kernel Name"'):
        cur = [line]
        chunks.append(cur)
    elif cur is not None:
        cur.append(line)
assert len(chunks) == len(body), len(chunks)
(data / "ncu").mkdir(exist_ok=True)
SHARED = ("LDS", "STS", "ATOMS", "LDSM", "STSM", "LDGSTS")
out = []
for L, r, chunk in zip(man["launches"], body, chunks, strict=True):
    (data / "ncu" / f"{L['id']}.csv").write_text("".join(chunk))
    table = list(csv.reader(io.StringIO("".join(chunk))))
    cols, lines = table[1], table[2:]
    base = int(lines[0][0], 16)
    insts = []
    for row in lines:
        sass = row[1].strip()
        words = sass.split()
        op = words[1] if words[0].startswith("@") else words[0]
        if op.split(".")[0] not in SHARED:
            continue
        g = lambda n, row=row, cols=cols: num(row[cols.index(n)])  # noqa: E731
        insts.append(
            {
                "pc": int(row[0], 16) - base,
                "sass": sass,
                "executed": g("Instructions Executed"),
                "wavefronts": g("L1 Wavefronts Shared"),
                "ideal": g("L1 Wavefronts Shared Ideal"),
                "ways": g("L1 Conflicts Shared N-Way"),
            }
        )
    m = lambda name, r=r: num(r[head.index(name)])  # noqa: E731
    per_op = {}
    for op in ("ld", "st", "atom"):
        per_op[op] = {
            "requests": m(f"smsp__sass_inst_executed_op_shared_{op}.sum"),
            "wavefronts": m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"),
            "bank_conflicts": m(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"),
        }
    total = m("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
    parts = {
        op: m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
        for op in ("ld", "st", "atom", "misc", "gmma", "ipa")
    }
    per_op["ldsm"] = {"requests": m("smsp__sass_inst_executed_op_ldsm.sum")}
    per_op["stsm"] = {"requests": m("smsp__sass_inst_executed_op_shared_stsm.sum")}
    per_op["ldgsts"] = {
        "requests": m("smsp__sass_inst_executed_op_ldgsts.sum"),
        "wavefronts": total - sum(parts.values()),
    }
    out.append(
        {
            "id": L["id"],
            "ncu_kernel_name": r[head.index("Kernel Name")],
            "per_op": per_op,
            "shared_wavefronts_total": total,
            "gmma_wavefronts": parts["gmma"],
            "misc_wavefronts": parts["misc"],
            "arbitration": m("l1tex__data_bank_conflicts_type_arbitration.sum"),
            "instructions": insts,
        }
    )
gpu = [x.strip() for x in (src / "gpu.txt").read_text().split("\n") if x.strip()]
doc = {
    "gpu": "NVIDIA H200 (sm_90), " + " / ".join(gpu),
    "profiler": "ncu --clock-control none --metrics <shared counters> --section SourceCounters",
    "launches": out,
}
(data / "measured.json").write_text(json.dumps(doc, indent=1) + "\n")
print("ok", len(out))
