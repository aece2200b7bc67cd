"""Turn the cluster lab's results (.lab/grids/run.sh: raw_all.csv, source_all.csv,
raw_repeat.csv, outputs/) into ../measured.json and ../outputs/.

Usage: python3 parse_ncu.py RESULTS_DIR. Per launch: every counter of the run whose name
speaks of shared memory, distributed shared memory or generic and global accesses (as
measured, with the repeat's value where it differs), and Nsight Compute's source counters of
every memory SASS instruction (executions and every wavefront or request column).
"""

import csv
import json
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
man = json.loads((HERE / "launches.json").read_text())["launches"]
KEEP = re.compile(r"shared|dsmem|cga|cluster|generic|global|tma|lsu_wavefronts|arbitration")
SKIP = re.compile(r"^(device__attribute|launch__)")
INSTR = re.compile(r"^(LDS|STS|ATOMS|LD|ST|ATOM|RED|UTMA\w*|SYNCS)\b")


def num(s):
    s = s.replace(",", "").strip()
    try:
        return int(float(s))
    except ValueError:
        return None


def raw_rows(path):
    """The raw page's rows (header, then one row per profiled launch)."""
    if not path.exists():
        return [], []
    rows = [r for r in csv.reader(path.read_text().splitlines()) if r]
    rows = [r for r in rows if not r[0].startswith("==")]
    head = rows[0]
    body = [r for r in rows[1:] if len(r) == len(head) and r[head.index("Kernel Name")] != ""]
    return head, [r for r in body if not r[head.index("Kernel Name")].startswith("Kernel")]


def source_tables(path):
    """The source page's tables by kernel name, in launch order: Nsight Compute printed the
    table of each launch of a cluster kernel twice (the two copies are equal), once for
    the others; a name with twice as many tables as launches keeps every second one."""
    tables, cur = [], None
    for r in csv.reader(path.read_text().splitlines() if path.exists() else []):
        if r and r[0] == "Kernel Name":
            cur = {"name": r[1], "rows": []}
            tables.append(cur)
        elif r and r[0] == "Address" and cur is not None:
            cur["cols"] = r
        elif r and cur is not None and "cols" in cur:
            cur["rows"].append(r)
    by_name = {}
    for t in tables:
        by_name.setdefault(t["name"], []).append(t)
    for name, ts in by_name.items():
        launches = sum(1 for L in man if L["kernel"] == name)
        if len(ts) == 2 * launches:
            by_name[name] = ts[::2]
    return by_name


def counters(head, row):
    """The launch's counters that speak of shared, distributed shared or generic traffic
    (sums; not the device's or the launch's attributes), those that counted anything."""
    d = dict(zip(head, row, strict=False))
    out = {}
    for k, v in d.items():
        if k.endswith(".sum") and KEEP.search(k) and not SKIP.search(k) and num(v):
            out[k.removesuffix(".sum")] = num(v)
    return out


def main():
    src = Path(sys.argv[1])
    head, body = raw_rows(src / "raw_all.csv")
    head2, body2 = raw_rows(src / "raw_repeat.csv")
    tables = source_tables(src / "source_all.csv")
    seen = {}
    kernel = head.index("Kernel Name") if head else 0
    result = []
    for j, (L, r) in enumerate(zip(man, body, strict=False)):
        if L["kernel"] not in r[kernel]:
            print("launch", j, "is", r[kernel], "not", L["kernel"])
            break
        entry = {"id": L["id"], "counters": counters(head, r)}
        if j < len(body2):
            again = counters(head2, body2[j])
            entry["repeat_differs"] = {
                k: v for k, v in again.items() if entry["counters"].get(k) != v
            }
        k = seen[L["kernel"]] = seen.get(L["kernel"], -1) + 1
        if k < len(tables.get(L["kernel"], [])):
            t = tables[L["kernel"]][k]
            c = t["cols"]
            base = int(t["rows"][0][0], 16)
            insts = []
            for row in t["rows"]:
                sass = row[1].strip()
                op = sass.split()[1] if sass.startswith("@") else sass.split()[0]
                if not INSTR.match(op):
                    continue
                cells = {
                    n: num(row[c.index(n)])
                    for n in c
                    if re.search("Wavefronts Shared|^Instructions Executed", n)
                }
                insts.append({"pc": int(row[0], 16) - base, "sass": sass, **cells})
            entry["instructions"] = insts
        result.append(entry)
    gpu = (src / "gpu.txt").read_text() if (src / "gpu.txt").exists() else ""
    (HERE / "measured.json").write_text(
        json.dumps(
            {
                "gpu": " / ".join(x.strip() for x in gpu.splitlines() if x.strip()),
                "profiler": "ncu --clock-control none --metrics <shared, dshared, generic> "
                "--section SourceCounters; the counters measured twice (repeat_differs)",
                "launches": result,
            },
            indent=0,
        )
        + "\n"
    )
    outs = src / "outputs"
    if outs.is_dir():
        (HERE / "outputs").mkdir(exist_ok=True)
        for f in outs.iterdir():
            if f.suffix == ".bin":
                shutil.copy(f, HERE / "outputs" / f.name)
    print("launches", len(result), "of", len(man))


if __name__ == "__main__":
    main()
