"""Trace every launch of ../launches.json with shmem (JSON): what to hold the lab's Nsight
Compute counters against (per-op totals, per-instruction rows). Writes ../traced.json (not
kept: it is the code's own output). Usage: python3 lab/predict.py [SHMEM]"""

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SH = [sys.argv[1] if len(sys.argv) > 1 else "shmem"]
out = {}
for L in json.loads((HERE / "launches.json").read_text())["launches"]:
    args = []
    for i, a in enumerate(L["args"]):
        if "file" in a:
            args += ["--arg", f"{i}=@{HERE / a['file']}"]
        elif "zeros" in a:  # a pointer left out gets a zero-filled buffer
            pass
        elif "int" in a:
            args += ["--arg", f"{i}={a['int']}"]
    cmd = [
        *SH,
        "trace",
        str(HERE / L["cubin"]),
        "-k",
        L["kernel"],
        "--block",
        ",".join(map(str, L["block"])),
        "--grid",
        ",".join(map(str, L["grid"])),
        *args,
        "-f",
        "json",
    ]
    if L["cluster"] != [1, 1, 1]:
        cmd += ["--cluster", ",".join(map(str, L["cluster"]))]
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(L["id"], "rc", r.returncode, r.stdout[-400:], r.stderr[-400:])
        continue
    k = json.loads(r.stdout)["files"][0]["kernels"][0]
    out[L["id"]] = k
    print(L["id"], f"{time.time() - t:.1f}s", json.dumps(k["totals"])[:400])
(HERE / "traced.json").write_text(json.dumps(out))
