"""Turn the Hopper lab's runs (run.sh OUTDIR) into ../measured.json and ../outputs/.

Usage: python3 parse_ncu.py OUTDIR [OUTDIR ...]   (later directories add launches the earlier
ones lack). Per launch: the per-op counters (requests = smsp__sass_inst_executed_op_*, raw
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*, bank conflicts), TMA instruction counts, and
Nsight Compute's source counters of every shared-memory, wgmma and TMA SASS instruction
(read by ../../../lab_common/ncu_pages.py).
Outputs kept: every buffer of the non-wgmma launches, the tensor-map dumps and encodings, and
the accumulators of the wgmma probes with N <= 32 (the rest are not needed to check data).
"""

import csv
import json
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
import ncu_pages as pages  # noqa: E402

num = pages.num

# the lab folder: ../ by default, or $LAB_DATA (another lab laid out the same way)
HERE = Path(os.environ.get("LAB_DATA") or Path(__file__).resolve().parent.parent)
man = json.loads((HERE / "launches.json").read_text())["launches"]
by_id = {L["id"]: L for L in man}
OPS = ("ld", "st", "atom", "gmma", "misc")
INSTR = re.compile(
    r"^(LDS|STS|ATOMS|ATOM|LDSM|STSM|LDGSTS|HGMMA|IGMMA|QGMMA|UTMA\w*|UBLK\w*|SYNCS)\b"
)
# the source counters kept per instruction, and their keys in measured.json
COLUMNS = {
    "Instructions Executed": "executed",
    "L1 Wavefronts Shared": "wavefronts",
    "L1 Wavefronts Shared Ideal": "ideal",
}


def source_tables(path, launches):
    """One table per profiled launch: Nsight Compute may print a launch's table twice (a
    repeat has the same kernel and first address as the table before it), or once. Where
    there are as many tables as launches, none is a repeat (one kernel launched again)."""
    tables, cur = [], None
    for r in csv.reader(path.read_text().splitlines()):
        if r and r[0] == "Kernel Name":
            cur = {"name": r[1], "rows": []}
            tables.append(cur)
        elif r and r[0] == "Address":
            cur["cols"] = r
        elif r and cur is not None:
            cur["rows"].append(r)
    if len(tables) == launches:
        return tables
    out = []
    for t in tables:
        key = (t["name"], t["rows"][0][0] if t["rows"] else None)
        if out and (out[-1]["name"], out[-1]["rows"][0][0] if out[-1]["rows"] else None) == key:
            continue
        out.append(t)
    return out


def same_kernel(ncu_name, symbol):
    """Nsight names a C++ kernel demangled (`f(const int *, int *, int)`), an extern "C" one
    as its symbol: the demangled name's base is in the mangled symbol as <length><name>."""
    if ncu_name == symbol:
        return True
    base = ncu_name.split("(")[0].split("<")[0].split("::")[-1].strip()
    return bool(base) and f"{len(base)}{base}" in symbol


def ranges(n_launches, k):
    h = (n_launches - k) // 3 + 1
    tiles = sum(1 for L in man if L["id"].startswith("tma_tile"))
    out = {"tiles": (0, tiles), "other": (0, k), "all": (0, k)}
    out.update({f"o{i}": (i, i + 1) for i in range(tiles, k)})
    out.update({"wg1": (k, k + h), "wg2": (k + h, k + 2 * h), "wg3": (k + 2 * h, n_launches)})
    return out


def main():
    k = sum(1 for L in man if not L["id"].startswith("wg_"))
    spans = ranges(len(man), k)
    result, gpu, copied = {}, "", set()
    for src in map(Path, sys.argv[1:]):
        gpu = gpu or (src / "gpu.txt").read_text()
        for name, (lo, hi) in spans.items():
            raw = src / f"raw_{name}.csv"
            if not raw.exists():
                continue
            rows = list(csv.reader(raw.read_text().splitlines()))
            head, body = rows[0], rows[2:]
            tables = source_tables(src / f"source_{name}.csv", len(body))
            for j, (L, r) in enumerate(zip(man[lo:hi], body, strict=False)):
                if L["id"] in result or not same_kernel(r[head.index("Kernel Name")], L["kernel"]):
                    continue
                d = dict(zip(head, r, strict=False))
                per_op = {
                    op: {
                        "requests": num(d.get(f"smsp__sass_inst_executed_op_shared_{op}.sum", "")),
                        "wavefronts": num(
                            d.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", "")
                        ),
                        "bank_conflicts": num(
                            d.get(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum", "")
                        ),
                    }
                    for op in OPS
                }
                per_op["ldsm"] = {"requests": num(d["smsp__sass_inst_executed_op_ldsm.sum"])}
                per_op["stsm"] = {"requests": num(d["smsp__sass_inst_executed_op_shared_stsm.sum"])}
                per_op["tma"] = {
                    m: num(d.get(f"smsp__sass_inst_executed_op_tma{m and '_' + m}.sum", ""))
                    for m in ("", "ld", "st", "red")
                }
                per_op["dshared"] = {
                    m: num(d.get(f"smsp__sass_inst_executed_op_dshared_{m}.sum", ""))
                    for m in ("ld", "st", "atom")
                }
                insts = pages.instructions(tables[j], INSTR, COLUMNS)
                result[L["id"]] = {
                    "id": L["id"],
                    "per_op": per_op,
                    "shared_wavefronts_total": num(
                        d["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"]
                    ),
                    "arbitration": num(
                        d.get("l1tex__data_bank_conflicts_type_arbitration.sum", "")
                    ),
                    "instructions": insts,
                }
        outs = src / "outputs"
        dest = HERE / "outputs"
        dest.mkdir(exist_ok=True)
        for f in outs.iterdir():
            m = re.match(r"wg_\w+?_n(\d+)_", f.name)
            if m and int(m.group(1)) > 32:
                continue
            if (f.name == "enc_base.txt" or f.suffix == ".bin") and f.name not in copied:
                shutil.copy(f, dest / f.name)
                copied.add(f.name)
    ordered = [result[L["id"]] for L in man if L["id"] in result]
    (HERE / "measured.json").write_text(
        json.dumps(
            {
                "gpu": " / ".join(x.strip() for x in gpu.splitlines() if x.strip()),
                "profiler": "ncu --clock-control none --metrics <shared, gmma, tma counters> "
                "--section SourceCounters",
                "launches": ordered,
            },
            indent=0,
        )
    )
    print("launches", len(ordered), "of", len(man))


if __name__ == "__main__":
    main()
