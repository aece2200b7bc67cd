"""lab/run.sh's Nsight Compute exports -> ../measured/: measured.json (per launch, causal 1 and
0, per run: the per-op counters and each shared-memory instruction's source counters: its
offset in the kernel, SASS, executions, wavefronts, ideal) and each launch's parameter block
(params_c1.bin, params_c0.bin: the bytes the host passed, its pointers the run's).
Usage: python3 parse.py OUTDIR"""

import json
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
from one_run import one_run  # noqa: E402

SHARED = re.compile(r"^(@!?U?P\w+\s+)?(LDS|STS|LDSM|STSM|LDGSTS)\b")


def run(src: Path, causal: int, r: int) -> dict[str, object]:
    return one_run(src / f"raw_c{causal}_{r}.csv", src / f"src_c{causal}_{r}.csv", SHARED)


src = Path(sys.argv[1])
out = Path(__file__).resolve().parent.parent / "measured"
out.mkdir(exist_ok=True)
launches = {}
for causal in (1, 0):
    launches[f"causal{causal}"] = [run(src, causal, r) for r in (1, 2)]
    shutil.copyfile(src / f"params_c{causal}_1.bin", out / f"params_c{causal}.bin")
gpu = " / ".join(x.strip() for x in (src / "gpu.txt").read_text().splitlines() if x.strip())
doc = {"gpu": gpu, "launch": "grid 4,1,2, block 128, 256 keys", "launches": launches}
(out / "measured.json").write_text(json.dumps(doc, indent=0) + "\n")
print(out, {k: len(v[0]["instructions"]) for k, v in launches.items()}, "instructions")
