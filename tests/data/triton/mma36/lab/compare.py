"""After parse.py: each launch's measured per-op counters (both runs) beside predicted.json's
(the trace of the entry compiled here), and whether the GPU's Triton compiled the very entry
traced here (same cache hash). Prints the launches that differ; stdlib only.

Usage: python3 tests/data/triton/mma36/lab/compare.py tests/data/triton/mma36"""

import json
import sys
from pathlib import Path

data = Path(sys.argv[1])
predicted = json.loads((data / "lab" / "predicted.json").read_text())
launches = {L["id"]: L for L in json.loads((data / "launches.json").read_text())["launches"]}
runs = json.loads((data / "measured.json").read_text())["runs"]


def entry_hash(entry: str) -> str:
    meta = [p for p in (data / entry).glob("*.json") if not p.name.startswith("__grp__")]
    return json.loads(meta[0].read_text())["hash"]


def shaped(p: dict) -> dict:
    return {
        "ld": [p["ld"]["requests"], p["ld"]["wavefronts"]],
        "st": [p["st"]["requests"], p["st"]["wavefronts"]],
        "ldsm": p["ldsm"]["requests"],
        "stsm": p["stsm"]["requests"],
        "ldgsts": p["ldgsts"]["requests"],
        "gmma": p["gmma"]["wavefronts"],
        "atom": [p["atom"]["requests"], p["atom"]["wavefronts"]],
    }


same = differ = 0
for ident, pred in predicted.items():
    if ident not in launches:
        print(f"{ident}: not measured (failed or timed out on the GPU)")
        continue
    want = {k: v for k, v in pred.items() if k not in ("hash", "sass")}
    cubin = "same entry" if entry_hash(launches[ident]["entry"]) == pred["hash"] else "OTHER entry"
    for run, ms in runs.items():
        got = shaped(next(m for m in ms if m["id"] == ident)["per_op"])
        if got == want:
            same += 1
            continue
        differ += 1
        diff = {k: (want[k], got[k]) for k in want if want[k] != got[k]}
        print(f"{ident} {run} ({cubin}): traced, measured {diff}")
print(f"{same} launch-runs equal to the prediction, {differ} not")
