"""python runall.py built.json OUTDIR [ids]: trace each entry, 120 s, one at a time;
write results.tsv."""

import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

built = json.loads(Path(sys.argv[1]).read_text())
outd = sys.argv[2]
os.makedirs(outd, exist_ok=True)
want = set(sys.argv[3:])
here = os.path.dirname(os.path.abspath(__file__))
idx = {}
for j in glob.glob(f"{here}/cache/*/*.json"):
    if os.path.basename(j).startswith("__grp__"):
        continue
    try:
        d = json.loads(Path(j).read_text())
    except Exception:
        continue
    if isinstance(d, dict) and "hash" in d:
        idx[d["hash"]] = os.path.dirname(j)
rows = []
for b in built:
    if want and b["id"] not in want:
        continue
    if "compile_error" in b:
        rows.append((b["id"], "compile-fail", 0, b["compile_error"][:120].replace("\n", " ")))
        continue
    entry = idx[b["hash"]]
    cmd = [
        f"{os.environ.get('WT', '/work/wt/trisweep')}/.venv/bin/python",
        "-m",
        "shmem_cli.cli",
        "trace",
        entry,
        "--grid",
        ",".join(map(str, b["grid"])),
        "--no-tables",
        "--format",
        "json",
    ]
    for k, v in b["scalars"].items():
        cmd += ["--arg", f"{k}={v}"]
    for p, t in b["tensors"].items():
        if isinstance(t, list):
            shape = t[2]
            strides = [1] * len(shape)
            for i in range(len(shape) - 2, -1, -1):
                strides[i] = strides[i + 1] * shape[i + 1]
            cmd += [
                "--arg",
                f"{p}=tensordesc:shape={'x'.join(map(str, shape))},"
                f"strides={'x'.join(map(str, strides))}",
            ]
    t0 = time.time()
    env = dict(os.environ, PYTHONPATH=os.environ.get("WT", "/work/wt/trisweep"))
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        dt = time.time() - t0
        Path(f"{outd}/{b['id']}.out").write_text(r.stdout)
        Path(f"{outd}/{b['id']}.err").write_text(" ".join(cmd) + "\n" + r.stderr)
        if r.returncode == 0:
            cls = "ok"
            msg = ""
            try:
                d = json.loads(r.stdout)["files"][0]["kernels"][0]
                ops = {
                    o: (v["requests"], v["wavefronts"])
                    for o, v in d["totals"].items()
                    if isinstance(v, dict) and v.get("requests")
                }
                msg = json.dumps(ops) + f" nm={len(d['not_modelled'])} dd={d['data_dependent']}"
            except Exception as e:
                msg = f"json? {e}"
        elif "Traceback" in r.stderr:
            cls = "traceback"
            msg = r.stderr.strip().splitlines()[-1][:200]
        else:
            cls = f"error{r.returncode}"
            msg = " | ".join(r.stderr.strip().splitlines()[:3])[:300]
    except subprocess.TimeoutExpired:
        dt = time.time() - t0
        cls, msg = "timeout", ""
    rows.append((b["id"], cls, round(dt, 1), msg))
    print(b["id"], cls, round(dt, 1), msg, flush=True)
with open(f"{outd}/results.tsv", "w") as f:
    for r in rows:
        f.write("\t".join(map(str, r)) + "\n")
