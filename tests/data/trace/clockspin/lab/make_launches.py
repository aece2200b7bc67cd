"""Write ../launches.json: the clock-pace lab (issue 30). One warp's delay and timing loops
(kernels/clockpace.cu) and the two-warp kernels of clockspin.cu (``cs_overlap``: a worker's
loop of shared read-modify-writes to its own deadline while the other warp waits;
``cs_overlap_timed``: a worker timing n shared loads), each run on the GPU and its outputs
dumped, to hold the trace's clock model (2 cycles a warp instruction) against the GPU's pace.
Usage: python3 make_launches.py (from anywhere)."""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
launches = []


def launch(lid, cubin, kernel, threads, args):
    launches.append(
        {
            "id": lid,
            "cubin": cubin,
            "kernel": kernel,
            "block": [threads, 1, 1],
            "grid": [1, 1, 1],
            "cluster": [1, 1, 1],
            "dynamic_smem": 0,
            "args": args,
            "dumps": [0],
        }
    )


PACE = "clockpace.sm_90.cubin"
for budget in (10_000, 100_000, 1_000_000):
    launch(f"count_{budget}", PACE, "cp_count", 32, [{"zeros": 128}, {"u64": budget}])
for n in (16, 256, 4096):
    launch(f"lds_{n}", PACE, "cp_lds_chain", 32, [{"zeros": 256}, {"int": n}])
    launch(f"alu_{n}", PACE, "cp_alu_chain", 32, [{"zeros": 512}, {"int": n}, {"int": 7}])
SPIN = "clockspin.sm_90.cubin"
for wait in (0, 100_000):
    for budget in (10_000, 100_000):
        args = [{"zeros": 128}, {"int": 0}, {"int": 1}, {"u64": wait}, {"u64": budget}]
        launch(f"overlap_w{wait}_b{budget}", SPIN, "cs_overlap", 64, args)
    for n in (64, 1024):
        args = [{"zeros": 256}, {"int": 0}, {"int": 1}, {"u64": wait}, {"int": n}]
        launch(f"timed_w{wait}_n{n}", SPIN, "cs_overlap_timed", 64, args)
(HERE / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")
