"""A grid of many heavy classes, traced by class against every block run plainly, in one run.

The project's causal attention (tests/data/triton/sweep16's ``attn_bp``: Triton 3.6 block
pointers, BM = BN = D = 64, 4 warps) over 32 x 16 blocks at n_ctx 2048: each row of query
blocks is a class of 16 (over the heads), block x walking x + 1 key blocks, so the 32
classes' blocks run watched (:mod:`shmem_cli.trace.emulator.alike`) and the other 480 are
counted as them. The baseline is the same launch with every block run in plain batches
(bench/every_block.py). The ratio says what watching costs, per thread-instruction, against
what it saves; the totals and thread-instructions of the two must be equal.

The small rounds (the first, of one block, and the second, of four) are timed apart in one
more run (bench/rounds.py: each round's CPU time, and its blocks run again plainly after
it): per thread-instruction against the plain batches' (the baseline's CPU time over its
thread-instructions), each held to what alike/spend.py's model says a round of its blocks
costs.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from measure import ROOT, by_class_and_every_block, run_process, same_totals

CACHE = ROOT / "tests" / "data" / "triton" / "sweep16" / "cache"
ROUNDS = ROOT / "bench" / "rounds.py"
ARGS = ["--kernel", "attn_bp", "--grid", "32,16", "-a", "scale=0.125", "-a", "n_ctx=2048"]
ARGS += ["-a", "stride_row=64", "--no-tables"]
#: repeats at most (the two take about 10 s and 25 s on the development machine)
REPEATS = 2


def heavy_watch(report: Any, shmem: list[str], repeats: int) -> None:
    """The causal attention's 512 blocks by class against every block run plainly."""
    from shmem_cli.cuda import toolchain

    figure = "trace: heavy watch, causal attention 32 x 16 by class / every block plainly"
    if toolchain.which("nvdisasm") is None:
        report.row(figure, "not available", "<= 1x", None, None)
        return
    print("watch: a grid of 32 heavy classes against every block run plainly", flush=True)
    t, doc = by_class_and_every_block([str(CACHE), *ARGS], shmem, min(repeats, REPEATS))
    by_class, every = doc["by_class"], doc["every_block"]
    same = same_totals(doc)
    cov = by_class["grid_coverage"]
    ratio = t["by_class"].best / t["every_block"].best
    report.row(
        figure,
        f"{t['by_class'].best:.2f} s / {t['every_block'].best:.2f} s",
        "<= 1x",
        ratio,
        ratio <= 1,
        ("exact" if same else "TOTALS DIFFER")
        + f", {cov['blocks_run']} of {cov['blocks']} blocks run, "
        + f"{by_class['instructions_executed']:,} thread-instructions",
    )
    report.details["watch"] = {
        k: {"grid_coverage": doc[k]["grid_coverage"], **t[k].summary()} for k in doc
    }
    plain = min(t["every_block"].cpus) / max(1, every["instructions_executed"])
    small_rounds(report, plain)


def small_rounds(report: Any, plain: float) -> None:
    """The causal attention's first two rounds (1 and 4 blocks), per thread-instruction
    against a plain batch's CPU time (``plain`` seconds a thread-instruction)."""
    from shmem_cli.trace.emulator.alike.spend import WATCH_COST, WATCH_FIXED

    figure = "trace: small watched rounds (1 and 4 blocks) / a plain batch, per thread-instr."
    print("watch: the small rounds timed apart", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rounds.json"
        argv = [sys.executable, str(ROUNDS), str(out), "trace", str(CACHE), *ARGS]
        run_process([*argv, "-f", "json", "-o", str(Path(tmp) / "trace.json")])
        rounds = json.loads(out.read_text())[:2]
    cost = [r["watched_s"] / max(1, r["executed"]) / plain for r in rounds]
    alone = [r["watched_s"] / max(r["plain_s"], 1e-9) for r in rounds]
    model = [WATCH_COST * (r["blocks"] + WATCH_FIXED) / r["blocks"] for r in rounds]
    worst = max(c / m for c, m in zip(cost, model, strict=True))
    report.row(
        figure,
        ", ".join(f"{c:.0f}x" for c in cost),
        "<= " + ", ".join(f"{m:.0f}x" for m in model) + " (spend.py)",
        worst,
        worst <= 1,
        "rounds of "
        + ", ".join(str(r["blocks"]) for r in rounds)
        + "; each against its blocks run plainly: "
        + ", ".join(f"{a:.1f}x" for a in alone),
    )
    report.details["small_rounds"] = {"plain_s_per_thread_instruction": plain, "rounds": rounds}
