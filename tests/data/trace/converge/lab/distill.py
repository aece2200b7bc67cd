"""Distil the lab's H200 results into ../measured.json (what tests/test_trace_converge.py
compares the emulator with).

    python3 distill.py RESULTS

RESULTS: the unpacked ``converge/`` folder run.sh wrote. Per launch of launches.txt: the
masks ``__activemask()`` gave at each probe (the plain runs' line, and whether the three
runs and the run under Nsight Compute agree), then from Nsight's source page each
shared-memory instruction's offset, SASS, warp executions, thread executions and
wavefronts, and the executions of the control instructions that say where the warp ran in
parts (warp executions, thread executions, predicated-on thread executions). The source
page prints each launch's table twice; the copies are the same and one is kept. Standard
library only.
"""

import csv
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = re.compile(r"^(LDS|STS)")
CONTROL = re.compile(r"^(ELECT|BSSY|BSYNC|YIELD|WARPSYNC|NANOSLEEP|BRA\.DIV|VOTE|SYNCS\.PHASECHK)")


def launches():
    out = []
    for line in (HERE / "launches.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, kernel, n = line.split()
            out.append((name, kernel, int(n)))
    return out


def tables(path):
    """The source page's tables, a launch each (a repeated copy dropped)."""
    out, cur = [], None
    for r in csv.reader(path.read_text().splitlines()):
        if r and r[0] == "Kernel Name":
            cur = [r[1], None, []]
            out.append(cur)
        elif r and r[0] == "Address" and cur is not None:
            cur[1] = r
        elif r and cur is not None and cur[1] is not None:
            cur[2].append(r)
    kept = []
    for t in out:
        if kept and kept[-1][0] == t[0] and kept[-1][2] == t[2]:
            continue  # the page prints each launch's table twice
        kept.append(t)
    return kept


def num(s):
    s = (s or "").replace(",", "").strip()
    try:
        return int(float(s))
    except ValueError:
        return None


def rows_of(table):
    _, cols, rows = table
    base = int(rows[0][0], 16)
    col = {k: cols.index(k) for k in cols}
    shared, control = [], []
    for r in rows:
        sass = " ".join(r[col["Source"]].split())
        op = sass.split()[1] if sass.startswith("@") else sass.split()[0]
        ex = num(r[col["Instructions Executed"]])
        if not ex:
            continue
        pc = int(r[0], 16) - base
        tex = num(r[col["Thread Instructions Executed"]])
        if SHARED.match(op):
            wf = num(r[col["L1 Wavefronts Shared"]])
            shared.append([pc, sass, ex, tex, wf])
        elif CONTROL.match(op):
            on = num(r[col["Predicated-On Thread Instructions Executed"]])
            control.append([pc, sass, ex, tex, on])
    return shared, control


def masks(results, pattern):
    out = {}
    for p in sorted(results.glob(pattern)):
        for line in p.read_text().splitlines():
            parts = line.split(None, 3)
            if len(parts) >= 3 and not line.startswith(("[", "==")):
                out.setdefault(parts[0], []).append(parts[3] if len(parts) > 3 else "")
    return out


def main():
    results = Path(sys.argv[1])
    plain = masks(results, "plain_*.txt")
    under_ncu = masks(results, "ncu.txt")
    by_kernel = {}
    for t in tables(results / "source.csv"):
        by_kernel.setdefault(t[0], []).append(t)
    seen = {}
    out = {
        "source": "lab/run.sh on the H200 (driver, nvcc, Nsight Compute): "
        + "; ".join(x.strip() for x in (results / "gpu.txt").read_text().splitlines()[1:]),
        "launches": {},
    }
    for name, kernel, n in launches():
        k = seen[kernel] = seen.get(kernel, -1) + 1
        shared, control = rows_of(by_kernel[kernel][k])
        runs = plain.get(name, [])
        out["launches"][name] = {
            "kernel": kernel,
            "n": n,
            "masks": runs[0] if runs else None,
            "runs_agree": len(set(runs + under_ncu.get(name, []))) == 1 and len(runs) == 3,
            "shared": shared,
            "control": control,
        }
    (HERE.parent / "measured.json").write_text(dump(out) + "\n")


def dump(value, indent=""):
    """JSON with a row (a list of numbers and SASS) a line."""
    inner = indent + " "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {dump(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and value and isinstance(value[0], list):
        return "[\n" + ",\n".join(inner + json.dumps(v) for v in value) + "\n" + indent + "]"
    return json.dumps(value)


if __name__ == "__main__":
    main()
