"""The worst grid known for the values evaluated window by window, traced by class against
every block run plainly, in one run.

tests/data/trace/ballots's ``bl_tiles`` at k = 7 with 8 tiles over 4,096 blocks: its first
block's class holds 586 blocks, and the next round's decisions read vectors kept as steps
(:mod:`shmem_cli.trace.emulator.alike.vectors`) that no budget short of some 2 billion
values evaluates, so the rounds end there and the 3,510 blocks left run plainly. What the
evaluations may spend first is alike/spend.py's rule (:func:`...spend.evaluations`: at most
a quarter of running every block plainly, besides what the classes found save); before it
they spent half of it in values, each some 3 to 6 times a thread-instruction (about 3 times
the plain run). The totals and thread-instructions of the two must be equal.
"""

from __future__ import annotations

from typing import Any

from measure import ROOT, by_class_and_every_block, same_totals

CUBIN = ROOT / "tests" / "data" / "trace" / "ballots" / "ballots.sm_90.cubin"
ARGS = ["-k", "bl_tiles", "-b", "256", "-g", "4096", "-a", "1=7", "-a", "2=8", "--no-tables"]
#: repeats at most (the two take about 11 s and 6 s of CPU on the development machine)
REPEATS = 2
#: by class against every block run plainly, at most: the evaluations' quarter (0.26x of CPU
#: at load 3.5, 2026-12-06) and the watched rounds (their vectors made whole over the 4,096
#: blocks, not charged: some 0.6x); 1.82x to 1.9x then, 2.9x before the values were charged
TARGET = 2.25


def deferred_evaluation(report: Any, shmem: list[str], repeats: int) -> None:
    """bl_tiles (k = 7, 8 tiles, 4,096 blocks) by class against every block run plainly."""
    from shmem_cli.cuda import toolchain

    figure = "trace: evaluations cut short, bl_tiles k=7 x 8 tiles by class / every block"
    if toolchain.which("nvdisasm") is None:
        report.row(figure, "not available", f"<= {TARGET:g}x", None, None)
        return
    print("evaluate: bl_tiles over 4,096 blocks against every block run plainly", flush=True)
    t, doc = by_class_and_every_block([str(CUBIN), *ARGS], shmem, min(repeats, REPEATS))
    by_class, same = doc["by_class"], same_totals(doc)
    cov = by_class["grid_coverage"]
    ratio = t["by_class"].best / t["every_block"].best
    report.row(
        figure,
        f"{t['by_class'].best:.2f} s / {t['every_block'].best:.2f} s",
        f"<= {TARGET:g}x",
        ratio,
        ratio <= TARGET,
        ("exact" if same else "TOTALS DIFFER")
        + f", {cov['blocks_run']} of {cov['blocks']} blocks run",
    )
    report.details["evaluate"] = {
        k: {"grid_coverage": doc[k]["grid_coverage"], **t[k].summary()} for k in doc
    }
