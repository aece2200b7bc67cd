"""What the emulator says today for each launch of launches.txt: traces the shipped cubin
with ``shmem trace --format json`` (64 threads, ``in`` from inputs/in.bin, ``n`` the launch's)
and writes ../trace_predictions.json: per launch, each shared-memory instruction's offset,
SASS, warp executions (requests), wavefronts, and the lanes of its worst request.

Run from the repository root: ``python tests/data/trace/converge/lab/predict.py``.
"""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent


def launches():
    out = []
    for line in (HERE / "launches.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, kernel, n = line.split()
            out.append({"name": name, "kernel": kernel, "n": int(n)})
    return out


def trace(launch):
    cmd = [
        sys.executable,
        "-c",
        "from shmem_cli.cli import main; main()",
        "trace",
        str(DATA / "converge.sm_90a.cubin"),
        "--kernel",
        launch["kernel"],
        "--block",
        "64",
        "--arg",
        f"in=@{DATA / 'inputs' / 'in.bin'}",
        "--arg",
        f"n={launch['n']}",
        "--format",
        "json",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip()}
    k = json.loads(done.stdout)["files"][0]["kernels"][0]
    rows = []
    for a in k["accesses"]:
        lanes = sorted(
            {
                lane
                for w in a["worst_request"]["wavefront_banks"]
                for b in w["banks"].values()
                for lane in b["lanes"]
            }
        )
        rows.append(
            {
                "pc": a["pc"],
                "sass": a["sass"],
                "requests": a["requests"],
                "wavefronts": a["wavefronts"],
                "worst_request_lanes": len(lanes),
            }
        )
    return {"instructions_executed": k["instructions_executed"], "accesses": rows}


def main():
    result = {}
    for launch in launches():
        result[launch["name"]] = {"kernel": launch["kernel"], "n": launch["n"], **trace(launch)}
        print(launch["name"], "error" if "error" in result[launch["name"]] else "ok")
    (DATA / "trace_predictions.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
