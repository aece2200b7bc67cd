"""lab/run.sh's Nsight Compute exports -> ../measured/ws_tile.json: per run, the per-op counters
and each shared-memory instruction's source counters (its offset in the kernel, executions,
wavefronts, ideal). Usage: python3 parse.py OUTDIR"""

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
from one_run import one_run  # noqa: E402

SHARED = re.compile(r"^(@!?U?P\d\s+)?(LDS|STS|LDSM|STSM)\b")
src = Path(sys.argv[1])
runs = [
    one_run(src / f"ncu_ws_tile_{r}.csv", src / f"source_ws_tile_{r}.csv", SHARED) for r in (1, 2)
]
gpu = " / ".join(x.strip() for x in (src / "gpu.txt").read_text().splitlines() if x.strip())
out = Path(__file__).resolve().parent.parent / "measured" / "ws_tile.json"
out.write_text(json.dumps({"gpu": gpu, "launch": "grid 1, K=256", "runs": runs}, indent=0))
print(out, len(runs[0]["instructions"]), "instructions")
