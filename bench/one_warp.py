"""One block of one warp stepping alone: the emulator's cost per instruction where nothing
batches it (issue 30's small rounds; llm.c's attention_forward_kernel2, blocks of 32 threads
and about 20 million instructions a thread, is that shape).

The kernel is the project's own naive flash attention (tests/data/trace/onewarp: one warp a
block, nested loops of shared loads and FFMAs, about 4,850 instructions a thread per tile of
32 keys). One block is traced at two sizes, interleaved, and the figure is the extra
thread-instructions of the larger over its extra CPU time: what start-up, nvdisasm and the
report cost falls out of the difference. ``python bench/one_warp.py --against TREE`` times
another checkout the same way in the same run (before/after).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from measure import ROOT, time_processes

CUBIN = ROOT / "tests" / "data" / "trace" / "onewarp" / "onewarp.sm_90.cubin"
SIZES = (64, 512)  # keys: 2 and 16 tiles (about 0.3 and 2.5 million thread-instructions)
#: thread-instructions a second: llm.c's one block (about 640 million thread-instructions)
#: took more than the front-door audit's 590 s (under 1.1 M/s); a block run alone has 40 s
#: by default (budget.ALONE_SECONDS: 16 M/s). The target is a step between the two (1.5 M/s
#: before the whole steps, emulator/whole/: 2.5 to 3 M/s measured on a loaded machine; 2 M/s
#: before the chains of float steps, whole/chains.py: 3.2 to 4.3 M/s at load 2.5 to 3.5)
TARGET = 2.5e6
REPEATS = 3


def _command(tree: Path, n: int, out: Path) -> list[str]:
    code = f"import sys; sys.path.insert(0, {str(tree)!r}); from shmem_cli.cli import main; main()"
    args = ["trace", str(CUBIN), "-b", "32", "-g", "1", "-a", f"n={n}", "-a", "scale=0.17"]
    return [sys.executable, "-c", code, *args, "-f", "json", "-o", str(out)]


def rates(trees: dict[str, Path], repeats: int) -> dict[str, dict[str, Any]]:
    """Per tree: thread-instructions a second of CPU between the two sizes, and the report
    of the larger (its JSON, to check that the trees agree)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = {(k, n): Path(tmp) / f"{k}_{n}.json" for k in trees for n in SIZES}
        commands = {f"{k}_{n}": _command(trees[k], n, out[k, n]) for k, n in out}
        t = time_processes(commands, repeats)
        result: dict[str, dict[str, Any]] = {}
        for k in trees:
            docs = [json.loads(out[k, n].read_text()) for n in SIZES]
            ran = [d["files"][0]["kernels"][0]["instructions_executed"] for d in docs]
            cpu = [min(t[f"{k}_{n}"].cpus) for n in SIZES]
            rate = (ran[1] - ran[0]) / max(cpu[1] - cpu[0], 1e-9)
            result[k] = {"rate": rate, "thread_instructions": ran, "cpu_s": cpu, "doc": docs[1]}
    return result


def one_warp(report: Any, repeats: int) -> None:
    """The figure of bench/run.py: thread-instructions a second of one one-warp block."""
    from shmem_cli.cuda import toolchain

    figure = "trace: one one-warp block alone, thread-instructions/s (CPU)"
    target = f">= {TARGET / 1e6:g} M/s"
    if toolchain.which("nvdisasm") is None:
        report.row(figure, "not available", target, None, None)
        return
    print("trace: one block of one warp (tests/data/trace/onewarp)", flush=True)
    r = rates({"this": ROOT}, min(repeats, REPEATS))["this"]
    report.row(
        figure,
        f"{r['rate'] / 1e6:.2f} M/s",
        target,
        TARGET / r["rate"],
        r["rate"] >= TARGET,
        f"(n = {SIZES[0]} and {SIZES[1]}: {r['thread_instructions'][0]:,} and "
        f"{r['thread_instructions'][1]:,} thread-instructions, "
        f"{r['cpu_s'][0]:.2f} and {r['cpu_s'][1]:.2f} s of CPU)",
    )
    report.details["one_warp"] = {k: v for k, v in r.items() if k != "doc"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--against", type=Path, help="another checkout, timed alike")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args()
    trees = {"this": ROOT, **({"other": args.against.resolve()} if args.against else {})}
    r = rates(trees, args.repeats)
    for k, v in r.items():
        print(f"{k} ({trees[k]}): {v['rate'] / 1e6:.3f} M thread-instructions/s of CPU", end="")
        print(f" ({v['thread_instructions']}, CPU {[round(c, 3) for c in v['cpu_s']]} s)")
    if "other" in r:
        same = r["this"]["doc"] == r["other"]["doc"]
        ratio = r["this"]["rate"] / r["other"]["rate"]
        print(f"this / other: {ratio:.2f}x; reports {'the same' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
