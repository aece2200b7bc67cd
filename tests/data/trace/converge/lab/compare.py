"""Compare the H200's per-instruction counts with the emulator's, launch by launch.

    python3 compare.py RESULTS [PREDICTIONS]

RESULTS: the unpacked ``converge/`` folder run.sh wrote (source.csv, plain_*.txt);
PREDICTIONS: the emulator's figures (default: ../trace_predictions.json, from predict.py).
For each launch of launches.txt: the masks ``__activemask()`` gave at each probe in the plain
runs, then per shared-memory instruction Nsight's warp executions, thread executions and
wavefronts beside the trace's requests and wavefronts (a difference marked), and the
control instructions' executions (ELECT, BSSY, BSYNC, YIELD, WARPSYNC, NANOSLEEP, the
mbarrier waits), which say where the warp ran in parts. Standard library only.
"""

import json
import sys
from pathlib import Path

# what distill.py reads the same way: the launches, the source page's tables (a launch each:
# the page prints each table twice, and a copy counted would shift every later launch of
# its kernel), the counts
sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python -I` adds no script folder
from distill import CONTROL, HERE, SHARED, launches, num, tables  # noqa: E402


def rows_of(table):
    """Each SASS row as (offset, opcode, sass, warp executions, thread executions, wavefronts)."""
    _, cols, rows = table
    base = int(rows[0][0], 16)
    get = {k: cols.index(k) for k in cols}
    out = []
    for r in rows:
        sass = r[get["Source"]].strip()
        op = sass.split()[1] if sass.startswith("@") else sass.split()[0]
        out.append(
            (
                int(r[0], 16) - base,
                op,
                sass,
                num(r[get["Instructions Executed"]]),
                num(r[get["Thread Instructions Executed"]]),
                num(r[get["L1 Wavefronts Shared"]]) if "L1 Wavefronts Shared" in get else None,
            )
        )
    return out


def masks(results):
    """{launch name: [the line of each plain run]} (the probes' masks)."""
    out = {}
    for p in sorted(results.glob("plain_*.txt")):
        for line in p.read_text().splitlines():
            if line.split() and not line.startswith("["):
                out.setdefault(line.split()[0], []).append(
                    line.split(None, 3)[3] if len(line.split()) > 3 else ""
                )
    return out


def main():
    results = Path(sys.argv[1])
    pred = json.loads(
        Path(
            sys.argv[2] if len(sys.argv) > 2 else HERE.parent / "trace_predictions.json"
        ).read_text()
    )
    by_kernel = {}
    for t in tables(results / "source.csv"):
        mine = by_kernel.setdefault(t[0], [])
        if not mine or mine[-1][2] != t[2]:  # the page prints each launch's table twice
            mine.append(t)
    seen = {}
    plain = masks(results)
    differ = 0
    for name, kernel, n in launches():
        k = seen[kernel] = seen.get(kernel, -1) + 1
        print(f"== {name} ({kernel}, n={n})")
        runs = plain.get(name, [])
        print(
            "   masks:",
            runs[0] if runs else "-",
            "" if len(set(runs)) <= 1 else f"(runs differ: {runs})",
        )
        ts = by_kernel.get(kernel, [])
        if k >= len(ts):
            print("   no source table")
            continue
        trace = {a["pc"]: a for a in pred.get(name, {}).get("accesses", [])}
        for pc, op, sass, ex, tex, wf in rows_of(ts[k]):
            if SHARED.match(op) and ex:
                t = trace.get(pc)
                tr = f"{t['requests']:>3} {t['wavefronts']:>3}" if t else "  -   -"
                bad = t is None or t["requests"] != ex or t["wavefronts"] != wf
                differ += bad
                w = "-" if wf is None else wf
                mark = "   DIFFERS" if bad else ""
                print(f"   {pc:#06x} {sass:<44} H200 {ex:>3} {tex:>4} {w:>3}   trace {tr}{mark}")
            elif CONTROL.match(op) and ex:
                print(f"   {pc:#06x} {sass:<44} H200 {ex:>3} {tex:>4}")
    print(f"{differ} shared-memory instruction(s) differ")


if __name__ == "__main__":
    main()
