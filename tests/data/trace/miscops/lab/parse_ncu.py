"""Turn the op_misc lab's results (lab/run.sh: raw_all_K.csv, raw_repeat_K.csv and
source_K.csv for the chunk of launches that starts at K) into ../measured.json.

Usage: python3 parse_ncu.py RESULTS_DIR [RESULTS_DIR2 ...] (the rounds, in order). Per
launch: every counter of the run whose name speaks of shared memory, distributed shared
memory, barriers, fences or instructions (as measured, with the repeat's value where it
differs), and Nsight Compute's executions of every SASS instruction that touches shared
memory or synchronises (where the source pass ran).
"""

import csv
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
man = json.loads((HERE / "launches.json").read_text())["launches"]
KEEP = re.compile(
    r"shared|dsmem|cga|cluster|generic|global|tma|lsu_wavefronts|arbitration|misc|membar|sync|barrier|fence|inst_executed"
)
SKIP = re.compile(r"^(device__attribute|launch__)")
CHUNK = 30  # lab/run.sh's source pass: launches a report
INSTR = re.compile(
    r"^(LDS|STS|ATOMS|LD|ST|ATOM|RED|QSPC|SYNCS|BAR|MEMBAR|FENCE|ERRBAR|CGAERRBAR|UCGABAR_\w+|CCTL|ELECT"
    r"|WARPSYNC|NANOSLEEP|DEPBAR|VOTE|EXIT)\b"
)


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
    if not rows:  # a report ncu never wrote (its chunk ran out of time)
        return [], []
    head = rows[0]
    body = [r for r in rows[1:] if len(r) == len(head) and r[head.index("Kernel Name")] != ""]
    return head, [r for r in body if not r[head.index("Kernel Name")].startswith("Kernel")]


def chunks(src, stem):
    """The chunk files ``stem_K.csv`` in launch order (K: the chunk's first launch)."""
    found = sorted(src.glob(f"{stem}_*.csv"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    return [(int(p.stem.rsplit("_", 1)[1]), p) for p in found]


def raw_all(src, stem):
    """{launch index: (header, row)} over every chunk of one pass."""
    out = {}
    for first, path in chunks(src, stem):
        head, body = raw_rows(path)
        for j, row in enumerate(body):
            out[first + j] = (head, row)
    return out


def source_tables(path, first=0):
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
        launches = sum(1 for L in man[first : first + CHUNK] if L["kernel"] == name)
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
    dirs = [Path(a) for a in sys.argv[1:]]
    src = dirs[0]
    first_pass, repeat = {}, {}
    for d in dirs:  # the rounds, in order: a launch's first measurement is its first pass
        for stem in ("raw_all", "raw_repeat"):
            for j, row in raw_all(d, stem).items():
                (repeat if j in first_pass else first_pass).setdefault(j, row)
    tables = {}  # launch index -> its source table
    for first, path in chunks(src, "source"):
        seen = {}
        by_name = source_tables(path, first)
        for j in range(first, min(first + CHUNK, len(man))):
            name = man[j]["kernel"]
            k = seen[name] = seen.get(name, -1) + 1
            if k < len(by_name.get(name, [])):
                tables[j] = by_name[name][k]
    result = []
    for j, L in enumerate(man):
        if j not in first_pass and j not in repeat:
            print("launch", j, L["id"], "not measured")
            continue
        head, r = first_pass.get(j) or repeat[j]
        if L["kernel"] not in r[head.index("Kernel Name")]:
            print("launch", j, "is", r[head.index("Kernel Name")], "not", L["kernel"])
            continue
        entry = {"id": L["id"], "counters": counters(head, r), "measured_twice": False}
        if j in first_pass and j in repeat:
            again = counters(*repeat[j])
            entry["measured_twice"] = True
            entry["repeat_differs"] = {
                k: v for k, v in again.items() if entry["counters"].get(k) != v
            }
        if j in tables:
            t = tables[j]
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
                    if re.search("^Instructions Executed|^Thread Instructions Executed", n)
                }
                insts.append({"pc": int(row[0], 16) - base, "sass": sass, **cells})
            entry["instructions"] = insts
        result.append(entry)
    gpu = (src / "gpu.txt").read_text() if (src / "gpu.txt").exists() else ""
    (HERE / "measured.json").write_text(
        json.dumps(
            {
                "gpu": " / ".join(x.strip() for x in gpu.splitlines() if x.strip()),
                "profiler": "ncu --clock-control none --metrics <shared, dshared, misc, barriers> "
                "(60 launches a report), twice (repeat_differs: where the two differ); then "
                "--section SourceCounters (30 launches a report) for the executions",
                "launches": result,
            },
            indent=0,
        )
        + "\n"
    )
    print("launches", len(result), "of", len(man))


if __name__ == "__main__":
    main()
