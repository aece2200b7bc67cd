"""The trace's op_misc for every launch of ../launches.json (shmem trace, JSON), written to
predicted.json beside this script BEFORE the GPU run: what shmem predicts, not what was
measured (measured.json is that). Per launch ``misc``: the op_misc wavefronts by the rule of
the code given first; with a second command, ``misc_quiet`` beside it: those of a second
checkout (a rule under test, e.g. one where barriers back to back count once). Each launch's
arguments are those the Hopper lab's harness gives the GPU (tests/hopper_lab.py's trace_args).
Usage (from the repository root):
  python3 tests/data/trace/barrules/lab/predict.py SHMEM [SHMEM_UNDER_TEST]
(each a command, split at spaces, e.g. "env PYTHONPATH=/tmp/x python3 -m shmem_cli.cli")"""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE.parents[3]))  # the repository root
from tests import hopper_lab as lab  # noqa: E402


def misc(sh, lid):
    cmd = [*sh.split(), "trace", *lab.trace_args(lid, HERE), "-f", "json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{lid}: rc {r.returncode}\n{r.stdout[-400:]}{r.stderr[-400:]}")
    return json.loads(r.stdout)["files"][0]["kernels"][0]["totals"]["misc"]["wavefronts"]


out = {}
for L in lab.manifest(HERE)["launches"]:
    out[L["id"]] = {"misc": misc(sys.argv[1], L["id"])}
    if len(sys.argv) > 2:
        out[L["id"]]["misc_quiet"] = misc(sys.argv[2], L["id"])
    print(L["id"], out[L["id"]], flush=True)
doc = {
    "what": "shmem trace's PREDICTION (the code's own output, not ground truth), made before "
    "the lab ran on a GPU; measured.json holds what Nsight Compute counted. misc: the rule of "
    "shmem_cli/hardware/misc.py as it stands (a CTA barrier completion 1); misc_quiet: the "
    "rule under test (a completion 1 only where a warp ran something but arithmetic, branches "
    "and barriers since the previous one; docs/hardware-model.md 9e), traced by a scratch "
    "checkout that carries it",
    "launches": out,
}
(Path(__file__).parent / "predicted.json").write_text(json.dumps(doc, indent=1) + "\n")
