"""The trace's figures for the entries build_here.py compiled here (no GPU): per launch, the
entry's hash, its count of HMMA/HGMMA/LDSM/LDS/STS/LDGSTS/STSM instructions and the per-op
counters shmem traces (shaped as tests/test_trace_triton_mma36.py compares them). Written
to predicted.json before the GPU run, to be compared with what it measures.

Usage (from the repository root, shmem's environment):
    python tests/data/triton/mma36/lab/predict_here.py CACHE_DIR BUILD.json OUT.json"""

import collections
import json
import re
import subprocess
import sys
from pathlib import Path

from shmem_cli.cuda import toolchain
from shmem_cli.trace.pipeline import TraceRequest, arg_texts, trace_file

sys.path.insert(0, str(Path(__file__).parent))
from launches import LAUNCHES  # noqa: E402

OPS = ("HMMA", "HGMMA", "LDSM", "LDS", "STS", "LDGSTS", "STSM")
cache, built, dest = (Path(a) for a in sys.argv[1:4])
entries = {}
for meta in cache.glob("*/*.json"):
    if not meta.name.startswith("__grp__"):
        entries[json.loads(meta.read_text())["hash"]] = meta.parent
nvdisasm = toolchain.which("nvdisasm")
out = {}
for run in json.loads(built.read_text())["runs"]:
    entry = entries[run["hash"]]
    cubin = next(entry.glob("*.cubin"))
    sass = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True).stdout
    census = collections.Counter()
    for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9]+)([.\w]*)", sass):
        if m.group(1) in OPS:
            census[m.group(1) + (".T" if ".MT88" in m.group(2) else "")] += 1
    _, _, _, grid, scalars, _ = LAUNCHES[run["id"]]
    args = {k: str(v) for k, v in scalars.items() if v != 1}  # as Triton compiled them in
    request = TraceRequest(entry, grid=(*grid, 1, 1, 1)[:3], args=arg_texts(args))
    t = trace_file(request).kernels[0].totals
    out[run["id"]] = {
        "hash": run["hash"],
        "sass": dict(sorted(census.items())),
        "ld": [t["load"].requests, t["load"].wavefronts + t["ldmatrix"].wavefronts],
        "st": [t["store"].requests, t["store"].wavefronts + t["stmatrix"].wavefronts],
        "ldsm": t["ldmatrix"].requests,
        "stsm": t["stmatrix"].requests,
        "ldgsts": t["cp_async"].requests,
        "gmma": t["wgmma"].wavefronts,
        "atom": [t["atomic"].requests, t["atomic"].wavefronts],
    }
    print(run["id"], out[run["id"]], flush=True)
dest.write_text(json.dumps(out, indent=1) + "\n")
