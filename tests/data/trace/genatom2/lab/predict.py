"""The trace's figures for every launch of ../launches.json (shmem trace, JSON), written to
predicted.json beside this script BEFORE the GPU run: what shmem predicts, not what was
measured (measured.json is that). Per launch: Nsight's per-op wavefronts as the trace gives
them (atom: the atomic total; ld: loads and ldmatrix; st: stores and stmatrix; misc), the
atomic rows by pc, and the generic atomics' wavefronts that no row carries by pc. Each
launch's arguments are those the Hopper lab's harness gives the GPU (tests/hopper_lab.py's
trace_args).
Usage (from the repository root): python3 tests/data/trace/genatom2/lab/predict.py [SHMEM]"""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE.parents[3]))  # the repository root
from tests import hopper_lab as lab  # noqa: E402


def wavefronts(totals, *names):
    return sum(totals[n]["wavefronts"] for n in names)


SH = sys.argv[1:] or ["shmem"]
out = {}
for L in lab.manifest(HERE)["launches"]:
    cmd = [*SH, "trace", *lab.trace_args(L["id"], HERE), "-f", "json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{L['id']}: rc {r.returncode}\n{r.stdout[-400:]}{r.stderr[-400:]}")
    k = json.loads(r.stdout)["files"][0]["kernels"][0]
    t = k["totals"]
    out[L["id"]] = {
        "atom": t["atomic"]["wavefronts"],
        "ld": wavefronts(t, "load", "ldmatrix"),
        "st": wavefronts(t, "store", "stmatrix"),
        "misc": t["misc"]["wavefronts"],
        "atom_rows": {
            f"{a['pc']} {a['sass']}": [a["requests"], a["wavefronts"]]
            for a in k["accesses"]
            if a["op"] == "atomic"
        },
        "generic_atoms": {f"{g['pc']} {g['sass']}": g["wavefronts"] for g in k["generic_atoms"]},
    }
    print(L["id"], {n: out[L["id"]][n] for n in ("atom", "ld", "st", "misc")}, flush=True)
doc = {
    "what": "shmem trace's PREDICTION (the code's own output, not ground truth), made before "
    "the lab ran on a GPU; measured.json holds what Nsight Compute counted",
    "launches": out,
}
(Path(__file__).parent / "predicted.json").write_text(json.dumps(doc, indent=1) + "\n")
