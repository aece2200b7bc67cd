"""Trace every launch of ../launches.json with shmem (JSON): what to hold the lab's Nsight
Compute counters against (per-op totals, per-instruction rows). Each launch's arguments are
those the Hopper lab's harness gives the GPU (tests/hopper_lab.py's trace_args). Writes
../traced.json (not kept: it is the code's own output). Usage: python3 lab/predict.py [SHMEM]"""

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE.parents[3]))  # the repository root
from tests import hopper_lab as lab  # noqa: E402

SH = [sys.argv[1] if len(sys.argv) > 1 else "shmem"]
out = {}
for L in lab.manifest(HERE)["launches"]:
    t = time.time()
    cmd = [*SH, "trace", *lab.trace_args(L["id"], HERE), "-f", "json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(L["id"], "rc", r.returncode, r.stdout[-400:], r.stderr[-400:])
        continue
    k = json.loads(r.stdout)["files"][0]["kernels"][0]
    out[L["id"]] = k
    print(L["id"], f"{time.time() - t:.1f}s", json.dumps(k["totals"])[:400])
(HERE / "traced.json").write_text(json.dumps(out))
